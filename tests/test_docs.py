"""The README stays a newcomer's five minutes, and the README and docs/*.md point only at what exists: every link and
picture resolves, every #anchor names a heading of its page, and the README's layout names every package."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

README_MAX_LINES = 120  # the budget: what the project is, two commands, the tour, the API, the layout

LINK = re.compile(r"\]\(([^)\s]+)\)")  # [text](target) and ![alt](target)


def anchor(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)  # a '#' in code is no heading
    return {anchor(m) for m in re.findall(r"^#+ (.+)$", text, flags=re.M)}


def local_links(page: Path) -> list[str]:
    return [t for t in LINK.findall(page.read_text(encoding="utf-8")) if not re.match(r"[a-z]+://|mailto:", t)]


def test_the_readme_fits_its_budget():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail to docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_and_picture_resolves(page):
    broken = []
    for target in local_links(page):
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.is_file():
            broken.append(f"{target}: no such file")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            broken.append(f"{target}: no heading with that anchor in {file.name}")
    assert not broken, f"{page.name}: {broken}"


def test_the_readme_shows_a_picture_of_every_page():
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (REPO / "README.md").read_text(encoding="utf-8"))
    pages = sorted((REPO / "pages").glob("*.py"))
    assert len(pictures) >= len(pages) + 1, f"{len(pictures)} pictures for Home and {len(pages)} pages"


def test_the_readme_layout_names_every_package():
    """Every top-level Python package of the repository has its line in the README's "Where things are"."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    layout = text.split("## Where things are", 1)[1].split("\n## ", 1)[0]
    packages = sorted(p.parent.name for p in REPO.glob("*/__init__.py") if p.parent.name != "tests")
    missing = [name for name in packages if not re.search(rf"^{name}/", layout, flags=re.M)]
    assert not missing, f"packages the README's layout does not name: {missing}"
