"""What the browser tests share (tests/browser/): a `streamlit run` server, Debian's chromium, the selectors and
the waits."""
from __future__ import annotations

import contextlib
import functools
import os
import time
from pathlib import Path

import pytest
from app_fixtures import app_models_root

from bench import clicks
from runtime import OnnxTranslator

ROOT = Path(__file__).resolve().parents[1]


ARTIFACTS = ROOT / "test-artifacts"


CHROMIUM = "/usr/bin/chromium"


CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]


VIEWPORT = {"width": 1280, "height": 1400}  # Streamlit scrolls its own container: screenshots stop at the viewport


TIMEOUT_MS = 90_000


SUCCESS = '[data-testid="stAlertContentSuccess"]'


OUTPUT = '[data-testid="stCode"] code'  # Translate shows its output in a plain, copyable code box


INFO = '[data-testid="stAlertContentInfo"]'


CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot'
HEATMAP = ".tx-heat table"  # a markup attention map (playground/heatmap_markup.py)
# Translate's cross-attention map: markup up to 40 tokens a side, plotly's beyond (playground/translate/cross.py);
# the tiny test models' outputs run up to their 64-token limit, so either may be drawn.
CROSS_MAP = f"{HEATMAP}, {CHART}"
# A Walkthrough map: a markup table (token × token, up to 40 a side), an image (token × dimension,
# playground/walkthrough/map_image.py), or plotly's (longer, or "Hover and zoom" on).
WALK_MAP = f"{HEATMAP}, .tx-map img, {CHART}"
WALK_BARS = ".tx-wbars"  # a Walkthrough bar chart (markup: playground/walkthrough/bars_markup.py)


ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'


NAV = '[data-testid="stSidebar"] [data-testid="stPageLink"]'


# Idle: the app's own script state says no run is requested or running (the status widget alone appears only
# after a delay, so on a loaded host a rerun's old widgets were read as its result), and no status widget shows.
IDLE = ("() => document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState === 'notRunning'"
        " && !document.querySelector('[data-testid=\"stStatusWidget\"]')")


SENTENCES = ["Ich trinke keinen Alkohol.", "Kannst du Auto fahren?", "Das Wetter ist heute schön.",
             "Wo ist die nächste Apotheke?", "Die Kinder spielen im Garten.", "Es tut mir leid.",
             "Wie viel kostet diese Jacke?", "Ich verstehe nicht, was du meinst."]


TEN_WORDS = ["Wir treffen uns morgen um acht Uhr am alten Bahnhof.",
             "Sie arbeitet seit zehn Jahren in einem kleinen Krankenhaus."]


@functools.cache
def models_root() -> Path:
    """One models root for the server and for the expected outputs."""
    chosen = os.environ.get("TX_BROWSER_MODELS")
    return Path(chosen).resolve() if chosen else app_models_root()


@functools.cache
def reference_translator() -> OnnxTranslator:
    """The expected outputs' translator, loaded once (real models take seconds to load)."""
    return OnnxTranslator(models_root() / "translate")


def translations(texts: list[str]):
    """The Translations behind the page's output with its default settings (beam 4, length penalty 0.6)."""
    return reference_translator().translate(texts, "de", "en", method="beam", beam=4, length_penalty=0.6)


def translate(texts: list[str]) -> list[str]:
    """What the page shows for these inputs."""
    return [t.text or "(empty output)" for t in translations(texts)]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)


def busy_share(pid: int, seconds: float = 3.0) -> float:
    """Share of one core the process used over the next `seconds`."""
    before = cpu_seconds(pid)
    time.sleep(seconds)
    return (cpu_seconds(pid) - before) / seconds


@contextlib.contextmanager
def streamlit_server(models: Path, log_name: str):
    """`streamlit run app.py` on models under `models`, on a free 127.0.0.1 port, up once /_stcore/health says ok;
    yields (url, the server's pid). Its output goes to test-artifacts/`log_name`. The server is the benchmark's
    (bench/clicks.py), on these models."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install -y chromium)")
    ARTIFACTS.mkdir(exist_ok=True)
    with clicks.streamlit_server(ARTIFACTS / log_name, {**os.environ, "TX_MODELS_DIR": str(models)}) as found:
        yield found


@contextlib.contextmanager
def launched_chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def new_tab(browser):
    """(context, page): a fresh desktop context with the tests' timeout, and a tab in it."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    return context, context.new_page()


def visit(page, server: str, path: str = "") -> None:
    page.goto(f"{server}/{path}")
    page.wait_for_selector(NAV)  # the script has run at least once
    settle(page)


def settle(page) -> None:
    page.wait_for_timeout(100)  # let a just-sent rerun register before asking whether it finished
    page.wait_for_function(IDLE)


def push_sliders(page, labels: tuple[str, ...], key: str) -> None:
    """Each labelled slider to its lowest ("Home") or highest ("End") value, one rerun at a time."""
    for label in labels:
        thumb = page.locator('[data-testid="stSlider"]').filter(has_text=label).get_by_role("slider")
        thumb.focus()
        thumb.press(key)
        settle(page)


def shot(page, name: str) -> Path:
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def shot_from(page, heading: str, name: str) -> Path:
    """A screenshot with the page scrolled so that `heading` (h1-h3 text) is at the top."""
    page.locator("h1, h2, h3").filter(has_text=heading).first.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)  # let plotly draw what scrolled into view
    return shot(page, name)


def no_errors(page) -> None:
    assert page.locator(ERRORS).count() == 0, page.locator(ERRORS).all_inner_texts()
    assert "Traceback" not in page.inner_text("body")


