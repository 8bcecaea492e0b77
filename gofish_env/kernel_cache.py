"""Gives numba a folder to keep the package's compiled kernels in, and keeps what it keeps
there in step with their sources.

numba checks a cached kernel against its own file only, but kernels compile in code from
other files: ``observation.fill_observation`` the bounds of ``bounds``, the vector
engine's kernels both of those and one another. Edit one and a stale kernel would load. So
``import gofish_env`` compares a hash of every source the kernels are built from with the
one each cache folder's kernels were made from (a stamp in the folder), and on a difference
deletes those kernels (numba then compiles again, once).

Where numba keeps a module's kernels (numba/core/caching.py, the cache locators: the first
folder that numba can make and write a file in; it never reads a folder it cannot write):

1. with ``NUMBA_CACHE_DIR`` set, ``$NUMBA_CACHE_DIR/<folder's name>_<sha1 of its absolute
   path>``, a folder of its own for each folder of sources;
2. the ``__pycache__`` beside the module (an editable checkout, a pip install into a
   venv the user owns);
3. the same name in numba's user-wide folder (``~/.cache/numba``, or
   ``$XDG_CACHE_HOME/numba``, on Linux): a read-only install.

Every one of those that exists is checked, whichever numba uses today. With none usable (a
read-only install run by a user whose home is read-only too: a service account, ``docker
run --read-only``) numba refuses to load the kernels at all ("cannot cache function ...:
no locator available"); then ``NUMBA_CACHE_DIR`` is set, for this process and the ones it
starts, to a private folder of this user's in the temporary folder, and if even that cannot
be made the package's kernels compile without a cache, in every process.
"""

from __future__ import annotations

import atexit
import getpass
import hashlib
import os
import shutil
import stat
import sys
import tempfile
import warnings
from pathlib import Path

# The folders as numba names them: after os.path.abspath of a kernel's file, links kept.
PACKAGE = Path(os.path.dirname(os.path.abspath(__file__)))
VECTOR = PACKAGE / "vector"
SOURCES = (
    PACKAGE / "bounds.py",
    PACKAGE / "knowledge.py",
    PACKAGE / "observation.py",
    *sorted(VECTOR.glob("*.py")),
)
# The folders of the modules whose kernels are built from those sources, and those
# kernels' file names' start (numba names them "<module>.<function>-<line>.py311...").
KERNEL_FOLDERS = (
    (PACKAGE, ("bounds.", "knowledge.", "observation.")),
    (VECTOR, ("",)),
)
STAMP = "kernel-sources.sha256"  # in each cache folder: the hash its kernels were built from
TEMPORARY = "gofish-env-numba-cache-"  # + the user's id: the last resort's folder


def sources_hash() -> str:
    digest = hashlib.sha256()
    for path in SOURCES:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def numba_cache_dir() -> str:
    """``NUMBA_CACHE_DIR`` as numba reads it ("" when unset)."""
    config = sys.modules.get("numba.core.config")
    if config is None and os.path.isfile(".numba_config.yaml"):  # numba's settings file
        from numba.core import config
    if config is None:
        return os.environ.get("NUMBA_CACHE_DIR", "")
    config.reload_config()  # as numba does before each compile: the environment wins
    return config.CACHE_DIR or ""


