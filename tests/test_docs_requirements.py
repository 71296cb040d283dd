"""docs/requirements.txt lists exactly the `docs` extra of pyproject.toml.

The documentation's dependencies are installed with ``pip install -r
docs/requirements.txt`` (README, docs index) so that the compiled package is not
rebuilt, as ``pip install -e ".[docs]"`` would; the two lists must not drift.
"""
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
REQUIREMENTS = ROOT / "docs" / "requirements.txt"

# an sdist ships pyproject.toml and the tests but not docs/
pytestmark = pytest.mark.skipif(not PYPROJECT.exists() or not (ROOT / "docs" / "conf.py").exists(),
                                reason="needs the source tree (pyproject.toml, docs/)")


def _normalise(requirement):
    """Lower-case, no spaces, '_' and '.' in the name as '-' (PEP 503)."""
    requirement = "".join(requirement.split()).lower()
    for i, ch in enumerate(requirement):
        if ch in "<>=!~[;@":
            return requirement[:i].replace("_", "-").replace(".", "-") + requirement[i:]
    return requirement.replace("_", "-").replace(".", "-")


def _requirements_file():
    assert REQUIREMENTS.exists(), "docs/requirements.txt is missing"
    lines = (line.split("#", 1)[0].strip() for line in REQUIREMENTS.read_text().splitlines())
    return [line for line in lines if line]


def test_docs_requirements_match_the_docs_extra():
    extra = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]["docs"]
    listed = _requirements_file()
    assert sorted(map(_normalise, listed)) == sorted(map(_normalise, extra)), (
        "docs/requirements.txt and the `docs` extra of pyproject.toml differ: "
        f"file {listed}, extra {extra}")


def test_docs_requirements_do_not_install_dptoolkit():
    # `-e .`, `.[docs]` or a bare `dptoolkit` would rebuild the compiled kernels
    for line in _requirements_file():
        assert not line.startswith(("-e", ".", "-r")), line
        assert not _normalise(line).startswith("dptoolkit"), line
