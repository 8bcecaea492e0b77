"""Files a long run appends to a JSON line at a time, and goes on from.

A write stopped midway (the process killed, the machine lost) can leave the last line cut
short. Reading keeps the whole lines and measures the cut one, so the run can drop it and
go on; a line that is not JSON before the last is damage this does not guess at.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class JsonLines:
    rows: list[dict]
    ends: list[int]  # the file's length up to the end of each row's line
    cut: int  # bytes of a last line with no end: what a stopped write leaves (0: none)

    def size(self, rows: int) -> int:
        """The file's length holding its first ``rows`` rows and nothing after."""
        return self.ends[rows - 1] if rows else 0


def read_json_lines(path: Path) -> JsonLines:
    """The rows of ``path`` (none when it does not exist), one a line."""
    if not path.exists():
        return JsonLines([], [], 0)
    data = path.read_bytes()
    *whole, last = data.split(b"\n")
    rows, ends, end = [], [], 0
    for number, line in enumerate(whole, 1):
        end += len(line) + 1
        try:
            rows.append(json.loads(line))
        except ValueError as error:
            raise ValueError(
                f"{path}, line {number}: not a JSON line ({error}); only a cut last line "
                "is mended, so mend or move the file"
            ) from None
        ends.append(end)
    return JsonLines(rows, ends, len(last))
