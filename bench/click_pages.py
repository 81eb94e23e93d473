"""What `python -m bench clicks` does in the browser, one interaction at a time: the clock (click or key press ->
result shown, -> run finished, -> drawn, measured inside the page) and a driver per interaction, which opens its
page, warms it up and then times one interaction per call, so that two apps can be clicked in turn (clicks.py's
--against).

What "drawn" means: a click's result is drawn once the page has stopped changing, that is at the frame painted after
the last DOM change (two requestAnimationFrames) that is followed by QUIET_MS with no change and no script run.
Plotly draws its figures after the run finished (it builds their SVG on the next frames), so "run finished" alone
undercounts what the user waits for; "drawn" is the span a person with a stopwatch measures, click to result.
"""
from __future__ import annotations

import urllib.parse

from serve.processes import process_cpu_s

# No script run requested or in progress (the app's own state), and no running indicator.
IDLE = ("() => document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState === 'notRunning'"
        " && !document.querySelector('[data-testid=\"stStatusWidget\"]')")
OUTPUT = '[data-testid="stCode"] code'  # Translate's output box
SENTENCES = ["Das Wetter ist heute schön.", "Wo ist die nächste Apotheke?"]
WALK_TEXT = "Die Kinder spielen im Garten."
BARS_TITLE = ".tx-bars-title"  # the Decoding explorer's bars title (playground/decoding/bars.py TITLE_CLASS)
QUIET_MS = 400
GIVE_UP_MS = 20_000  # a timing that shows nothing by then resolves as [null, what the page shows]
# Shared by both timers below: `watch(start, isShown, resolve)` resolves with [ms until shown, ms until the run
# finished, ms until drawn], measured from `start()`'s time, or [null, what it shows] after GIVE_UP_MS.
WATCH = """const watch = (startedAt, isShown, resolve, fallback) => {
  let shown = null, finished = null, lastChange = null, painted = null, quiet = null, giveUp = null;
  const running = () => !!document.querySelector('[data-testid="stStatusWidget"]')
    || document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState !== 'notRunning';
  const finish = () => {
    clearTimeout(giveUp);
    observer.disconnect();
    resolve([shown, finished, painted - startedAt()]);
  };
  const check = () => {
    const at = startedAt();
    if (at === null) return;
    const now = performance.now();
    lastChange = now;
    requestAnimationFrame(() => requestAnimationFrame(() => { if (lastChange === now) painted = performance.now(); }));
    if (shown === null && isShown()) shown = now - at;
    if (shown !== null && finished === null && !running()) finished = now - at;
    if (finished !== null) arm();
  };
  const arm = () => { clearTimeout(quiet); quiet = setTimeout(() => running() ? arm() : finish(), QUIET_MS); };
  const observer = new MutationObserver(check);
  observer.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
  // cleared by finish: left armed, it fired 20 s later into whatever was timed then (window.__timing is shared)
  giveUp = setTimeout(() => { clearTimeout(quiet); observer.disconnect(); resolve([null, fallback()]); }, GIVE_UP_MS);
  return check;
};"""

# Clicks the button named `label` from inside the page (no playwright round trip in the clock) and resolves with
# WATCH's three times (shown: `selector`'s text is `want`, or, want null, differs from before).
CLICK_AND_TIME_SCRIPT = """async ([label, selector, want]) => {
  WATCH
  const button = [...document.querySelectorAll('button')].find(b => b.innerText.trim() === label);
  const text = () => { const e = document.querySelector(selector); return e ? e.innerText.trim() : null; };
  const before = text();
  const isShown = () => { const now = text(); return now !== null && (want === null ? now !== before : now === want); };
  return await new Promise(resolve => {
    const start = performance.now();
    watch(() => start, isShown, resolve, text);
    button.click();
  });
}"""

# Starts the clock at the next keydown in the page (the key press's playwright round trip stays out of it) and sets
# window.__timing to WATCH's three times (shown: `selector`'s text differs from now).
ON_NEXT_KEY_SCRIPT = """([selector]) => {
  WATCH
  const text = () => { const e = document.querySelector(selector); return e ? e.textContent.trim() : null; };
  const before = text();
  let start = null;
  window.__timing = null;
  const check = watch(() => start, () => { const now = text(); return now !== null && now !== before; },
                      times => { window.__timing = times; }, text);
  document.addEventListener('keydown', () => { start = performance.now(); check(); }, {capture: true, once: true});
}"""


def with_watch(script: str, give_up_ms: int = GIVE_UP_MS) -> str:
    """`script` with WATCH inside, its times filled in (a test gives up sooner)."""
    return script.replace("WATCH", WATCH.replace("QUIET_MS", str(QUIET_MS)).replace("GIVE_UP_MS", str(give_up_ms)))


CLICK_AND_TIME, ON_NEXT_KEY = with_watch(CLICK_AND_TIME_SCRIPT), with_watch(ON_NEXT_KEY_SCRIPT)


def settle(page) -> None:
    page.wait_for_timeout(100)  # let a just-sent rerun register before asking whether it finished
    page.wait_for_function(IDLE)


def cpu_ms(pid: int) -> float:
    """The process's CPU time so far (user + system), in ms; NaN where /proc cannot say (not Linux)."""
    try:
        return 1000 * process_cpu_s(pid)
    except OSError:
        return float("nan")


