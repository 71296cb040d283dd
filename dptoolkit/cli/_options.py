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
    """'one of 'auto' or a float in (0, inf)': what the option takes (the string
    choices of every model merged)."""
    strings = [v for c in constraints if isinstance(c, Options) for v in c.values]
    parts = [str(Options(*dict.fromkeys(strings)))] if strings else []
    parts += [str(c) for c in constraints if isinstance(c, Interval)]
    return " or ".join(dict.fromkeys(parts))


#: TeX in the docstrings' :math: roles, as plain text.
_TEX = {r"\le": "<=", r"\leq": "<=", r"\ge": ">=", r"\geq": ">=", r"\infty": "inf",
        r"\varepsilon": "epsilon", r"\epsilon": "epsilon", r"\lceil": "ceil(",
        r"\rceil": ")", r"\|": "||", r"\cdot": "*", r"\times": "x", r"\in": "in"}
#: Abbreviations a sentence does not end at.
_ABBREVIATIONS = ("e.g", "i.e", "eq", "Eq", "cf", "al", "vs")
#: The longest help sentence taken from a docstring (cut at a word).
_MAX_SENTENCE = 160


def _plain(tex):
    for command, text in sorted(_TEX.items(), key=lambda kv: -len(kv[0])):
        ends_word = r"(?![A-Za-z])" if command[-1].isalpha() else ""
        tex = re.sub(re.escape(command) + ends_word, lambda _m, t=text: t, tex)
    tex = re.sub(r"\\sqrt\{([^}]*)\}", r"sqrt(\1)", tex)
    tex = re.sub(r"\\(mathrm|operatorname|text|mathbf)\{([^}]*)\}", r"\2", tex)
    return re.sub(r"\\([A-Za-z]+)", r"\1", tex).replace("{", "").replace("}", "")


def _sentence(text):
    """The first sentence of ``text`` (not cut at an abbreviation), at most
    :data:`_MAX_SENTENCE` characters."""
    for m in re.finditer(r"\.(?:\s|$)", text):
        before = text[:m.start()]
        if not before.endswith(_ABBREVIATIONS):
            text = before
            break
    if len(text) > _MAX_SENTENCE:
        text = text[:_MAX_SENTENCE].rsplit(" ", 1)[0] + " ..."
    return text


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
            text = re.sub(r":math:`([^`]*)`", lambda m: _plain(m.group(1)), text)
            text = re.sub(r":\w+:`~?([^`]*)`", lambda m: m.group(1).rsplit(".", 1)[-1], text)
            return _sentence(text.replace("``", "").replace("`", "").replace("\\", ""))
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
