"""The argument parser of the command line: options, their types and defaults."""
import argparse
import math
import sys
from pathlib import Path

from . import _models, _options
from ._models import DEFAULT_MODEL, SEARCH_GRIDS
from ._cluster import add_cluster_options

# argument types (argparse reports "argument --flag: <message>", exit status 2)
# ---------------------------------------------------------------------------

def _float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if math.isnan(value):
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}")
    return value


def _positive_float(text):
    value = _float(text)
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def _open_unit(text):
    value = _float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in the open interval (0, 1), got {text!r}")
    return value


#: Largest integer option (int64, what the kernels and NumPy take).
_MAX_INT = 2**63 - 1
#: Largest number of features or synthetic rows (LIBSVM feature indices and the
#: synthetic generator stop at 2**31 - 1).
_MAX_SIZE = 2**31 - 1


def _int_in(text, low, high, high_text):
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise argparse.ArgumentTypeError(f"must be an integer in [{low}, {high_text}], "
                                         f"got {text!r}")
    return value


def _positive_int(text):
    return _int_in(text, 1, _MAX_INT, "2**63 - 1")


def _size_int(text):
    return _int_in(text, 1, _MAX_SIZE, "2**31 - 1")


def _seed(text):
    return _int_in(text, 0, 2**128 - 1, "2**128 - 1")


def _label(text):
    value = _float(text)
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number (a label of the LIBSVM "
                                         f"file), got {text!r}")
    return value


def _n_runs(text):
    value = _positive_float(text)
    if value <= 1:
        raise argparse.ArgumentTypeError(f"must be > 1 (a mean number of runs), got {text!r}")
    return value


def _grid_value(text):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"None": None, "True": True, "False": False}.get(text, text)


def _grid_item(text):
    name, sep, values = text.partition("=")
    name = name.strip().replace("-", "_")
    items = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not name or not items:
        raise argparse.ArgumentTypeError(f"must be NAME=V1,V2,..., got {text!r}")
    if name in ("epsilon", "delta", "accountant", "random_state"):
        raise argparse.ArgumentTypeError(f"{name} cannot be searched (the search sets it)")
    return name, [_grid_value(v) for v in items]


# ---------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------

def _flag(dest):
    return "--" + dest.replace("_", "-")


def _default_text(dest):
    """'(default: ...)' of an estimator option, per model when they differ."""
    by_model = {}
    for name, spec in _models.models().items():
        param = spec.params.get(dest)
        if param is None:
            continue
        cls = spec.cls
        if dest == "k" and name == "select-then-fit":
            cls = _models.DPSIS
        elif dest == "selection_share" and name == "select-then-fit":
            cls = _models.PrivateSelectThenFit
        by_model[name] = _models.default_of(cls, param)
    values = {repr(v) for v in by_model.values()}
    if len(values) == 1:
        return f"{', '.join(by_model)} (default: {next(iter(by_model.values()))!r})"
    return ", ".join(f"{n} (default: {v!r})" for n, v in by_model.items())


def _add_data_options(p, *, train, labels=True):
    p.add_argument("--data", help="LIBSVM file (plain, .bz2, .gz) or text corpus (folder, "
                                  "tar archive or label<TAB>text file: IMDB, 20news-bydate, "
                                  "Reuters-21578, review polarity, Enron-spam, SMS spam)"
                   + ("; without it, a synthetic sparse problem" if train else ""),
                   required=not train)
    if train:
        p.add_argument("--n-features", type=_size_int, default=None,
                       help="number of features D, a public constant: a LIBSVM file's "
                            "dimension (required: never inferred from the data), or the "
                            "hashed dimension of a text corpus (default: the loader's, "
                            f"{_data_default()})")
    if labels:
        p.add_argument("--classes", type=_label, nargs="+", default=None, metavar="LABEL",
                       help="LIBSVM file: the labels of the task, a public constant, in class "
                            "order (e.g. --classes 1 2); a label outside them is an error.  "
                            "Default: the public binary convention, -1 or 0 negative (class "
                            "0) and +1 positive (class 1)")
    p.add_argument("--positive", help="corpora: positive group(s), names or prefixes, "
                                      "comma-separated (binary task); default: all groups")
    p.add_argument("--negative", help="corpora: negative group(s) (default: the other "
                                      "groups when --positive is given)")
    p.add_argument("--cache-dir", default=None,
                   help="folder where corpus archives are extracted once (default: "
                        "the loader's: $DPTOOLKIT_CACHE, else $XDG_CACHE_HOME/dptoolkit, "
                        "else ~/.cache/dptoolkit)")


