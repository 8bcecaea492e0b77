"""Every relative link in the README, the changelog and docs/ leads somewhere: the file
exists, and a `#section` names a heading of that page (GitHub's anchors)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped,
    spaces made dashes."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for line in FENCE.sub("", page.read_text()).splitlines():
        heading = re.match(r"#{1,6} (.+)", line)
        if not heading:
            continue
        name = anchor(heading.group(1))
        count = seen.get(name, 0)
        seen[name] = count + 1
        found.add(name if count == 0 else f"{name}-{count}")
    return found


def relative_links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text())
    return [
        target
        for target in LINK.findall(text)
        if not re.match(r"[a-z]+:", target)  # http:, https:, mailto:
    ]


def test_the_anchor_of_a_heading_is_github_s():
    assert anchor("`master`: search over sampled worlds") == "master-search-over-sampled-worlds"
    assert anchor("4,096 simulations at two players: the default") == (
        "4096-simulations-at-two-players-the-default"
    )
    assert anchor("Reading the other seat's asks") == "reading-the-other-seats-asks"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_leads_to_a_file_and_a_heading(page):
    broken = []
    for target in relative_links(page):
        path, _, section = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no file {linked.relative_to(ROOT)}")
        elif section and linked.suffix == ".md" and section not in anchors(linked):
            broken.append(f"{target}: no heading #{section} in {linked.name}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)
