"""The reference stays a reference: no docstring of the package quotes a
measurement (an accuracy, a seed count, a duration, a machine load or a date).

Measurements live in ``docs/studies/`` with their command, commit and load; a
docstring says how a default is chosen and points to the study
(``:ref:`study_...```).  This test scans every module, class and function
docstring of ``dptoolkit/`` (``.py`` through :mod:`ast`, ``.pyx`` by their
triple-quoted strings) for the shapes such figures take.

The narrative pages are read the same way: the docs' front page and top-level
pages, the tutorials and the User Guide say what the library does and point to
the studies for the figures; they hold no date, machine load, seed count or
quoted accuracy.
"""
import ast
import pathlib
import re

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "dptoolkit"

#: What a measurement looks like in prose (formulas such as ``(2 s^2)`` or
#: ``Phi(1/(2s))`` do not match).
PATTERNS = {
    "a seed count": re.compile(r"\b\d+ seeds\b|\bseeds \d"),
    "a machine load": re.compile(r"\bload(?: average)? (?:of |below |about )?\d"),
    "a date": re.compile(r"\b20\d\d-\d\d-\d\d\b"),
    "a wall time": re.compile(r"\bof wall time\b|on the shared machine"),
    "a duration": re.compile(r"(?<![\w^(/])\d+(?:\.\d+)? ?(?:ms|min|seconds)\b|(?<![\w^(/])\d+(?:\.\d+)? s\b(?![\^)])"),
    "an accuracy": re.compile(r"\b(?:accuracy|reached|reaches|majority(?: class)?)\b[^.]{0,40}\b0\.\d{2,3}\b"),
}


def _docstrings(path):
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    yield doc
    else:
        for match in re.finditer(r'"""(.*?)"""', text, re.S):
            yield match.group(1)


FILES = sorted(p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".pyx"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_measurement_in_docstrings(path):
    found = []
    for doc in _docstrings(path):
        for what, pattern in PATTERNS.items():
            for m in pattern.finditer(doc):
                found.append(f"{what}: ...{doc[max(0, m.start() - 40):m.end() + 20]!r}...")
    assert not found, "measurements belong in docs/studies/:\n" + "\n".join(found)


def test_the_scan_finds_a_measurement():
    """The patterns are not vacuous: each flags a sentence of the kind removed."""
    samples = {
        "a seed count": "0.80 at epsilon 1 (16 seeds)",
        "a machine load": "measured at load 0.7",
        "a date": "run on 2026-11-27",
        "a wall time": "in 50-90 s of wall time",
        "a duration": "a step took 1.8 ms",
        "an accuracy": "reached 0.888 test accuracy",
    }
    for what, text in samples.items():
        assert PATTERNS[what].search(text), what
    assert not PATTERNS["a duration"].search("e^((i^2-i)/(2 s^2)) Phi(1/(2s) - eps s)")


# ---------------------------------------------------------------------------
# The narrative pages (docs/*.rst, docs/tutorials/, docs/user_guide/)
# ---------------------------------------------------------------------------

DOCS = PACKAGE.parent / "docs"
NARRATIVE = sorted([*DOCS.glob("*.rst"), *DOCS.glob("tutorials/*.rst"), *DOCS.glob("user_guide/*.rst")])

#: A measurement's context in prose.  The machine-load pattern is narrower than
#: the docstrings' one: a command's output may print ``load 2.15 s`` (the time
#: taken to load the data); durations are not scanned (``it waits 10 s``).
NARRATIVE_PATTERNS = {
    "a date": PATTERNS["a date"],
    "a seed count": PATTERNS["a seed count"],
    "an accuracy": PATTERNS["an accuracy"],
    "a machine load": re.compile(r"\bload average\b|\b1-minute load\b|\bmachine load\b"
                                 r"|\bat (?:a )?load (?:of )?\d", re.IGNORECASE),
}


def _measurements_in(text):
    return [f"{what}: ...{text[max(0, m.start() - 40):m.end() + 20]!r}..."
            for what, pattern in NARRATIVE_PATTERNS.items() for m in pattern.finditer(text)]


def test_the_narrative_pages_are_found():
    names = {p.relative_to(DOCS).as_posix() for p in NARRATIVE}
    assert {"index.rst", "tutorials/distributed.rst", "tutorials/frank_wolfe.rst"} <= names


@pytest.mark.parametrize("path", NARRATIVE, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_no_measurement_in_narrative_pages(path):
    found = _measurements_in(path.read_text(encoding="utf-8"))
    assert not found, (f"measurements belong in docs/studies/ (link them with :doc: or :ref:), "
                       f"{path.relative_to(DOCS).as_posix()}:\n" + "\n".join(found))


def test_the_narrative_scan_finds_a_measurement():
    """Sentences of the kind moved to the studies are flagged; a command's
    output and a time-out are not."""
    flagged = [
        "machine shared with other jobs, 1-minute load 2.0 to 2.2",
        "(times from one run on the shared two-core machine, load average 5.4)",
        "2.75x the in-memory fit at load 0.3 to 0.4",
        "``scripts/bench_multinomial_dask.py``, 2026-11-27): the",
        "test accuracy over 5 seeds (majority class 0.551)",
        "print(clf.score(X_test, y_test))   # held-out accuracy, about 0.81",
    ]
    for text in flagged:
        assert _measurements_in(text), text
    assert _measurements_in("the Dask fit took 1.28x at a load of 0.9")
    for text in ["it waits 10 s for the scheduler, then stops",
                 "      load 2.15 s, fit 3.10 s, predict 0.03 s",
                 "test accuracy 0.8502   AUC 0.9015   on 16281 held-out examples",
                 "split with ``--test-size``, default 0.25, and ``--split-seed``, default 0"]:
        assert not _measurements_in(text), text
