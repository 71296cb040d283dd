"""The gallery teaches the public API only: every ``from dptoolkit... import name``
in docs/examples/ names a public module (no ``_`` segment) and, where the module
declares ``__all__``, a name in it (or a public submodule)."""
import ast
import importlib
import importlib.util
import pathlib

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parents[1] / "docs" / "examples").glob("*.py"))


def _imports(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dptoolkit"):
            for alias in node.names:
                yield node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("dptoolkit"):
                    yield alias.name, None


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_import_public_names(path):
    bad = []
    for module_name, name in _imports(path):
        if any(part.startswith("_") for part in module_name.split(".")):
            bad.append(f"{module_name} (a private module)")
            continue
        if name is None:
            continue
        module = importlib.import_module(module_name)
        public = getattr(module, "__all__", None)
        is_submodule = (hasattr(module, "__path__")
                        and importlib.util.find_spec(f"{module_name}.{name}") is not None)
        if public is not None and name not in public and not is_submodule:
            bad.append(f"{module_name}.{name} (not in __all__)")
    assert not bad, f"{path.name} teaches non-public names: {bad}"
