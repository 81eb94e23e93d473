"""Click -> result in a real browser (Debian's chromium through playwright) on `streamlit run app.py` with the
models the app serves (models/ or TX_MODELS_DIR): Translate (greedy, int8, one sentence; two sentences alternate so
that a stale output never passes for a new one), click -> output shown, and the page's own "· N ms" headline as the
model's share; Walkthrough, Next -> the next step's title shown; the Decoding explorer's Step slider moved one
step, and its Temperature slider one notch (a whole-page rerun; no goal of the issue's, reported beside the step's)
-> its chart's title shown. Each also to "run finished" (Streamlit's running indicator gone) and to "drawn"
(the frame painted after the page's last change: what the user waits for, plotly's drawing included; the goals are
judged on it). Beside each, the Streamlit server's CPU time per interaction (/proc: the rerun, its messages, and
whatever it does after the run), which the browser's own drawing on the same cores competes with. A benchmark, not
a test: `python -m bench clicks`; the load average is printed beside the numbers.
"""
from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from serve.processes import process_cpu_s

from . import bench_parser

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"  # Debian's chromium (apt), never a downloaded one
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# No script run requested or in progress (the app's own state), and no running indicator.
IDLE = ("() => document.querySelector('[data-testid=\"stApp\"]')?.dataset.testScriptState === 'notRunning'"
        " && !document.querySelector('[data-testid=\"stStatusWidget\"]')")
OUTPUT = '[data-testid="stCode"] code'  # Translate's output box
SENTENCES = ["Das Wetter ist heute schön.", "Wo ist die nächste Apotheke?"]
WALK_TEXT = "Die Kinder spielen im Garten."

# What "drawn" means: a click's result is drawn once the page has stopped changing, that is at the frame painted after
# the last DOM change (two requestAnimationFrames) that is followed by QUIET_MS with no change and no script run.
# Plotly draws its figures after the run finished (it builds their SVG on the next frames), so "run finished" alone
# undercounts what the user waits for; "drawn" is the span a person with a stopwatch measures, click to result.
QUIET_MS = 400
# Shared by both timers below: `watch(start, isShown, resolve)` resolves with [ms until shown, ms until the run
# finished, ms until drawn], measured from `start()`'s time, or [null, what it shows] after 20 s.
WATCH = """const watch = (startedAt, isShown, resolve, fallback) => {
  let shown = null, finished = null, lastChange = null, painted = null, quiet = null;
  const running = () => !!document.querySelector('[data-testid="stStatusWidget"]')
    || document.querySelector('[data-testid="stApp"]')?.dataset.testScriptState !== 'notRunning';
  const finish = () => { observer.disconnect(); resolve([shown, finished, painted - startedAt()]); };
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
  setTimeout(() => { observer.disconnect(); resolve([null, fallback()]); }, 20000);
  return check;
};""".replace("QUIET_MS", str(QUIET_MS))

# Clicks the button named `label` from inside the page (no playwright round trip in the clock) and resolves with
# WATCH's three times (shown: `selector`'s text is `want`, or, want null, differs from before).
CLICK_AND_TIME = """async ([label, selector, want]) => {
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
}""".replace("WATCH", WATCH)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(log_path: Path | None = None, env: dict[str, str] | None = None):
    """`streamlit run app.py` on a free 127.0.0.1 port, up once /_stcore/health says ok; yields (url, the server's
    pid). Its output goes to `log_path` (a temp file by default); `env` replaces the environment (the browser
    tests' fixture starts its servers through this too, on their own models folder)."""
    port = free_port()
    log_path = log_path or Path(f"/tmp/bench-clicks-{os.getpid()}.log")
    log = open(log_path, "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not come up: see {log_path}")
            time.sleep(0.2)
        yield url, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


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


def report(what: str, times: list[tuple[float, float, float, float]], goal_ms: float | None) -> None:
    """One line per interaction: p50 / p90 of each span and of the server's CPU, and the goal (if it has one)
    judged on click -> drawn."""
    shown, finished, drawn, server = ([t[i] for t in times] for i in range(4))
    goal = ""
    if goal_ms is not None:
        goal = f" (goal: drawn p50 <= {goal_ms:.0f} ms: {'met' if statistics.median(drawn) <= goal_ms else 'MISSED'})"
    print(f"{what}: -> result shown {p50_p90(shown)}; -> run finished {p50_p90(finished)}; -> drawn "
          f"{p50_p90(drawn)}{goal}; server CPU {p50_p90(server)}")


def p50_p90(times: list[float]) -> str:
    p90 = statistics.quantiles(times, n=10)[-1] if len(times) > 1 else times[0]
    return f"p50 {statistics.median(times):.0f} ms, p90 {p90:.0f} ms"


def translate_clicks(page, url: str, pid: int, clicks: int) -> tuple[list[tuple[float, ...]], list[float]]:
    """(click -> shown, -> run finished, -> drawn, the server's CPU ms) and the model's own ms (the headline), per
    timed click."""
    page.goto(f"{url}/Translate?method=greedy")
    page.locator('[data-testid="stSidebar"] label').filter(has_text="int8").click()
    settle(page)
    box = page.locator('[data-testid="stTextArea"] textarea')
    times, model = [], []
    outputs: dict[int, str] = {}
    for attempt in range(2 + 2 + clicks):  # the first two learn each sentence's output, two more warm up
        which = attempt % 2
        box.fill(SENTENCES[which])
        box.press("Control+Enter")  # commit the text (its own rerun) before the clock starts
        settle(page)
        if which not in outputs:
            page.get_by_role("button", name="Translate").click()
            page.wait_for_function(f"(before) => document.querySelector('{OUTPUT}')?.innerText.trim() !== before",
                                   arg=outputs.get(1 - which))
            settle(page)
            outputs[which] = page.locator(OUTPUT).inner_text().strip()
            continue
        before = cpu_ms(pid)
        timed = (*timed_click(page, "Translate", OUTPUT, outputs[which]), cpu_ms(pid) - before)
        heading = page.locator("h3").filter(has_text=" ms").first.inner_text()
        if "int8" not in heading or "greedy" not in heading:
            raise RuntimeError(f"the result was not made greedy at int8: its headline says {heading!r}")
        if attempt >= 4:
            times.append(timed)
            model.append(float(heading.rsplit("·", 1)[1].split()[0]))
    if outputs[0] == outputs[1]:
        raise RuntimeError(f"both sentences translate to {outputs[0]!r}: a stale output could pass for new")
    return times, model


