"""The Translate page's shared link on the tiny exported models: a malformed link's notice names the values the page
then holds (its sliders, and the link it writes back), and a long text's link is cut, and said, while the text box
keeps all of it. Links without a text: opening them translates nothing."""
from __future__ import annotations

import re
from urllib.parse import quote, urlencode

import pytest
from app_fixtures import clean, open_app, values
from export_fixtures import GERMAN

from playground import links

pytestmark = pytest.mark.exports

# A note's sentence: "`n=999` is outside this model's n-best sizes (1 to the beam) 1–4: 4 is used instead."
SAID = re.compile(r"`(\w+)=[^`]*` [^`]*?: ([^`]*?) is used instead\.")


def url(at) -> dict[str, str]:
    return {k: v[0] if isinstance(v, list) else v for k, v in dict(at.query_params).items()}


def held(at) -> dict[str, str]:
    """The beam and n-best size the page's widgets hold: the n-best slider's, or 1 where the page shows none."""
    n_slider = [s for s in at.slider if s.key == "translate_n_best"]
    return {"beam": str(at.slider(key="translate_beam").value), "n": str(n_slider[0].value) if n_slider else "1"}


@pytest.mark.parametrize("link", [
    {"beam": "abc", "n": "999"},  # issue 49.11: "n=999 … 16 is used instead"; the slider and the link held 4
    {"n": "999"},  # no beam: the page's own first beam bounds n
    {"beam": "0", "n": "5"},  # a beam of 1: no n-best list
    {"method": "greedy", "n": "3"},  # greedy: no n-best list
    {"beam": "99", "n": "abc"},
])
def test_a_malformed_links_notice_names_what_the_page_then_holds(model_root, monkeypatch, link):
    at = open_app(monkeypatch, model_root, "translate", link)
    clean(at)
    [notice] = [w for w in values(at.warning) if w.startswith("This link was corrected.")]
    said = dict(SAID.findall(notice))
    assert "n" in said, notice
    page, written = held(at), url(at)
    in_link = {"beam": written.get("beam"), "n": written.get("n", "1")}  # the page writes n only above 1
    for name, value in said.items():
        assert value == page[name], (name, notice, page)
        if written["method"] == "beam" or name == "n":  # greedy's link holds no beam (nor n: its n-best is 1)
            assert value == in_link[name], (name, notice, written)


def test_a_long_text_is_cut_in_the_link_and_said_while_the_box_keeps_it(model_root, monkeypatch):
    """Issue 49.14: 30,000 characters of text made a 35,427-character URL."""
    at = open_app(monkeypatch, model_root, "translate")
    clean(at)
    box = next(t for t in at.text_area if (t.key or "").startswith("translate_text_"))
    text = "\n".join(GERMAN * 400)[:30_000]
    at.text_area(key=box.key).input(text).run()
    clean(at)
    written = url(at)
    carried = written["text"]
    # The link's bound: its text is at most MAX_LINK_TEXT_CHARS, and German text percent-encodes to under 2,000
    # characters of URL (each character at most 12 characters for 4-byte UTF-8; umlauts 6; most 1 or 3).
    assert len(carried) <= links.MAX_LINK_TEXT_CHARS and text.startswith(carried)
    assert len(urlencode(written, quote_via=quote)) < 2_000, len(urlencode(written, quote_via=quote))
    said = [i for i in values(at.info) if "link was cut" in i]
    assert said and f"cut to {len(carried):,} characters" in said[0] and "keeps all 30,000" in said[0], said
    assert at.text_area(key=box.key).value == text  # the page's text is intact
    at.text_area(key=box.key).input(GERMAN[0]).run()  # a short text: the whole of it in the link, nothing said
    clean(at)
    assert url(at)["text"] == GERMAN[0] and not [i for i in values(at.info) if "link was cut" in i]
