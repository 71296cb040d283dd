"""Packaging: importing dptoolkit without its compiled extensions says how to build.

The package's ``.py`` files (no ``.so``, no ``.pyx``) are copied to a temporary
directory and imported in a child process that sees that copy first: the
import must fail with an ImportError that names the build command, not with a
bare ``No module named 'dptoolkit.linear_model._frank_wolfe._heap'``.  The child drops any editable-install
finder (``__editable__..._finder``), which would otherwise resolve
``dptoolkit.linear_model._frank_wolfe._heap`` to the developer's built tree.
"""
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dptoolkit

PACKAGE = Path(dptoolkit.__file__).resolve().parent

CHILD = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    sys.meta_path[:] = [f for f in sys.meta_path
                        if "editable" not in getattr(f, "__module__", "").lower()
                        and "editable" not in getattr(f, "__name__", "").lower()]
    try:
        import dptoolkit
    except ImportError as exc:
        print("IMPORT-ERROR")
        print(exc)
        sys.exit(0)
    print("IMPORTED", dptoolkit.__file__)
    sys.exit(1)
""")


def _copy_sources(dest, with_pyx):
    for src in PACKAGE.rglob("*.py"):
        if "__pycache__" in src.parts:
            continue
        target = dest / "dptoolkit" / src.relative_to(PACKAGE)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    if with_pyx:
        (dest / "dptoolkit" / "linear_model" / "_frank_wolfe" / "_fw_fast.pyx").write_text(
            "# placeholder\n")


def _import_in_child(path):
    return subprocess.run([sys.executable, "-c", CHILD, str(path)], cwd=path,
                          capture_output=True, text=True, timeout=60)


def test_unbuilt_tree_import_error_says_how_to_build(tmp_path):
    _copy_sources(tmp_path, with_pyx=False)
    assert not list((tmp_path / "dptoolkit").rglob("*.so"))
    proc = _import_in_child(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert out.startswith("IMPORT-ERROR"), out
    assert "dptoolkit's compiled extensions are not built" in out
    assert "pip install -e ." in out
    assert "python setup.py build_ext --inplace" in out
    assert "_heap" in out
    assert str(tmp_path / "dptoolkit") in out


def test_partial_build_names_every_missing_extension(tmp_path):
    # a source tree: every .pyx without its compiled module is named
    _copy_sources(tmp_path, with_pyx=True)
    proc = _import_in_child(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("linear_model._frank_wolfe._fw_fast, linear_model._frank_wolfe._heap"
            in proc.stdout), proc.stdout



def test_licence_ships_in_sdist_and_wheel_metadata(tmp_path):
    """pyproject declares BSD-3-Clause: LICENSE exists, is that licence, and the
    sdist carries it with ``License-File: LICENSE`` in its metadata (the field a
    wheel build reads to put it in ``.dist-info/licenses/``)."""
    import tarfile

    root = Path(__file__).resolve().parents[1]
    if not (root / "pyproject.toml").is_file():
        pytest.skip("not run from a source tree")
    text = (root / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    assert "Copyright (c) 2026, dptoolkit developers" in text
    # setup.py needs the build requirements of pyproject's [build-system]; an
    # environment installed with build isolation (as CI's) may lack them, and
    # .ci/run checks the LICENSE of the isolated build's wheel instead
    pytest.importorskip("Cython", reason="the sdist build needs Cython ([build-system])")
    setuptools = pytest.importorskip("setuptools")
    if int(setuptools.__version__.split(".")[0]) < 77:
        pytest.skip("the sdist build needs setuptools >= 77 ([build-system])")
    src = tmp_path / "src"
    shutil.copytree(root, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "*.so", "*.c", "__pycache__", ".asv",
        "_build"))
    env = {**os.environ, "DPTOOLKIT_EXTENSIONS": "dptoolkit.linear_model._frank_wolfe._heap"}
    subprocess.run([sys.executable, "setup.py", "-q", "sdist", "-d", str(tmp_path / "dist")],
                   cwd=src, env=env, check=True, capture_output=True, timeout=300)
    (archive,) = (tmp_path / "dist").glob("dptoolkit-*.tar.gz")
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        top = names[0].split("/")[0]
        assert f"{top}/LICENSE" in names
        pkg_info = tar.extractfile(f"{top}/PKG-INFO").read().decode()
    assert "License-Expression: BSD-3-Clause" in pkg_info
    assert "License-File: LICENSE" in pkg_info
