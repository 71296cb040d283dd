"""The reference stays a reference: no docstring of the package quotes a
measurement (an accuracy, a seed count, a duration, a machine load or a date).

Measurements live in ``docs/studies/`` with their command, commit and load; a
docstring says how a default is chosen and points to the study
(``:ref:`study_...```).  This test scans every module, class and function
docstring of ``dptoolkit/`` (``.py`` through :mod:`ast`, ``.pyx`` by their
triple-quoted strings) for the shapes such figures take.
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
