"""Where numba keeps the package's compiled kernels, and that none built from other sources
loads (gofish_env/kernel_cache.py).

The tests that run ``import gofish_env`` in a new process use a copy of the package's
sources (an edit must not touch the work tree); the read-only ones mount that copy, and the
home folder, read-only in a mount namespace of their own (``unshare -m``, as root), since
root writes through file modes.
"""

from __future__ import annotations

import importlib
import inspect
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numba
import pytest
from numba.core import caching, config
from numba.core.dispatcher import Dispatcher

from gofish_env import kernel_cache

ROOT = Path(__file__).resolve().parents[1]
UID = os.getuid() if hasattr(os, "getuid") else None
# The kernels planted in numba's folders: built from the package's sources (they must go
# when one changes) and one that is not (world_kernels: numba's own check is enough).
BUILT_FROM_SOURCES = ("observation.fill_observation-544.py311.nbi", "bounds.x-26.py311.1.nbc")
VECTOR_KERNELS = ("engine.mix64-26.py311.nbi", "engine.mix64-26.py311.1.nbc")
INDEPENDENT = "world_kernels.walk-470.py311.1.nbc"
# Prints numba's cache folder of a kernel of the package's folder and one of vector's.
WHERE = """
import os, gofish_env.observation as o, gofish_env.vector.engine as e
print(o.fill_observation._cache.cache_path)
print(e.mix64._cache.cache_path)
"""


def locator(name):
    """numba's locator class ``name`` (numba < 0.68 names them with a leading underscore)."""
    return getattr(caching, name, None) or getattr(caching, f"_{name}")


def source_copy(tmp_path: Path) -> Path:
    """A copy of the package's sources, without compiled files; its folder for PYTHONPATH."""
    src = tmp_path / "src"
    shutil.copytree(
        ROOT / "gofish_env", src / "gofish_env", ignore=shutil.ignore_patterns("__pycache__")
    )
    return src


def edit_bounds(src: Path) -> None:
    with open(src / "gofish_env" / "bounds.py", "a") as file:
        file.write("\n# an edit\n")


def plant(package_folder: Path, vector_folder: Path) -> list[Path]:
    """Fake cached kernels in numba's folders; all the paths."""
    paths = [package_folder / name for name in (*BUILT_FROM_SOURCES, INDEPENDENT)]
    paths += [vector_folder / name for name in VECTOR_KERNELS]
    for path in paths:
        path.write_bytes(b"a kernel of yesterday's sources")
    return paths


