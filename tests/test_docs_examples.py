"""Every Python example in docs/rules.md runs, and prints the text block that follows it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "rules.md"
# A ```python block, optionally followed (after blank lines only) by a ```text block.
BLOCK = re.compile(r"```python\n(?P<code>.*?)```\n(?:\s*```text\n(?P<output>.*?)```)?", re.S)


def examples() -> list:
    text = DOC.read_text(encoding="utf-8")
    return [
        pytest.param(
            match["code"], match["output"], id=f"line{text.count(chr(10), 0, match.start()) + 1}"
        )
        for match in BLOCK.finditer(text)
    ]


def test_the_page_has_examples():
    assert len(examples()) >= 5


@pytest.mark.parametrize(("code", "output"), examples())
def test_example_runs_and_prints_what_the_page_shows(code, output):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(DOC), "exec"), {"__name__": "docs_example"})
    if output is None:
        assert printed.getvalue() == ""
    else:
        assert printed.getvalue() == output
