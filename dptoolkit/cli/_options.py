"""The estimator options of the command line, generated from the constraint tables.

Each parameter :func:`dptoolkit.cli._models.cli_parameters` offers becomes the
option ``--name-of-the-parameter``.  Its type, choices and range are read from
the ``_parameter_constraints`` of the models that take it (a union when several
do: the estimator checks its own range again when it is built), its help from
the first sentence of the parameter's entry in the class docstring (numpydoc,
when installed) or from :data:`_HELP` where the command line has more to say.
"""
import argparse
import re
import warnings

from .._validation import Boolean, Interval, Options
from . import _models

#: Help sentences the command line states itself (they say more than the
#: estimator's docstring does about the command line's use of the parameter).
_HELP = {
    "n_samples_public":
        "public size N of the training data (after a random split, about (1 - test size) "
        "x the file's public size); without it a private fit takes N from the data with "
        "a PrivacyLeakWarning, and its add/remove guarantee then covers only neighbours "
        "of the same size",
}


def _constraints(dest):
    """The constraints on parameter ``dest`` over the models that take it, and the
    classes that do."""
    constraints, classes = [], []
    for spec in _models.models().values():
        if spec.cls is not None and dest in spec.params and spec.cls not in classes:
            classes.append(spec.cls)
            constraints.extend(c for c in spec.cls._parameter_constraints[spec.params[dest]]
                               if c is not None)
    return constraints, classes


def _expected(constraints):
    """'one of 'auto' or a float in (0, inf)': what the option takes."""
    seen = {}
    for c in constraints:
        if not isinstance(c, Boolean):
            seen.setdefault(str(c), None)
    return " or ".join(seen)


def _converter(strings, intervals, expected):
    """The argparse ``type`` of an option: a string choice, else an int (where an
    int range takes it), else a float, inside one of the ranges."""
    casts = ([int] if any(i.kind == "int" for i in intervals) else []) + (
        [float] if any(i.kind == "real" for i in intervals) else [])

    def convert(text):
        if text in strings:
            return text
        for cast in casts:
            try:
                value = cast(text)
            except ValueError:
                continue
            if any(i.is_satisfied_by(value) for i in intervals):
                return value
        raise argparse.ArgumentTypeError(f"must be {expected}, got {text!r}")

    return convert


def _first_sentence(cls, param):
    """The first sentence of ``param``'s entry in the docstring of ``cls`` (plain
    text), or "" (numpydoc not installed, or no entry)."""
    try:
        from numpydoc.docscrape import NumpyDocString
    except ImportError:
        return ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            doc = NumpyDocString(cls.__doc__ or "")
        except Exception:   # a docstring numpydoc cannot read: no sentence
            return ""
    for entry in doc["Parameters"]:
        if param in [n.strip() for n in entry.name.split(",")]:
            text = " ".join(" ".join(entry.desc).split())
            text = re.sub(r":\w+:`~?([^`]*)`", lambda m: m.group(1).rsplit(".", 1)[-1], text)
            text = text.replace("``", "").replace("`", "").replace("\\", "")
            first = re.split(r"(?<=[a-z0-9)\]])\.(?:\s|$)", text, maxsplit=1)[0]
            return first
    return ""


def option_table():
    """``[(dest, add_argument keywords, help sentence), ...]`` of the estimator
    options, in order of first appearance over the models."""
    table = []
    for dest in _models.option_dests():
        if dest in _models._EXTRA:
            continue
        constraints, classes = _constraints(dest)
        strings = [v for c in constraints if isinstance(c, Options) for v in c.values]
        intervals = [c for c in constraints if isinstance(c, Interval)]
        expected = _expected(constraints)
        if constraints and all(isinstance(c, Boolean) for c in constraints):
            kw = {"action": argparse.BooleanOptionalAction}
            expected = "a bool"
        elif intervals:
            kw = {"type": _converter(tuple(dict.fromkeys(strings)), intervals, expected),
                  "metavar": dest.upper()}
        else:
            kw = {"type": str, "choices": tuple(dict.fromkeys(strings))}
        sentence = _HELP.get(dest) or next(
            (s for s in (_first_sentence(c, dest) for c in classes) if s), "")
        text = f"{sentence}: {expected}" if sentence else expected
        table.append((dest, kw, text.replace("%", "%%")))
    return table
