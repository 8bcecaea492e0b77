"""The README's code examples run as written (the training one on a smaller budget)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 4


# An example that trains with sb3-contrib needs the train extra.
NEEDS_TORCH = re.compile(r"^\s*(from|import) (torch|sb3_contrib|stable_baselines3)\b", re.M)


@pytest.mark.parametrize(
    "index",
    [
        pytest.param(index, marks=pytest.mark.torch if NEEDS_TORCH.search(block) else ())
        for index, block in enumerate(BLOCKS)
    ],
)
def test_readme_example_runs(index):
    code = BLOCKS[index].replace("learn(10_000)", "learn(256)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, f"README.md block {index}", "exec"), {})


def test_readme_quick_start_names_the_two_scripts():
    text = README.read_text()
    assert "bash scripts/main.sh" in text and "bash scripts/test.sh" in text
    assert (README.parent / "scripts" / "main.sh").is_file()
    assert (README.parent / "scripts" / "test.sh").is_file()
