"""Every download button in the app leaves the page alone when clicked.

Streamlit's default (`on_click="rerun"`) reruns the script after a download. That is wasted work on the
server, and on the Decoding explorer it re-registered the deferred files mid-rerun: in CI, a click on the
second download during that rerun never got its file. A download changes nothing the page shows, so each
button must say `on_click="ignore"`.
"""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def download_button_calls() -> list[tuple[str, int, ast.Call]]:
    calls = []
    for folder in ("playground", "pages"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "download_button"):
                    calls.append((str(path.relative_to(ROOT)), node.lineno, node))
    return calls


def test_the_app_has_download_buttons_to_check():
    # the scan itself must find the buttons, or the test below passes on nothing
    files = {name for name, _, _ in download_button_calls()}
    assert {"playground/decoding/widgets.py", "playground/translate/widgets.py",
            "playground/experiments/widgets.py"} <= files


def test_every_download_button_ignores_its_click():
    rerunning = []
    for name, line, call in download_button_calls():
        on_click = next((k.value for k in call.keywords if k.arg == "on_click"), None)
        if not (isinstance(on_click, ast.Constant) and on_click.value == "ignore"):
            rerunning.append(f"{name}:{line}")
    assert not rerunning, f"download buttons that rerun the page on click: {rerunning}"
