"""Architecture rules, checked on the source with :mod:`ast` (nothing is imported).

1. No import cycle among the modules of ``dptoolkit`` (``dptoolkit/**/*.py``).
   Every import statement counts, including those inside functions (``from . import
   x`` in a function body is still an edge of the graph: deferring an import hides a
   cycle, it does not remove it).  Implicit imports of parent packages are not
   edges (every module would otherwise be in a cycle with ``dptoolkit/__init__.py``).
2. No module imports a private (underscore-prefixed) module or name of *another*
   subpackage: ``dptoolkit.cli`` may use ``dptoolkit.dsal.prepare_problem`` but not
   ``dptoolkit.dsal._estimators`` or ``dptoolkit.linear_model._glm``.  Modules at the
   top of the package (``dptoolkit._validation``, ``dptoolkit._private``, ...) are
   the shared infrastructure of every subpackage and may be imported by all of them.
   One window is allowed: :mod:`dptoolkit.kernels` re-exports the compiled kernels
   (``*.pyx`` modules), which live beside their estimators, under documented names.
3. ``scripts/`` and ``asv_benchmarks/`` import only public names of ``dptoolkit``
   (no ``dptoolkit._x``, ``dptoolkit.x._y``, ``from dptoolkit.x import _y``).
4. Layers: every module belongs to one layer of :data:`LAYERS` (by its top-level
   module or subpackage) and imports only from its own layer or the layers below.
   This is the picture of ``docs/architecture.rst``.
5. Optional dependencies (Dask) are imported inside the functions that use them.
6. Every Python module of the package has at most :data:`MAX_LINES` lines, with no
   exception: a module a reader cannot hold in mind is split by what it does.

A known violation in code another change is rewriting is listed in ``KNOWN_*``
with the modules concerned; its test is ``xfail(strict=True)``, so it starts
failing as soon as the violation is gone and the entry must then be removed.
"""
import ast
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "dptoolkit"

#: Import cycles (as sets of modules) known to exist, with the reason they stay.
KNOWN_CYCLES = {}

#: Private imports across subpackages known to exist: (importer, imported) -> reason.
KNOWN_PRIVATE = {}

#: Private imports in scripts/ and asv_benchmarks/: (file, imported) -> reason.
KNOWN_EXTERNAL = {
    ("scripts/bench_kdda_shaped.py", "dptoolkit.linear_model._frank_wolfe._estimator"):
        "the scaling study records the naive-Bayes start and its t0 where the fit "
        "resolves them (no fitted attribute holds the start)",
    ("scripts/bench_kdda_shaped.py", "dptoolkit.linear_model._frank_wolfe._screening"):
        "the same: the study wraps start_steps to record t0",
    ("scripts/study_refresh_tol.py",
     "dptoolkit.linear_model._frank_wolfe._budget.nonprivate_fast_selector"):
        "the staleness study names the selector mechanism='auto' resolves to before "
        "its fits (the rule is internal)",
    ("scripts/study_refresh_tol.py", "dptoolkit.linear_model._sparsifier"):
        "the staleness study varies the Sparsifier's inner refresh_tol, which the "
        "estimator does not expose",
}

#: The layers of the package, bottom first: (name, top-level modules/subpackages).
LAYERS = (
    ("foundation", ("dptoolkit.exceptions", "dptoolkit._validation",
                    "dptoolkit._docstrings")),
    ("privacy primitives and data", ("dptoolkit.accounting", "dptoolkit.mechanisms",
                                     "dptoolkit.datasets", "dptoolkit.distributed")),
    ("contract", ("dptoolkit._private", "dptoolkit._private._plan", "dptoolkit._private._streams",
                  "dptoolkit._estimator")),
    ("algorithms", ("dptoolkit.linear_model", "dptoolkit.dsal", "dptoolkit.selection",
                    "dptoolkit.feature_extraction")),
    ("model selection", ("dptoolkit.model_selection", "dptoolkit.pipeline")),
    ("applications", ("dptoolkit", "dptoolkit.__main__", "dptoolkit.cli",
                      "dptoolkit._persistence", "dptoolkit.kernels")),
)