def walkthrough_clicks(page, url: str, pid: int, clicks: int) -> list[tuple[float, ...]]:
    """Next -> the next step's title shown, -> run finished, -> drawn; at the last step the link opens the first
    again."""
    first = f"{url}/Walkthrough?model=translate:de-en&text={urllib.parse.quote_plus(WALK_TEXT)}"
    times = []
    page.goto(first)
    settle(page)
    for attempt in range(1 + clicks):  # one warm-up click
        if page.get_by_role("button", name="Next ▶").is_disabled():
            page.goto(first)
            settle(page)
        before = cpu_ms(pid)
        timed = timed_click(page, "Next ▶", "h3", None)
        settle(page)
        timed = (*timed, cpu_ms(pid) - before)
        if attempt >= 1:
            times.append(timed)
    return times


# Starts the clock at the next keydown in the page (the key press's playwright round trip stays out of it) and sets
# window.__timing to WATCH's three times (shown: `selector`'s text differs from now).
ON_NEXT_KEY = """([selector]) => {
  WATCH
  const text = () => { const e = document.querySelector(selector); return e ? e.textContent.trim() : null; };
  const before = text();
  let start = null;
  window.__timing = null;
  const check = watch(() => start, () => { const now = text(); return now !== null && now !== before; },
                      times => { window.__timing = times; }, text);
  document.addEventListener('keydown', () => { start = performance.now(); check(); }, {capture: true, once: true});
}""".replace("WATCH", WATCH)
BARS_TITLE = ".tx-bars-title"  # the Decoding explorer's bars title (playground/decoding/bars.py TITLE_CLASS)


def decoding_moves(page, url: str, pid: int, moves: int, slider: str = "Step") -> list[tuple[float, ...]]:
    """A Decoding explorer slider moved one notch by the keyboard (right, then left, alternately) -> the next-token
    chart's title shows the new value, -> run finished, -> drawn. "Step" reruns its fragment only; "Temperature"
    (one of the sampling knobs above it) reruns the whole page: the tree, the comparison and the downloads too."""
    page.goto(f"{url}/Decoding_explorer?direction=de-en&text={urllib.parse.quote_plus(WALK_TEXT)}")
    settle(page)
    thumb = page.get_by_role("slider", name=slider)
    times = []
    for move in range(2 + moves):  # two warm-up moves
        page.evaluate(ON_NEXT_KEY, [BARS_TITLE])
        thumb.focus()
        before = cpu_ms(pid)
        page.keyboard.press("ArrowRight" if move % 2 == 0 else "ArrowLeft")
        page.wait_for_function("window.__timing !== null", timeout=20_000)
        timed = page.evaluate("window.__timing")
        if timed[0] is None:
            raise RuntimeError(f"the {slider} slider moved, but the chart's title still shows {timed[1]!r}")
        settle(page)
        if move >= 2:
            times.append((*timed, cpu_ms(pid) - before))
    return times


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("clicks", __doc__)
    parser.add_argument("--clicks", type=int, default=10, help="timed clicks per page (after warm-up clicks)")
    args = parser.parse_args(argv)
    if args.clicks < 1:
        parser.error("--clicks must be at least 1")
    if not Path(CHROMIUM).is_file():
        parser.error(f"{CHROMIUM} is missing: run `make browser` (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with streamlit_server() as (url, pid), sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = chromium.new_context(viewport={"width": 1280, "height": 1400})
        context.set_default_timeout(90_000)
        page = context.new_page()
        loads = [os.getloadavg()[0]]
        translate, model = translate_clicks(page, url, pid, args.clicks)
        loads.append(os.getloadavg()[0])
        walkthrough = walkthrough_clicks(page, url, pid, args.clicks)
        loads.append(os.getloadavg()[0])
        decoding = decoding_moves(page, url, pid, args.clicks)
        loads.append(os.getloadavg()[0])
        temperature = decoding_moves(page, url, pid, args.clicks, "Temperature")
        loads.append(os.getloadavg()[0])
        chromium.close()
    print(f"load average (1 min) {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs; {args.clicks} timed "
          f"clicks each, after warm-up; drawn = the frame after the page's last change ({QUIET_MS} ms quiet after)")
    report("Translate (greedy, int8, one sentence), click", translate, 150)
    drawn = statistics.median(t[2] for t in translate)
    print(f"  the model's own time (the page's headline): p50 {statistics.median(model):.0f} ms, "
          f"{statistics.median(model) / drawn:.0%} of click -> drawn")
    report("Walkthrough, Next", walkthrough, 100)
    report("Decoding explorer, the Step slider moved one step", decoding, 100)
    report("Decoding explorer, the Temperature slider moved one notch (a whole-page rerun)", temperature, None)
    return 0