def python(tmp_path, src, code, env=(), read_only=(), cwd=None):
    """Runs ``code`` with the copy ``src`` first on the path and ``env`` in numba's cache
    settings' place (NUMBA_CACHE_DIR, XDG_CACHE_HOME and the temporary folder unset unless
    given); ``read_only`` folders mounted read-only for it. The completed process."""
    environ = {
        name: value
        for name, value in os.environ.items()
        if name not in {"NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "TMPDIR", "TEMP", "TMP"}
    }
    environ.update({"PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1", **dict(env)})
    command = [sys.executable, "-c", code]
    if read_only:
        mounts = " && ".join(
            f"mount --bind {path} {path} && mount -o remount,bind,ro {path} {path}"
            for path in read_only
        )
        command = ["unshare", "-m", "sh", "-c", f'{mounts} && exec "$@"', "sh", *command]
    return subprocess.run(
        command,
        cwd=cwd or tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )


def numba_folders(tmp_path, src, env=(), read_only=()) -> tuple[Path, Path]:
    done = python(tmp_path, src, WHERE, env, read_only)
    assert done.returncode == 0, done.stderr
    package_folder, vector_folder = map(Path, done.stdout.split())
    return package_folder, vector_folder


def can_mount_read_only() -> bool:
    if not sys.platform.startswith("linux") or UID != 0 or not shutil.which("unshare"):
        return False
    probe = tempfile.mkdtemp()
    try:
        mount = f"mount --bind {probe} {probe} && mount -o remount,bind,ro {probe} {probe}"
        done = subprocess.run(["unshare", "-m", "sh", "-c", mount], capture_output=True)
        return done.returncode == 0
    finally:
        os.rmdir(probe)


read_only_mounts = pytest.mark.skipif(
    not can_mount_read_only(),
    reason="needs read-only bind mounts (root and unshare -m on Linux)",
)


# ------------------------------------------------------------- the folders numba may use


@pytest.mark.parametrize(
    "module, kernel",
    [("gofish_env.observation", "fill_observation"), ("gofish_env.vector.engine", "mix64")],
)
def test_the_folders_checked_are_the_ones_numba_keeps_kernels_in(
    module, kernel, tmp_path, monkeypatch
):
    py_func = getattr(importlib.import_module(module), kernel).py_func
    file = inspect.getfile(py_func)
    folder = Path(os.path.dirname(os.path.abspath(file)))
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "numba-cache-dir"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    numbas = [
        locator(name)(py_func, file).get_cache_path()
        for name in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
    ]
    checked = kernel_cache.locations(folder, str(tmp_path / "numba-cache-dir"))
    assert [str(path) for path in checked] == numbas
    assert [str(path) for path in kernel_cache.locations(folder, "")] == numbas[1:]
    assert folder in [source_folder for source_folder, _ in kernel_cache.KERNEL_FOLDERS]


# ------------------------------------------------------------------ kernels of old sources


@pytest.mark.parametrize("given_in", ["the environment", "numba's settings file"])
def test_an_edit_drops_the_kernels_numba_keeps_under_numba_cache_dir(given_in, tmp_path):
    src = source_copy(tmp_path)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba-cache-dir")}
    if given_in == "numba's settings file":  # .numba_config.yaml in the working folder
        pytest.importorskip("yaml", reason="numba reads its settings file with PyYAML")
        (tmp_path / ".numba_config.yaml").write_text(f"cache_dir: {env.pop('NUMBA_CACHE_DIR')}\n")
    package_folder, vector_folder = numba_folders(tmp_path, src, env)
    assert package_folder.is_relative_to(tmp_path / "numba-cache-dir")
    paths = plant(package_folder, vector_folder)
    # the sources unchanged: what is cached stays
    assert python(tmp_path, src, "import gofish_env", env).returncode == 0
    assert all(path.exists() for path in paths)

    edit_bounds(src)
    assert python(tmp_path, src, "import gofish_env", env).returncode == 0
    assert [path.name for path in paths if path.exists()] == [INDEPENDENT]


def test_with_numba_cache_dir_set_nothing_is_written_in_the_packages_folders(tmp_path):
    """Nor left there by ``pip uninstall``."""
    src = source_copy(tmp_path)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba-cache-dir")}
    numba_folders(tmp_path, src, env)
    assert sorted(src.rglob("__pycache__")) == []
    stamps = sorted(path.parent.name[:6] for path in tmp_path.rglob(kernel_cache.STAMP))
    assert stamps == ["gofish", "vector"]


def test_an_edit_drops_the_kernels_kept_in_numbas_user_wide_folder(tmp_path, monkeypatch):
    """A folder of numba's user-wide cache is checked even while the package's own
    __pycache__ serves (the package may be read-only another time)."""
    src = source_copy(tmp_path)
    env = {"XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    user_wide = [  # numba's user-wide folder for the modules of each source folder
        Path(locator("UserWideCacheLocator")(edit_bounds, str(folder / "x.py")).get_cache_path())
        for folder in (src / "gofish_env", src / "gofish_env" / "vector")
    ]
    for folder in user_wide:
        folder.mkdir(parents=True)
    paths = plant(*user_wide)
    assert python(tmp_path, src, "import gofish_env", env).returncode == 0
    # kernels nobody vouched for (no stamp: an older gofish_env made them) are dropped
    assert [path.name for path in paths if path.exists()] == [INDEPENDENT]
    # the folders as numba leaves them on a day it uses them: kernels and today's stamp
    paths = plant(*user_wide)
    stamp = src / "gofish_env" / "__pycache__" / kernel_cache.STAMP  # the import's, today's
    for folder in user_wide:
        shutil.copy(stamp, folder)
    assert python(tmp_path, src, "import gofish_env", env).returncode == 0
    assert all(path.exists() for path in paths)

    edit_bounds(src)
    assert python(tmp_path, src, "import gofish_env", env).returncode == 0
    assert [path.name for path in paths if path.exists()] == [INDEPENDENT]


def test_an_edit_still_drops_the_kernels_in_the_packages_own_folders(tmp_path):
    src = source_copy(tmp_path)
    package_folder, vector_folder = numba_folders(tmp_path, src)
    assert package_folder == src / "gofish_env" / "__pycache__"
    assert vector_folder == src / "gofish_env" / "vector" / "__pycache__"
    paths = plant(package_folder, vector_folder)
    assert python(tmp_path, src, "import gofish_env").returncode == 0
    assert all(path.exists() for path in paths)

    edit_bounds(src)
    assert python(tmp_path, src, "import gofish_env").returncode == 0
    assert [path.name for path in paths if path.exists()] == [INDEPENDENT]


@read_only_mounts
def test_a_read_only_copy_drops_the_kernels_numba_keeps_in_the_users_folder(tmp_path):
    src = source_copy(tmp_path)
    env = {"XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    package_folder, vector_folder = numba_folders(tmp_path, src, env, read_only=[src])
    assert package_folder.is_relative_to(tmp_path / "user-cache" / "numba")
    paths = plant(package_folder, vector_folder)
    done = python(tmp_path, src, "import gofish_env", env, read_only=[src])
    assert done.returncode == 0, done.stderr
    assert all(path.exists() for path in paths)

    edit_bounds(src)  # outside the namespace the copy is writable
    done = python(tmp_path, src, "import gofish_env", env, read_only=[src])
    assert done.returncode == 0, done.stderr
    assert [path.name for path in paths if path.exists()] == [INDEPENDENT]


# --------------------------------------------------------- nowhere for numba to write to

SMALL_KERNEL = """
import os, gofish_env.bounds as b
print(b.bounds_scratch_size(4, 13))
print(type(b.bounds_scratch_size._cache).__name__, b.bounds_scratch_size._cache.cache_path)
"""


@read_only_mounts
def test_a_read_only_install_run_without_a_writable_home_caches_in_the_temporary_folder(
    tmp_path,
):
    src = source_copy(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    done = python(tmp_path, src, SMALL_KERNEL, env, read_only=[src, home])
    assert done.returncode == 0, done.stderr  # was: cannot cache function ... no locator
    result, cache, folder = done.stdout.split()
    own = tmp_path / "tmp" / f"gofish-env-numba-cache-{UID}"
    assert (result, cache) == ("48", "FunctionCache")
    assert Path(folder).parent == own
    assert sorted(path.suffix for path in Path(folder).glob("bounds.bounds_scratch_size*")) == [
        ".nbc",
        ".nbi",
    ]
    assert own.stat().st_mode & 0o777 == 0o700
    # a second process loads what the first compiled
    done = python(tmp_path, src, SMALL_KERNEL, env, read_only=[src, home])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[2] == folder


@read_only_mounts
def test_with_no_writable_folder_at_all_the_kernels_compile_without_a_cache(tmp_path):
    src = source_copy(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "TMPDIR": str(home)}
    temporary = [path for path in ("/tmp", "/var/tmp", "/usr/tmp") if os.path.isdir(path)]
    done = python(tmp_path, src, SMALL_KERNEL, env, read_only=[src, home, *temporary], cwd=src)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["48", "NullCache", "None"]
    assert "NUMBA_CACHE_DIR" in done.stderr  # the warning says how to get a cache


def test_the_packages_kernels_fall_back_to_a_folder_of_the_users_in_the_temporary_folder(
    tmp_path, monkeypatch
):
    """Without mounts: the package's folders and numba's user-wide one refused."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    usable = kernel_cache.usable
    monkeypatch.setattr(
        kernel_cache, "usable", lambda path: path.is_relative_to(temporary) and usable(path)
    )
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(temporary))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    try:
        kernel_cache.prepare_kernel_cache()
        own = temporary / f"gofish-env-numba-cache-{UID}"
        assert os.environ["NUMBA_CACHE_DIR"] == str(own)
        assert str(own) == config.CACHE_DIR  # numba is imported: its config reads it
        py_func = importlib.import_module("gofish_env.bounds").bounds_scratch_size.py_func
        assert Path(caching.FunctionCache(py_func).cache_path).parent == own
    finally:
        os.environ.pop("NUMBA_CACHE_DIR", None)
        monkeypatch.undo()
        config.reload_config()
    assert os.environ.get("NUMBA_CACHE_DIR", "") == config.CACHE_DIR


@pytest.mark.skipif(UID is None, reason="POSIX user ids")
@pytest.mark.parametrize("squatted", ["a link", "open to all"])
def test_a_folder_in_the_temporary_folder_that_is_not_the_users_own_is_not_used(
    squatted, tmp_path, monkeypatch
):
    """numba's cache files are pickles: a folder another user can write in would run their
    code."""
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    name = tmp_path / f"gofish-env-numba-cache-{UID}"
    if squatted == "a link":
        (tmp_path / "theirs").mkdir()
        name.symlink_to(tmp_path / "theirs")
    else:
        name.mkdir()
        name.chmod(0o777)
    folder = Path(kernel_cache.fallback_cache_dir())
    assert folder.parent == tmp_path and folder.name.startswith("gofish-env-numba-cache-")
    assert folder != name and not folder.is_symlink()
    assert folder.stat().st_mode & 0o777 == 0o700
    if squatted == "a link":
        assert list((tmp_path / "theirs").iterdir()) == []


def test_the_users_folder_in_the_temporary_folder_is_made_private_and_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    first = kernel_cache.fallback_cache_dir()
    assert first == str(tmp_path / f"gofish-env-numba-cache-{UID}")
    assert Path(first).stat().st_mode & 0o777 == 0o700 or UID is None
    assert kernel_cache.fallback_cache_dir() == first


def test_without_a_cache_only_the_packages_kernels_are_left_uncached(tmp_path, monkeypatch):
    monkeypatch.setattr(Dispatcher, "enable_caching", Dispatcher.enable_caching)  # undone
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))
    kernel_cache.compile_without_cache()
    kernel_cache.compile_without_cache()  # once is enough; twice changes nothing
    ours = {"__name__": "gofish_env.somewhere", "numba": numba}
    exec("@numba.njit(cache=True)\ndef twice(x):\n    return 2 * x\n", ours)

    @numba.njit(cache=True)
    def thrice(x):
        return 3 * x

    assert (ours["twice"](4), thrice(4)) == (8, 12)
    assert type(ours["twice"]._cache).__name__ == "NullCache"
    assert type(thrice._cache).__name__ == "FunctionCache"