def _data_default():
    from ._data import CORPUS_N_FEATURES
    return CORPUS_N_FEATURES


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows "(default: ...)" unless the help states the default or there is none."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


def build_parser():
    """The argument parser of ``python -m dptoolkit``."""
    fmt = _HelpFormatter
    script = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    parser = argparse.ArgumentParser(
        prog="dptoolkit" if script == "dptoolkit" else "python -m dptoolkit",
        description="dptoolkit: differentially private "
        "learning on sparse data.  Options an estimator takes default to the "
        "estimator's own defaults.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    tr = sub.add_parser("train", formatter_class=fmt, help="train a private classifier",
                        description="Train a classifier (private with --epsilon E, or "
                                    "without privacy with --non-private: one of the two "
                                    "is required), evaluate it on held-out data, print "
                                    "the privacy guarantee.")
    _add_model_option(tr)
    _add_data_options(tr, train=True)
    grp = tr.add_mutually_exclusive_group()
    grp.add_argument("--test", help="LIBSVM test file (LIBSVM --data only)")
    _add_split_options(grp, tr, test_size_help="expected held-out fraction of the random "
                       "split made when there is no test set (default: 0.25)",
                       split_seed_help="seed of that split and of the synthetic problem: "
                       "public, not noise (default: 0)")
    tr.add_argument("--synthetic-samples", type=_size_int, default=None,
                    help="rows of the synthetic problem (no --data; default: 20000)")
    tr.add_argument("--synthetic-features", type=_size_int, default=None,
                    help="columns of the synthetic problem (no --data; default: 200000)")
    tr.add_argument("--seed", type=_seed, default=None,
                    help="seed of the mechanisms' noise; default: fresh OS entropy on "
                         "every run.  With a seed the noise is reproducible by anyone who "
                         "knows it (a warning says so): for tests and debugging only")
    _add_privacy_options(tr, train=True)
    _add_estimator_options(tr)
    _add_composite_options(tr)
    tr.add_argument("--save", metavar="PATH", help="write the fitted model (skops format)")
    tr.add_argument("--report", metavar="PATH", help="write a JSON report "
                                                     "(dptoolkit/cli/report_schema.json)")
    tr.add_argument("--nonprivate-stats", action="store_true",
                    help="also print (and report) figures computed from the training data "
                         "without privacy: training size, non-zeros, class counts, "
                         "training accuracy, timings; labelled as outside the guarantee "
                         "(always shown for a non-private fit)")
    _add_verbose_option(tr, "the fit (Frank-Wolfe's iterations, else the elapsed "
                            "time of the fit; a search shows one fixed line) and the "
                            "reading of a corpus")
    add_cluster_options(tr)

    pr = sub.add_parser("predict", formatter_class=fmt, help="predict with a saved model",
                        description="Write the predictions of a saved model as CSV "
                                    "(index,prediction[,score]).")
    pr.add_argument("--model-file", required=True, help="model written by train --save")
    _add_data_options(pr, train=False, labels=False)
    _add_subset_options(pr)
    pr.add_argument("--output", metavar="PATH", default=None,
                    help="CSV file (default: standard output)")
    _add_verbose_option(pr, "the reading of a corpus")

    ev = sub.add_parser("evaluate", formatter_class=fmt, help="score a saved model",
                        description="Print the accuracy and AUC of a saved model.")
    ev.add_argument("--model-file", required=True, help="model written by train --save")
    _add_data_options(ev, train=False)
    _add_subset_options(ev)
    ev.add_argument("--report", metavar="PATH", help="write a JSON report")
    _add_verbose_option(ev, "the reading of a corpus")

    ac = sub.add_parser("account", formatter_class=fmt,
                        help="the privacy guarantee of a configuration, without data",
                        description="Print the (epsilon, delta) guarantee of a model "
                                    "configuration and how it is spent (per-step "
                                    "epsilon, steps, composition, noise multipliers) for "
                                    "a dataset of the given shape; no data is read.")
    _add_model_option(ac)
    ac.add_argument("--n-samples", type=_positive_int, required=True,
                    help="number of training examples N (treated as public)")
    ac.add_argument("--n-features", type=_size_int, required=True,
                    help="number of features D")
    ac.add_argument("--n-classes", type=_positive_int, default=2, help="number of classes")
    _add_privacy_options(ac, train=False)
    _add_estimator_options(ac)
    _add_composite_options(ac)
    ac.set_defaults(verbose=None, seed=None)
    return parser