#: The one module allowed to import private compiled kernels of any subpackage.
KERNEL_WINDOW = "dptoolkit.kernels"


# ---------------------------------------------------------------------------
# the import graph
# ---------------------------------------------------------------------------

def _module_name(path):
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _package_modules():
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


MODULES = _package_modules()
#: Compiled modules (.pyx) are import targets too.
EXTENSIONS = {_module_name(p.with_suffix(".py")) for p in PACKAGE.rglob("*.pyx")}
KNOWN_MODULES = set(MODULES) | EXTENSIONS


def _imports(path, module):
    """(line, imported module, imported name or None) of every import in ``path``,
    at any depth (function bodies included)."""
    is_package = path.name == "__init__.py"
    with warnings.catch_warnings():  # escape sequences are another test's business
        warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            for alias in node.names:
                yield node.lineno, target, alias.name


def _targets(target, name):
    """The dptoolkit modules an import statement loads, and the object path it names."""
    if not target or target.split(".")[0] != "dptoolkit":
        return [], None
    if name is not None and f"{target}.{name}" in KNOWN_MODULES:
        # ``from package import module``: the package is a parent, not an edge
        return [f"{target}.{name}"], f"{target}.{name}"
    mods = [target] if target in KNOWN_MODULES else []
    return mods, target if name is None else f"{target}.{name}"


def _edges():
    """{importer: {imported module: [line numbers]}} over dptoolkit."""
    graph = {m: {} for m in MODULES}
    for module, path in MODULES.items():
        for line, target, name in _imports(path, module):
            for dep in _targets(target, name)[0]:
                if dep != module and dep in MODULES:
                    graph[module].setdefault(dep, []).append(line)
    return graph


def _cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _describe(cycle, graph):
    return "; ".join(f"{a} -> {b} (line {graph[a][b][0]})"
                     for a in sorted(cycle) for b in sorted(graph[a]) if b in cycle)


#: Packages that are top-level infrastructure split into modules (the contract),
#: not a wing: every wing uses their underscore names.
INFRASTRUCTURE_PACKAGES = {"_private"}


def _subpackage(module):
    """Second component of a dptoolkit module in a subpackage, else None (top level)."""
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in INFRASTRUCTURE_PACKAGES:
        return None
    if len(parts) >= 3 or (len(parts) == 2 and f"{module}" in MODULES
                           and MODULES[module].name == "__init__.py"):
        return parts[1]
    return None


def _is_private_path(dotted, start):
    return any(part.startswith("_") and not part.startswith("__")
               for part in dotted.split(".")[start:])


def _private_violations():
    """(importer, imported object path, line) for private imports across subpackages."""
    found = []
    for module, path in MODULES.items():
        own = _subpackage(module)
        for line, target, name in _imports(path, module):
            mods, obj = _targets(target, name)
            if obj is None:
                continue
            other = _subpackage(obj if obj in KNOWN_MODULES else target)
            if other is None or other == own:
                continue  # top-level infrastructure, or the same subpackage
            if module == KERNEL_WINDOW and obj in EXTENSIONS:
                continue  # rule 2's window: the documented names of the kernels
            if _is_private_path(obj, 2):
                found.append((module, obj, line))
    return found


def _external_files():
    for folder in ("scripts", "asv_benchmarks"):
        yield from sorted((REPO / folder).rglob("*.py"))


def _external_violations():
    """(file, imported object path, line) for private dptoolkit names outside it."""
    found = []
    for path in _external_files():
        rel = path.relative_to(REPO).as_posix()
        for line, target, name in _imports(path, "__external__.x"):
            if not target or target.split(".")[0] != "dptoolkit":
                continue
            obj = target if name is None else f"{target}.{name}"
            if _is_private_path(obj, 1):
                found.append((rel, obj, line))
    return found


GRAPH = _edges()
CYCLES = _cycles(GRAPH)
PRIVATE = _private_violations()
EXTERNAL = _external_violations()


