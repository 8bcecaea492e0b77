"""Every Python example in docs/rules.md and docs/vector.md runs, and prints the text block
that follows it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
# Each page, and how many examples it has at least.
PAGES = {"rules.md": 5, "vector.md": 3}
# A ```python block, optionally followed (after blank lines only) by a ```text block.
BLOCK = re.compile(r"```python\n(?P<code>.*?)```\n(?:\s*```text\n(?P<output>.*?)```)?", re.S)


def examples(page: str) -> list:
    text = (DOCS / page).read_text(encoding="utf-8")
    return [
        pytest.param(
            page,
            match["code"],
            match["output"],
            id=f"{page}-line{text.count(chr(10), 0, match.start()) + 1}",
        )
        for match in BLOCK.finditer(text)
    ]


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_page_has_examples(page):
    assert len(examples(page)) >= PAGES[page]


@pytest.mark.parametrize(
    ("page", "code", "output"), [example for page in sorted(PAGES) for example in examples(page)]
)
def test_example_runs_and_prints_what_the_page_shows(page, code, output):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(DOCS / page), "exec"), {"__name__": "docs_example"})
    if output is None:
        assert printed.getvalue() == ""
    else:
        assert printed.getvalue() == output