def user_wide_cache_dir() -> str:
    """numba's user-wide cache folder (numba.misc.appdirs.user_cache_dir, not imported:
    that imports numba)."""
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA") or os.path.expanduser(r"~\AppData\Local")
        return os.path.join(os.path.normpath(local), "numba", "Cache")
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Caches"), "numba")
    return os.path.join(os.getenv("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "numba")


def mirror(root: str, folder: Path) -> Path:
    """The folder in cache folder ``root`` that numba keeps the kernels of the modules in
    ``folder`` in (_CacheLocator.get_suitable_cache_subpath)."""
    name = str(folder)
    return Path(root, f"{os.path.basename(name)}_{hashlib.sha1(name.encode()).hexdigest()}")


def locations(folder: Path, cache_dir: str) -> list[Path]:
    """The folders numba may keep the kernels of ``folder``'s modules in, in the order it
    tries them, with ``NUMBA_CACHE_DIR`` = ``cache_dir``."""
    given = [mirror(cache_dir, folder)] if cache_dir else []
    return [*given, folder / "__pycache__", mirror(user_wide_cache_dir(), folder)]


def usable(path: Path) -> bool:
    """numba's test of a cache folder (_CacheLocator.ensure_cache_path): it can be made,
    and a file written in it."""
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return False
    return True


def _user() -> str:
    if hasattr(os, "getuid"):
        return str(os.getuid())
    try:
        return getpass.getuser()
    except Exception:  # no name to be had (the temporary folder is the user's own there)
        return "user"


def _private(path: str) -> bool:
    """A folder of this user's that no one else can write in, and no link (numba's cache
    files are pickles: whoever can write them runs code in this process)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISDIR(info.st_mode):
        return False
    if not hasattr(os, "getuid"):
        return True
    return info.st_uid == os.getuid() and not info.st_mode & 0o077


def _remove(path: str, pid: int) -> None:
    if os.getpid() == pid:  # not in a forked child
        shutil.rmtree(path, ignore_errors=True)


def fallback_cache_dir() -> str | None:
    """A private folder of this user's in the temporary folder, for numba's cache: the same
    one in every process, or, when that name is taken by a folder that is not private, a
    new one of this process's (deleted when it ends). None if none can be made."""
    try:
        base = tempfile.gettempdir()
    except OSError:  # no temporary folder can be written in
        return None
    path = os.path.join(base, f"{TEMPORARY}{_user()}")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    if _private(path) and usable(Path(path)):
        return path
    try:
        path = tempfile.mkdtemp(prefix=TEMPORARY, dir=base)
    except OSError:
        return None
    atexit.register(_remove, path, os.getpid())
    return path


def use_cache_dir(path: str) -> None:
    """Set ``NUMBA_CACHE_DIR`` for this process and the ones it starts, so that numba reads
    it, imported already or not."""
    os.environ["NUMBA_CACHE_DIR"] = path
    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.reload_config()


def compile_without_cache() -> None:
    """Let the package's kernels compile without numba's cache (numba refuses a
    ``cache=True`` kernel it has no folder for); other kernels are left to numba."""
    from numba.core.dispatcher import Dispatcher

    import gofish_env.compile_interrupts  # noqa: F401  (as every module that imports numba)

    enable_caching = Dispatcher.enable_caching
    if getattr(enable_caching, "gofish_env_uncached", False):
        return

    def enable_caching_but_for_gofish_env(self) -> None:
        if (getattr(self.py_func, "__module__", None) or "").split(".")[0] != "gofish_env":
            enable_caching(self)  # else numba's NullCache stays: compile, keep nothing

    enable_caching_but_for_gofish_env.gofish_env_uncached = True
    Dispatcher.enable_caching = enable_caching_but_for_gofish_env


def numba_location(folder: Path, cache_dir: str) -> Path | None:
    """The folder numba keeps the kernels of ``folder``'s modules in (made, as numba makes
    it), None if there is none."""
    return next((path for path in locations(folder, cache_dir) if usable(path)), None)


def prepare_kernel_cache() -> bool:
    """Before any kernel loads: see that numba has a folder to keep the kernels in (the
    module's docstring says where), and drop the stale kernels. True if it dropped any."""
    cache_dir = numba_cache_dir()
    for folder, _ in KERNEL_FOLDERS:
        if numba_location(folder, cache_dir) is not None:
            continue
        fallback = fallback_cache_dir()
        where = f"NUMBA_CACHE_DIR={cache_dir}, " if cache_dir else ""
        if fallback is None:
            compile_without_cache()
            warnings.warn(
                f"gofish_env: numba can write its cache of compiled kernels nowhere ({where}"
                f"{folder / '__pycache__'}, {user_wide_cache_dir()} and the temporary folder "
                "are read-only), so the kernels compile in every process (about a minute); "
                "set NUMBA_CACHE_DIR to a writable folder to keep them",
                RuntimeWarning,
                stacklevel=2,
            )
            break
        if cache_dir:  # the user's choice cannot be written in: numba would fail
            warnings.warn(
                f"gofish_env: NUMBA_CACHE_DIR={cache_dir} cannot be written in (nor "
                f"{folder / '__pycache__'} and {user_wide_cache_dir()}); numba's cache is "
                f"kept in {fallback}",
                RuntimeWarning,
                stacklevel=2,
            )
        use_cache_dir(fallback)
        cache_dir = fallback
        break
    return drop_stale_kernels(cache_dir)


def drop_stale_kernels(cache_dir: str | None = None) -> bool:
    """Delete the cached kernels built from other sources than today's (or from sources
    unknown: no stamp) in every folder numba may keep them in that exists, with
    ``NUMBA_CACHE_DIR`` = ``cache_dir`` (numba's setting if None). True if it deleted any.

    The folder numba keeps them in now gets the stamp (before numba writes a kernel there);
    the others keep the one they have, so a folder numba does not use is not written in
    (with NUMBA_CACHE_DIR set, nothing is written in an installed package's folders)."""
    if cache_dir is None:
        cache_dir = numba_cache_dir()
    current = sources_hash()
    dropped = False
    for folder, starts in KERNEL_FOLDERS:
        used = numba_location(folder, cache_dir)
        for location in dict.fromkeys(locations(folder, cache_dir)):
            dropped |= _drop_stale(location, starts, current, location == used)
    return dropped


def _drop_stale(location: Path, starts: tuple[str, ...], current: str, used: bool) -> bool:
    stamp = location / STAMP
    try:
        made_from = stamp.read_text()
    except OSError:
        made_from = None
    if made_from == current or not location.is_dir():
        return False  # in step, or numba keeps nothing here (yet)
    dropped = False
    try:
        for path in location.iterdir():
            if path.suffix in (".nbi", ".nbc") and path.name.startswith(starts):
                path.unlink(missing_ok=True)
                dropped = True
        if used or made_from is not None:
            written = location / f"{STAMP}.{os.getpid()}"
            written.write_text(current)
            os.replace(written, stamp)
    except OSError:  # read-only: numba cannot use this folder either
        pass
    return dropped