def _known_key_matches(key, importer, obj):
    """A KNOWN entry names the importer and the imported module or object."""
    return key[0] == importer and (obj == key[1] or obj.startswith(key[1] + "."))


# ---------------------------------------------------------------------------
# the tests
# ---------------------------------------------------------------------------

def test_the_scan_sees_the_package():
    assert "dptoolkit.dsal._outer" in MODULES
    assert "dptoolkit.datasets" in MODULES
    # an import inside a function is an edge
    assert "dptoolkit.datasets" in GRAPH["dptoolkit.dsal.__main__"]


def test_no_import_cycle():
    unknown = [c for c in CYCLES if c not in KNOWN_CYCLES]
    assert not unknown, "import cycles: " + " | ".join(_describe(c, GRAPH) for c in unknown)


@pytest.mark.parametrize("cycle", [
    pytest.param(c, id="+".join(sorted(c)), marks=pytest.mark.xfail(strict=True, reason=r))
    for c, r in KNOWN_CYCLES.items()])
def test_known_cycle_is_gone(cycle):
    assert cycle not in CYCLES, _describe(cycle, GRAPH)


#: Rule 2 (inside the package) and rule 3 (scripts/, asv_benchmarks/).
_PRIVATE_RULES = {"package": (PRIVATE, KNOWN_PRIVATE), "scripts": (EXTERNAL, KNOWN_EXTERNAL)}


@pytest.mark.parametrize("rule", sorted(_PRIVATE_RULES))
def test_only_public_names_cross_boundaries(rule):
    found, known = _PRIVATE_RULES[rule]
    unknown = [v for v in found if not any(_known_key_matches(k, v[0], v[1]) for k in known)]
    assert not unknown, "\n".join(f"{a} line {ln} imports private {o}" for a, o, ln in unknown)


@pytest.mark.parametrize("rule, key", [
    pytest.param(rule, k, id=f"{k[0]}->{k[1]}", marks=pytest.mark.xfail(strict=True, reason=r))
    for rule in sorted(_PRIVATE_RULES) for k, r in _PRIVATE_RULES[rule][1].items()])
def test_known_private_import_is_gone(rule, key):
    found = _PRIVATE_RULES[rule][0]
    assert not any(_known_key_matches(key, a, o) for a, o, _ in found)


def test_rules_catch_what_they_should():
    """The predicates on small cases: private paths, subpackages, cycles."""
    assert _is_private_path("dptoolkit.dsal._estimators._SparseProxLassoBase", 2)
    assert not _is_private_path("dptoolkit.dsal.ActiveProblem", 2)
    assert _is_private_path("dptoolkit.linear_model._frank_wolfe._heap.PairingHeap", 1)
    assert not _is_private_path("dptoolkit.datasets.load_libsvm", 1)
    assert _subpackage("dptoolkit.dsal._estimators") == "dsal"
    assert _subpackage("dptoolkit.linear_model._glm._dpsgd") == "linear_model"
    assert _layer("dptoolkit.linear_model._glm._dpsgd") == 3
    assert _layer("dptoolkit") == 5 and _layer("dptoolkit.accounting.events") == 1
    assert _subpackage("dptoolkit.linear_model") == "linear_model"
    assert _subpackage("dptoolkit._validation") is None
    graph = {"a": {"b": [1]}, "b": {"c": [2]}, "c": {"a": [3]}, "d": {"a": [4]}}
    assert _cycles(graph) == [frozenset("abc")]


# ---------------------------------------------------------------------------
# rule 4: layers
# ---------------------------------------------------------------------------

def _layer(module):
    """Index in :data:`LAYERS` of the layer holding ``module`` (longest prefix)."""
    best, found = -1, None
    for index, (_, members) in enumerate(LAYERS):
        for member in members:
            if (module == member or module.startswith(member + ".")) and len(member) > best:
                best, found = len(member), index
    return found


def test_every_module_has_a_layer():
    assert not [m for m in MODULES if _layer(m) is None]


