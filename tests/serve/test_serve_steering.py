"""POST /translate steers as the runtime does (issue 43, part 3): target_prefix, num_hypotheses, return_alternatives
and alignment give the runtime's own answers, bad steering gets the runtime's sentence as a 422, and steering
stays inside the cost limits. The in-process API over the tiny exported models (serve_fixtures)."""
from __future__ import annotations

import pytest
from export_fixtures import GERMAN
from serve_fixtures import post, running_api, tiny_models_root

from runtime import OnnxTranslator
from serve import costs
from serve.settings import ServeSettings

pytestmark = pytest.mark.exports


@pytest.fixture(scope="module")
def root():
    return tiny_models_root()


@pytest.fixture(scope="module")
def url(root):
    with running_api(ServeSettings(models_dir=str(root), provider="cpu", threads=1, precisions=("fp32",))) as found:
        yield found


@pytest.fixture(scope="module")
def translator(root) -> OnnxTranslator:
    return OnnxTranslator(root / "translate", provider="cpu", precision="fp32", threads=1)


def ask(url: str, **kw) -> tuple[int, dict]:
    return post(f"{url}/translate", {"text": GERMAN[0], "method": "greedy", "precision": "fp32", **kw})


def runtime_n_best(translator: OnnxTranslator, **kw) -> list:
    [found] = translator.translate_n_best([GERMAN[0]], src_lang="de", tgt_lang="en", **{"method": "greedy", **kw})
    return found


def test_a_target_prefix_is_forced_and_the_rest_is_the_runtimes(url, translator):
    plain = ask(url)[1]
    prefix = translator.tokenizer.decode(plain["token_ids"][1:3])  # a start the model would not choose itself
    status, found = ask(url, target_prefix=prefix)
    [want] = runtime_n_best(translator, target_prefix=[prefix])
    assert status == 200 and found["token_ids"] == want.token_ids and found["prefix_len"] == want.prefix_len > 0
    assert found["token_ids"][:found["prefix_len"]] == translator.prefix_ids(prefix)
    assert "hypotheses" not in found


def test_the_n_best_come_back_sorted_and_distinct_as_the_runtimes(url, translator):
    status, found = ask(url, method="beam", beam=4, num_hypotheses=3)
    want = runtime_n_best(translator, method="beam", beam=4, num_hypotheses=3)
    assert status == 200 and [h["token_ids"] for h in found["hypotheses"]] == [w.token_ids for w in want]
    scores = [h["score"] for h in found["hypotheses"]]
    assert scores == sorted(scores, reverse=True) and len({tuple(h["token_ids"]) for h in found["hypotheses"]}) == 3
    assert found["token_ids"] == found["hypotheses"][0]["token_ids"]


@pytest.mark.parametrize("prefix", [None, "the"], ids=["first position", "after a prefix"])
def test_alternatives_are_the_runtimes_each_completed(url, translator, prefix):
    status, found = ask(url, target_prefix=prefix, return_alternatives=True, num_hypotheses=4)
    want = runtime_n_best(translator, target_prefix=[prefix or ""], return_alternatives=True, num_hypotheses=4)
    assert status == 200, found
    assert [h["token_ids"] for h in found["hypotheses"]] == [w.token_ids for w in want]
    at = want[0].prefix_len
    assert [h["token_probs"][at] for h in found["hypotheses"]] == pytest.approx([w.token_probs[at] for w in want])


def test_alignment_has_one_link_list_per_target_word(url):
    status, found = ask(url, alignment=True)
    a = found["alignment"]
    assert status == 200 and len(a["links"]) == len(a["target_words"]) == len(a["weights"])
    assert all(0 <= i < len(a["source_words"]) for links in a["links"] for i in links)


@pytest.mark.parametrize("kw, says", [
    ({"method": "beam", "beam": 2, "num_hypotheses": 3}, "num_hypotheses must be between 1 and the beam (2), got 3"),
    ({"num_hypotheses": 2}, "greedy search finds one translation: num_hypotheses must be 1"),
    ({"target_prefix": "the " * 60, "max_len": 20}, "the target prefix of this text has"),
    ({"target_prefix": "the \ud800"}, "invalid request: target_prefix should be a valid string"),
    ({"method": "beam", "beam": 16, "return_alternatives": True, "num_hypotheses": 16},
     "beam 16 × 16 alternatives × "),
], ids=["n over the beam", "greedy n-best", "prefix over the room", "prefix surrogate", "alternatives over the cost"])
def test_bad_steering_is_a_422_with_the_runtimes_sentence(url, kw, says):
    status, found = ask(url, **kw)
    assert status == 422 and found["detail"].startswith(says), found


def test_steered_rows_count_in_the_cost_limits():
    beam = {"method": "beam", "beam": 4, "num_hypotheses": 4, "return_alternatives": True}
    assert costs.rows_per_text(beam) == 16 and costs.rows_per_text(beam | {"return_alternatives": False}) == 4
    assert costs.rows_per_text({"method": "greedy", "num_hypotheses": 5, "return_alternatives": True}) == 5
    assert costs.rows_per_text({"method": "sample", "num_hypotheses": 3}) == 3
    assert costs.rows_per_text({"method": "greedy", "num_hypotheses": 1}) == 1


def test_a_prefix_the_schema_let_through_is_still_checked_by_the_worker(root):
    from serve.schemas import TranslateRequest
    from serve.workers import TranslationWorker

    worker = TranslationWorker.load(root, "cpu", ("fp32",), 1)
    request = TranslateRequest(text=GERMAN[0]).model_dump() | {"target_prefix": "the \ud800", "method": "greedy"}
    [found] = worker.run([request])
    assert found["status"] == 422 and found["error"].startswith("target_prefix: text is not valid Unicode")
