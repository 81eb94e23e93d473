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

`--against REV` compares two versions of the app side by side in one run: REV (any git revision) is checked out into
a temporary worktree and served beside this checkout, on the same models, and every interaction is timed on both in
turn (A B, then B A), so that a change in the machine's speed during the run hits both alike. On this project's
shared 2-core hosts the same code's Translate click was drawn at 166 ms in one run and 279 ms in another minutes
later: two separate runs cannot tell a 10% change. It prints each side's p50s and the paired ratio (this checkout's
time / REV's, click by click) with its p10-p90.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from . import bench_parser
from .click_pages import INTERACTIONS, QUIET_MS, TranslateClick

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"  # Debian's chromium (apt), never a downloaded one
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(log_path: Path | None = None, env: dict[str, str] | None = None, root: Path = ROOT):
    """`streamlit run app.py` on a free 127.0.0.1 port, up once /_stcore/health says ok; yields (url, the server's
    pid). Its output goes to `log_path` (a temp file by default); `env` replaces the environment (the browser
    tests' fixture starts its servers through this too, on their own models folder); `root`: the checkout it runs."""
    port = free_port()
    log_path = log_path or Path(f"/tmp/bench-clicks-{os.getpid()}.log")
    log = open(log_path, "w")
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"], cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
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


def report(what: str, times: list[tuple[float, ...]], goal_ms: float | None) -> None:
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


def paired(this: list[tuple[float, ...]], other: list[tuple[float, ...]]) -> str:
    """Click by click, this side's drawn time over the other's (the same round): the ratios' p50 and p10-p90."""
    ratios = [a[2] / b[2] for a, b in zip(this, other, strict=True)]
    if len(ratios) < 2:
        return f"{ratios[0]:.2f}"
    deciles = statistics.quantiles(ratios, n=10)
    return f"{statistics.median(ratios):.2f} (p10-p90 {deciles[0]:.2f}-{deciles[-1]:.2f})"


def report_pair(what: str, this: list[tuple[float, ...]], other: list[tuple[float, ...]], revision: str) -> None:
    drawn = [statistics.median(t[2] for t in side) for side in (this, other)]
    server = [statistics.median(t[3] for t in side) for side in (this, other)]
    print(f"{what}: drawn p50 {drawn[0]:.0f} ms here, {drawn[1]:.0f} ms at {revision}; here / {revision}, click by "
          f"click: {paired(this, other)} over {len(this)} rounds; server CPU p50 {server[0]:.0f} / {server[1]:.0f} ms")


Measured = tuple[str, float | None, list[tuple[float, ...]]]  # (interaction's title, its goal in ms, its times)


def interleaved(browsers: list, apps: list[tuple[str, int]], clicks: int) -> tuple[list[list[Measured]], list[float],
                                                                                    list[float]]:
    """Each interaction (INTERACTIONS, a page each) timed `clicks` times on every app (url, pid), the apps in turn
    and their order reversed every round, so a drift in the machine's speed hits all alike. Per app, per
    interaction: its title, goal and (shown, finished, drawn, server CPU ms) per click; also the first app's
    Translate headlines (the model's own ms) and the load average before, between and after. A browser per app:
    with two pages in one browser, now and then a slider's key press never reached the page (measured: 3 of 3 runs
    failed within 12 rounds), as if the other page held the keyboard."""
    pages = [browser.new_context(viewport={"width": 1280, "height": 1400}).new_page() for browser in browsers]
    for page in pages:
        page.set_default_timeout(90_000)
    measured: list[list[Measured]] = [[] for _ in apps]
    model_ms: list[float] = []
    loads = [os.getloadavg()[0]]
    for make in INTERACTIONS:
        drivers = [make(page, url, pid) for page, (url, pid) in zip(pages, apps, strict=True)]
        times: list[list[tuple[float, ...]]] = [[] for _ in apps]
        for round_no in range(clicks):
            for i in (range(len(apps)) if round_no % 2 == 0 else reversed(range(len(apps)))):
                times[i].append(drivers[i].timed())
        for side, driver, timed in zip(measured, drivers, times, strict=True):
            side.append((driver.title, driver.goal_ms, timed))
        if isinstance(drivers[0], TranslateClick):
            model_ms = drivers[0].model_ms
        loads.append(os.getloadavg()[0])
    return measured, model_ms, loads


@contextlib.contextmanager
def worktree(revision: str):
    """`revision` checked out (detached) into a temporary worktree of this repository, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="bench-clicks-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(folder), revision],
                   check=True, capture_output=True, text=True)
    try:
        yield folder
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("clicks", __doc__)
    parser.add_argument("--clicks", type=int, default=10, help="timed clicks per page (after warm-up clicks)")
    parser.add_argument("--against", metavar="REV", help="also serve git revision REV (a temporary worktree, the same "
                        "models) and time every interaction on both in turn: the paired ratio here / REV")
    args = parser.parse_args(argv)
    if args.clicks < 1:
        parser.error("--clicks must be at least 1")
    if not Path(CHROMIUM).is_file():
        parser.error(f"{CHROMIUM} is missing: run `make browser` (apt-get install -y chromium)")
    if args.against:
        known = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet",
                                f"{args.against}^{{commit}}"], capture_output=True, text=True)
        if known.returncode:
            parser.error(f"--against {args.against!r} is not a git revision of {ROOT}")
    from playwright.sync_api import sync_playwright

    # both apps on this checkout's models: only the code differs
    env = {**os.environ, "TX_MODELS_DIR": os.environ.get("TX_MODELS_DIR") or str(ROOT / "models")}
    with contextlib.ExitStack() as stack:
        apps = [stack.enter_context(streamlit_server(env=env))]
        if args.against:
            other = stack.enter_context(worktree(args.against))
            apps.append(stack.enter_context(streamlit_server(Path(f"/tmp/bench-clicks-{os.getpid()}-against.log"),
                                                             env, other)))
        p = stack.enter_context(sync_playwright())
        browsers = [p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS) for _ in apps]
        measured, model_ms, loads = interleaved(browsers, apps, args.clicks)
        for browser in browsers:
            browser.close()
    print(f"load average (1 min) {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs; {args.clicks} timed "
          f"clicks each, after warm-up; drawn = the frame after the page's last change ({QUIET_MS} ms quiet after)")
    for i, (title, goal_ms, times) in enumerate(measured[0]):
        report(title, times, goal_ms)
        if title == TranslateClick.title:
            drawn = statistics.median(t[2] for t in times)
            print(f"  the model's own time (the page's headline): p50 {statistics.median(model_ms):.0f} ms, "
                  f"{statistics.median(model_ms) / drawn:.0%} of click -> drawn")
        if args.against:
            report_pair(f"  {title}", times, measured[1][i][2], args.against)
    return 0
