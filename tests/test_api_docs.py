"""The API page (docs/api.rst) is complete: every public module has a section (or a
module target) and every name of its ``__all__`` is listed in an ``autosummary``,
under its own module or under another public module that exports the same object.

Read as text (no Sphinx needed); the Sphinx build itself (nitpicky, -W) checks
that every cross-reference resolves.
"""
import importlib
import re
import types
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
API = REPO / "docs" / "api.rst"
PACKAGE = REPO / "dptoolkit"

#: Public modules that need no section of their own, with the reason.
NOT_DOCUMENTED = {
    "dptoolkit.dsal.__main__": "runs the MPI solver as a script (python -m dptoolkit.dsal)",
}


def _public_modules():
    mods = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(REPO).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(p.startswith("_") for p in parts[1:]) and parts[-1] != "__main__":
            continue
        if parts[-1] == "__main__" and len(parts) == 2:
            continue      # python -m dptoolkit: the command line, documented as cli
        mods.append(".".join(parts))
    return mods


def _documented():
    """(modules with a section or target, {module: names listed in autosummary})."""
    if not API.exists():
        pytest.skip("docs/ not in this checkout")
    modules, names = set(), {}
    current, in_summary = None, False
    for line in API.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\.\. (automodule|currentmodule|py:module):: (\S+)", line)
        if m:
            if m.group(1) == "currentmodule":     # what autosummary resolves against
                current = m.group(2)
            else:
                modules.add(m.group(2))
            in_summary = False
            continue
        if line.startswith(".. autosummary::"):
            in_summary = True
            continue
        if in_summary:
            item = re.match(r"   ([A-Za-z_][\w.]*)\s*$", line)
            if item:
                names.setdefault(current, set()).add(item.group(1))
            elif line and not line.startswith("   "):
                in_summary = False
    return modules, names


PUBLIC = _public_modules()


def test_the_scan_sees_the_public_modules():
    for name in ("dptoolkit", "dptoolkit.exceptions", "dptoolkit.kernels",
                 "dptoolkit.distributed", "dptoolkit.accounting.events", "dptoolkit.cli"):
        assert name in PUBLIC


@pytest.mark.parametrize("module", [m for m in PUBLIC if m not in NOT_DOCUMENTED])
def test_every_public_module_is_on_the_api_page(module):
    modules, _ = _documented()
    assert module in modules, f"docs/api.rst has no automodule or py:module for {module}"


@pytest.mark.parametrize("module", [m for m in PUBLIC if m not in NOT_DOCUMENTED])
def test_every_public_name_is_listed(module):
    modules, names = _documented()
    mod = importlib.import_module(module)
    missing = []
    for name in getattr(mod, "__all__", []):
        if name.startswith("__"):
            continue
        obj = getattr(mod, name)
        if isinstance(obj, types.ModuleType):
            # a documented submodule, or (dptoolkit.kernels) a compiled module
            # described by name in its documented parent's docstring
            if obj.__name__ not in modules and f"``{name}``" not in (mod.__doc__ or ""):
                missing.append(name)
            continue
        listed = any(name in listed_names
                     and getattr(importlib.import_module(where), name, None) is obj
                     for where, listed_names in names.items())
        if not listed:
            missing.append(name)
    assert not missing, f"{module}: not on docs/api.rst: {missing}"


# ---------------------------------------------------------------------------
# the size of the public surface
# ---------------------------------------------------------------------------

#: At most this many names in ``__all__`` over every public module (half of the
#: surface before the engines' internals became private: 217 names over 24 modules).
MAX_PUBLIC_NAMES = 80


def _public_names():
    return [(module, name) for module in PUBLIC if module not in NOT_DOCUMENTED
            for name in getattr(importlib.import_module(module), "__all__", [])]


def test_the_public_surface_is_what_a_user_needs():
    names = _public_names()
    assert len(names) <= MAX_PUBLIC_NAMES, (
        f"{len(names)} public names (at most {MAX_PUBLIC_NAMES}): give a new one a "
        "reason to be public or keep it out of __all__")


@pytest.mark.parametrize("module, name", [
    ("dptoolkit.dsal", "prepare_problem"),         # DSAL's problem set-up
    ("dptoolkit.dsal", "inner_epoch"),             # DSAL's epochs
    ("dptoolkit.dsal", "solve"),
    ("dptoolkit.distributed", "BlockEngine"),      # the Dask engine's actors
    ("dptoolkit.distributed", "block_sum"),
    ("dptoolkit.accounting", "rdp_gaussian"),      # the theorems behind the accountant
    ("dptoolkit.accounting", "per_step_epsilon"),
    ("dptoolkit.accounting", "laplace_selector_parameters"),
    ("dptoolkit.selection", "top_k_accuracy"),     # a study metric
    ("dptoolkit.linear_model", "transform_rows"),
])
def test_engine_internals_are_not_public(module, name):
    assert name not in importlib.import_module(module).__all__
    _, listed = _documented()
    assert not any(name in names for names in listed.values()), \
        f"{name} is still listed on docs/api.rst"


def test_every_listed_name_is_public():
    """No autosummary entry names what its module does not export (a removed name's
    page would otherwise stay in the reference)."""
    _, listed = _documented()
    stale = sorted(f"{module}.{name}" for module, names in listed.items()
                   for name in names
                   if name not in getattr(importlib.import_module(module), "__all__", []))
    assert not stale, f"docs/api.rst lists names that are not public: {stale}"
