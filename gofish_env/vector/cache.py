"""Keeps numba's on-disk cache of the vector kernels in step with their sources.

numba checks a cached kernel against its own file only, but these kernels compile in code
from other files (the engine's helpers, ``gofish_env.bounds``, ``gofish_env.knowledge``,
``gofish_env.observation``).
Edit one of those and a stale kernel would load. So the first import compares a hash of
every source the kernels are built from with the one the cache was made from, and on a
difference deletes the cache (numba then compiles again, once).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = (
    *sorted(HERE.glob("*.py")),
    HERE.parent / "bounds.py",
    HERE.parent / "knowledge.py",
    HERE.parent / "observation.py",
)


def sources_hash() -> str:
    digest = hashlib.sha256()
    for path in SOURCES:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def drop_stale_cache(folder: Path = HERE / "__pycache__") -> bool:
    """Delete the cached kernels if their sources changed since; True if it did."""
    stamp = folder / "vector-sources.sha256"
    current = sources_hash()
    try:
        if stamp.read_text() == current:
            return False
    except OSError:
        pass
    stale = False
    try:
        for pattern in ("*.nbi", "*.nbc"):
            for path in folder.glob(pattern):
                path.unlink(missing_ok=True)
                stale = True
        folder.mkdir(exist_ok=True)
        stamp.write_text(current)
    except OSError:  # a read-only install: numba falls back to its own cache folder
        pass
    return stale