def timed_click(page, label: str, selector: str, want: str | None) -> tuple[float, float, float]:
    """(ms until shown, until the run finished, until drawn): WATCH."""
    shown, *rest = page.evaluate(CLICK_AND_TIME, [label, selector, want])
    if shown is None:
        raise RuntimeError(f"after clicking {label!r}, {selector} still shows {rest[0]!r}")
    return shown, rest[0], rest[1]


class TranslateClick:
    """Translate (greedy, int8, one sentence): click -> output shown; two sentences alternate, so that a stale output
    never passes for a new one. `model_ms` collects the page's own "· N ms" headline, the model's share."""
    title, goal_ms = "Translate (greedy, int8, one sentence), click", 150

    def __init__(self, page, url: str, pid: int):
        self.page, self.pid, self.model_ms = page, pid, []
        page.goto(f"{url}/Translate?method=greedy")
        page.locator('[data-testid="stSidebar"] label').filter(has_text="int8").click()
        settle(page)
        self.box = page.locator('[data-testid="stTextArea"] textarea')
        self.outputs: dict[int, str] = {}
        for which in (0, 1):  # learn each sentence's output
            self._type(which)
            page.get_by_role("button", name="Translate").click()
            page.wait_for_function(f"(before) => document.querySelector('{OUTPUT}')?.innerText.trim() !== before",
                                   arg=self.outputs.get(1 - which))
            settle(page)
            self.outputs[which] = page.locator(OUTPUT).inner_text().strip()
        if self.outputs[0] == self.outputs[1]:
            raise RuntimeError(f"both sentences translate to {self.outputs[0]!r}: a stale output could pass for new")
        self.which = 1
        for _ in range(2):  # warm-up
            self.timed()
        self.model_ms.clear()

    def _type(self, which: int) -> None:
        self.box.fill(SENTENCES[which])
        self.box.press("Control+Enter")  # commit the text (its own rerun) before the clock starts
        settle(self.page)

    def timed(self) -> tuple[float, ...]:
        """(click -> shown, -> run finished, -> drawn, the server's CPU ms) of one click."""
        self.which = 1 - self.which
        self._type(self.which)
        before = cpu_ms(self.pid)
        timed = (*timed_click(self.page, "Translate", OUTPUT, self.outputs[self.which]), cpu_ms(self.pid) - before)
        heading = self.page.locator("h3").filter(has_text=" ms").first.inner_text()
        if "int8" not in heading or "greedy" not in heading:
            raise RuntimeError(f"the result was not made greedy at int8: its headline says {heading!r}")
        self.model_ms.append(float(heading.rsplit("·", 1)[1].split()[0]))
        return timed


class WalkthroughNext:
    """The Walkthrough's Next -> the next step's title shown; at the last step the link opens the first again."""
    title, goal_ms = "Walkthrough, Next", 100

    def __init__(self, page, url: str, pid: int):
        self.page, self.pid = page, pid
        self.first = f"{url}/Walkthrough?model=translate:de-en&text={urllib.parse.quote_plus(WALK_TEXT)}"
        self._open_first()
        self.timed()  # warm-up

    def _open_first(self) -> None:
        self.page.goto(self.first)
        self.page.get_by_role("button", name="Next ▶").wait_for()  # the page's first run has drawn its steps
        settle(self.page)

    def timed(self) -> tuple[float, ...]:
        if self.page.get_by_role("button", name="Next ▶").is_disabled():
            self._open_first()
        before = cpu_ms(self.pid)
        timed = timed_click(self.page, "Next ▶", "h3", None)
        settle(self.page)
        return (*timed, cpu_ms(self.pid) - before)


class DecodingSlider:
    """A Decoding explorer slider moved one notch by the keyboard (right, then left, alternately) -> the next-token
    chart's title shows the new value. "Step" reruns its fragment only; "Temperature" (one of the sampling knobs
    above it) reruns the whole page: the tree, the comparison and the downloads too."""

    def __init__(self, page, url: str, pid: int, slider: str = "Step"):
        self.page, self.pid, self.slider, self.moves = page, pid, slider, 0
        self.title = ("Decoding explorer, the Step slider moved one step" if slider == "Step" else
                      f"Decoding explorer, the {slider} slider moved one notch (a whole-page rerun)")
        self.goal_ms = 100 if slider == "Step" else None
        page.goto(f"{url}/Decoding_explorer?direction=de-en&text={urllib.parse.quote_plus(WALK_TEXT)}")
        self.thumb = page.get_by_role("slider", name=slider)
        settle(page)
        for _ in range(2):  # warm-up
            self.timed()

    def timed(self) -> tuple[float, ...]:
        self.page.evaluate(ON_NEXT_KEY, [BARS_TITLE])
        self.thumb.focus()
        before = cpu_ms(self.pid)
        self.page.keyboard.press("ArrowRight" if self.moves % 2 == 0 else "ArrowLeft")
        self.moves += 1
        # past the page's own give-up, so that its answer ("nothing shown", and what the title says) arrives first
        self.page.wait_for_function("window.__timing !== null", timeout=GIVE_UP_MS + 5_000)
        timed = self.page.evaluate("window.__timing")
        if timed[0] is None:
            raise RuntimeError(f"the {self.slider} slider moved, but the chart's title still shows {timed[1]!r}")
        settle(self.page)
        return (*timed, cpu_ms(self.pid) - before)


def temperature_slider(page, url: str, pid: int) -> DecodingSlider:
    return DecodingSlider(page, url, pid, "Temperature")


INTERACTIONS = (TranslateClick, WalkthroughNext, DecodingSlider, temperature_slider)  # in the order they run