def _verbosity(text):
    return _int_in(text, 0, 100, "100")


def _add_verbose_option(p, what):
    p.add_argument("--verbose", type=_verbosity, default=None,
                   help=f"progress bars on stderr when > 0, of {what}; they never change "
                        "the results (default: 1 when stderr is a terminal, else 0)")


def _add_subset_options(p):
    p.add_argument("--subset", choices=("train", "test", "all"), default=None,
                   help="examples to score: a corpus's own split, else the part of the "
                        "random split train makes (--test-size, --split-seed); default: "
                        "test for a corpus, all for a LIBSVM file")
    _add_split_options(p, p, test_size_help="held-out fraction of that split, as given to "
                       "train (default: 0.25)",
                       split_seed_help="seed of that split, as given to train (default: 0)")


def _add_split_options(test_size_to, split_seed_to, *, test_size_help, split_seed_help):
    """--test-size and --split-seed, the random split train makes and the commands
    that score a LIBSVM file repeat (one type and default for both)."""
    test_size_to.add_argument("--test-size", type=_open_unit, default=None,
                              help=test_size_help)
    split_seed_to.add_argument("--split-seed", type=_seed, default=None,
                               help=split_seed_help)


def _search_cls():
    from ..model_selection import PrivateHyperparameterSearch
    return PrivateHyperparameterSearch


def _add_model_option(p):
    names = _models.model_names()
    p.add_argument("--model", default="default", choices=names, metavar="NAME",
                   help="one of " + ", ".join(names) + f" ('default' is the best "
                        f"private sparse model, now {DEFAULT_MODEL}, for any number of "
                        "classes): " + "; ".join(f"{n}: {s.description}".replace("%", "%%")
                                                 for n, s in _models.models().items()))


def _add_composite_options(parser):
    """The options of select-then-fit and of the search (``train`` and ``account``)."""
    parser.add_argument("--search-model", choices=_models.searchable(), default=None,
                        help=f"search: the model searched (default: {DEFAULT_MODEL})")
    parser.add_argument("--grid", type=_grid_item, action="append", default=None,
                        metavar="NAME=V1,V2",
                        help="search: a hyper-parameter and its candidate values (repeat "
                             "for several); default grids: " + "; ".join(
                                 f"{m}: {g}" for m, g in SEARCH_GRIDS.items()))
    parser.add_argument("--n-runs", type=_n_runs, default=None,
                        help="search: mean number of private runs (default: the search's, "
                             f"{_models.default_of(_search_cls(), 'n_runs')})")


def _add_privacy_options(p, *, train):
    p.add_argument("--epsilon", type=_positive_float, default=None,
                   help="total privacy budget epsilon > 0 (required" +
                        (", unless --non-private is given" if train else "") + ")")
    if train:
        p.add_argument("--non-private", action="store_true",
                       help="fit without privacy (no noise, nothing protects the training "
                            "data); instead of --epsilon, which it excludes; not for "
                            "select-then-fit and search, which are private only")
    p.add_argument("--delta", type=_open_unit, default=None,
                   help="delta in (0, 1) of the guarantee; default: the model's (" +
                        _model_defaults("delta", "none, i.e. pure DP") + "); without "
                        "a delta, frank-wolfe is pure DP with basic composition of its "
                        "steps: far less accurate")


def _model_defaults(param, none_text):
    """'model: default' for the models whose estimator has ``param``."""
    parts = []
    for name, spec in _models.models().items():
        if spec.cls is None or name == "select-then-fit":
            continue
        value = _models.default_of(spec.cls, param)
        parts.append(f"{name}: {none_text if value is None else repr(value)}")
    return "; ".join(parts)


def _add_estimator_options(p):
    """One option per estimator parameter of the models (generated from their
    constraint tables: :mod:`dptoolkit.cli._options`)."""
    for dest, kw, text in _options.option_table():
        p.add_argument(_flag(dest), dest=dest, default=None,
                       help=f"{text}; applies to {_default_text(dest)}", **kw)


# ---------------------------------------------------------------------------
# validation before any data is read
# ---------------------------------------------------------------------------