def test_imports_never_go_up_a_layer():
    upward = [f"{a} ({LAYERS[_layer(a)][0]}) line {lines[0]} imports {b} "
              f"({LAYERS[_layer(b)][0]})"
              for a, deps in GRAPH.items() for b, lines in deps.items()
              if _layer(b) > _layer(a)]
    assert not upward, "\n".join(upward)


# ---------------------------------------------------------------------------
# rule 6: file sizes
# ---------------------------------------------------------------------------

#: The most lines a Python module of the package may have.  The compiled kernels
#: (``*.pyx``) are not counted: a kernel's loops share typed locals and inline
#: helpers that another Cython module could reach only through declarations
#: (``.pxd``), so their size is the kernels' business.
MAX_LINES = 700


def _line_count(path):
    return len(path.read_text(encoding="utf-8").splitlines())


def test_every_module_is_short_enough():
    long = sorted(f"{path.relative_to(REPO).as_posix()}: {_line_count(path)} lines"
                  for path in MODULES.values() if _line_count(path) > MAX_LINES)
    assert not long, f"modules over {MAX_LINES} lines (split them by what they do):\n" + \
        "\n".join(long)


def test_the_size_rule_counts_lines(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("x = 1\n" * (MAX_LINES + 1))
    assert _line_count(path) == MAX_LINES + 1
    path.write_text("x = 1\n" * MAX_LINES)
    assert _line_count(path) == MAX_LINES


# ---------------------------------------------------------------------------
# rule 5: optional dependencies are imported where they are used
# ---------------------------------------------------------------------------

#: Packages of the optional extras (``dptoolkit[dask]``): a module imports them inside
#: the functions that need them, so ``import dptoolkit`` (and every in-memory fit)
#: works without them.
OPTIONAL = ("dask", "distributed")


def _top_level_imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in tree.body:       # module level only (not function bodies)
        names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                 [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                 else [])
        for name in names:
            yield node.lineno, name


def test_optional_dependencies_are_imported_lazily():
    eager = [f"{m} line {line} imports {name}" for m, path in MODULES.items()
             for line, name in _top_level_imports(path)
             if name.split(".")[0] in OPTIONAL]
    assert not eager, "\n".join(eager)


def test_the_scale_out_modules_are_layered():
    """The Dask loaders are data (they use the in-memory loaders, nothing above), the
    cluster options an application of the estimators."""
    assert LAYERS[_layer("dptoolkit.datasets._dask")][0] == "privacy primitives and data"
    assert set(GRAPH["dptoolkit.datasets._dask"]) <= {
        m for m in MODULES if _layer(m) <= _layer("dptoolkit.datasets")}
    assert "dptoolkit.datasets._corpora" in GRAPH["dptoolkit.datasets._dask"]
    assert "dptoolkit.cli._cluster" in GRAPH["dptoolkit.cli._commands"]
    assert "dptoolkit.cli._cluster" in GRAPH["dptoolkit.cli._parser"]


def test_distributed_holds_the_engine_and_the_wings_hold_their_rounds():
    """``distributed/`` keeps the engine's primitives (block sums, one block-actor
    engine): no algorithm's round or kernel.  Each family's Dask round and its
    compiled kernel live in its wing, which imports the engine."""
    assert not list((PACKAGE / "distributed").glob("*.pyx"))
    engine = "dptoolkit.distributed._engine"
    for wing_round in ("dptoolkit.linear_model._frank_wolfe._dask_binary",
                       "dptoolkit.linear_model._frank_wolfe._dask_multinomial",
                       "dptoolkit.linear_model._glm._dask_sgd"):
        assert wing_round in MODULES
        assert engine in GRAPH[wing_round] or "dptoolkit.distributed" in GRAPH[wing_round]
    assert (PACKAGE / "linear_model" / "_glm" / "_lot_fast.pyx").exists()
    assert (PACKAGE / "linear_model" / "_frank_wolfe" / "_fw_block_fast.pyx").exists()
    # the lot kernel takes its loss code from the GLM kernels' shared declarations
    lot = (PACKAGE / "linear_model" / "_glm" / "_lot_fast.pyx").read_text()
    assert "_glm_kernels cimport" in lot and "cdef inline double _dloss" not in lot
