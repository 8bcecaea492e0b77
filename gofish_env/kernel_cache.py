"""Keeps numba's on-disk cache of the package's kernels in step with their sources.

numba checks a cached kernel against its own file only, but kernels compile in code from
other files: ``observation.fill_observation`` the bounds of ``bounds``, the vector
engine's kernels both of those and one another. Edit one and a stale kernel would load. So
``import gofish_env`` compares a hash of every source the kernels are built from with the
one the cache was made from, and on a difference deletes those caches (numba then compiles
again, once).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
VECTOR = PACKAGE / "vector"
SOURCES = (
    PACKAGE / "bounds.py",
    PACKAGE / "knowledge.py",
    PACKAGE / "observation.py",
    *sorted(VECTOR.glob("*.py")),
)
# The cached kernels built from those sources: (folder, the file names' start).
CACHES = (
    (PACKAGE / "__pycache__", ("bounds.", "knowledge.", "observation.")),
    (VECTOR / "__pycache__", ("",)),
)
STAMP = VECTOR / "__pycache__" / "kernel-sources.sha256"


def sources_hash() -> str:
    digest = hashlib.sha256()
    for path in SOURCES:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def drop_stale_kernels() -> bool:
    """Delete the cached kernels if their sources changed since; True if it did."""
    current = sources_hash()
    try:
        if STAMP.read_text() == current:
            return False
    except OSError:
        pass
    dropped = False
    try:
        for folder, starts in CACHES:
            for pattern in ("*.nbi", "*.nbc"):
                for path in folder.glob(pattern):
                    if path.name.startswith(starts):
                        path.unlink(missing_ok=True)
                        dropped = True
        STAMP.parent.mkdir(exist_ok=True)
        STAMP.write_text(current)
    except OSError:  # a read-only install: numba keeps its cache elsewhere
        pass
    return dropped
