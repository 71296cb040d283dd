"""Command line of dptoolkit: ``python -m dptoolkit`` (or ``dptoolkit``).

Subcommands
-----------
``train``
    Fit a private classifier (``--model``) on a LIBSVM file, a text corpus
    (folder or tar archive, hashed to binary features) or, without ``--data``,
    a synthetic sparse problem; print test accuracy, AUC, non-zeros, timings and
    the privacy guarantee; optionally ``--save`` the model (skops) and write a
    JSON ``--report``.
``predict``
    Load a saved model and write its predictions on ``--data`` (CSV).
``evaluate``
    Load a saved model and print its accuracy and AUC on ``--data``
    (optionally a JSON ``--report``).
``account``
    Print the (epsilon, delta) guarantee, and how it is spent, of a model
    configuration for a dataset of a given size, without any data.

Every argument is checked before any data is read; usage errors exit with
status 2 and a message naming the option.  Options an estimator takes are
passed to it only when given, so the defaults are the estimators' own (shown
by ``--help``).  The report follows ``dptoolkit/report_schema.json``.
"""
import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from . import _models
from ._models import DEFAULT_MODEL, MODEL_NAMES, MODELS, SEARCHABLE, SEARCH_GRIDS

__all__ = ["main", "build_parser", "DEFAULT_MODEL"]


# ---------------------------------------------------------------------------
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


def _nonnegative_float(text):
    value = _float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0 (inf allowed), got {text!r}")
    return value


def _open_unit(text):
    value = _float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in the open interval (0, 1), got {text!r}")
    return value


def _unit_closed(text):
    value = _float(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text!r}")
    return value


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def _int_or_auto(text):
    return "auto" if text == "auto" else _positive_int(text)


def _float_or_auto(text):
    return "auto" if text == "auto" else _positive_float(text)


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

#: Estimator options: (dest, type, choices, help).  The models each applies to and
#: their defaults are read from :data:`dptoolkit.cli._models.MODELS`.
_ESTIMATOR_OPTIONS = [
    ("l1_bound", _positive_float, None, "radius lambda of the L1 ball"),
    ("max_iter", _int_or_auto, None, "iterations T ('auto' where the model allows it)"),
    ("solver", str, ("fast", "standard"), "Frank-Wolfe solver"),
    ("selector", str, None, "vertex selector of Frank-Wolfe (see the estimator's docs: "
                            "grouped, exponential, noisy_max, laplace, argmax, ...)"),
    ("refresh_tol", _nonnegative_float, None, "staleness bound rho of the fast solver "
                                              "(inf: the paper's Algorithm 2)"),
    ("accounting", str, ("auto", "zcdp", "advanced"), "composition of the Frank-Wolfe steps"),
    ("neighbouring", str, ("add_remove", "replace_one"), "neighbouring relation"),
    ("n_samples_public", _positive_int, None,
     "public dataset size N (otherwise N is taken from the data, with a warning)"),
    ("epsilon_count", _positive_float, None, "budget of the private non-zero count"),
    ("nonprivate_max_iter", _positive_int, None, "iterations of the non-private fit "
                                                 "whose non-zeros are counted"),
    ("loss", str, ("logistic", "hinge"), "loss"),
    ("alpha", _positive_float, None, "L2 regularisation lambda"),
    ("learning_rate", _float_or_auto, None, "step size"),
    ("batch_size", _int_or_auto, None, "expected mini-batch size"),
    ("clip", _float_or_auto, None, "clipping bound of the per-example updates"),
    ("n_epochs", _positive_float, None, "passes over the data"),
    ("variant", str, ("dual", "primal", "sequential"), "DP-SCD variant"),
    ("sparsity", _positive_int, None, "non-zeros kept by hard thresholding"),
    ("n_features_kept", _positive_int, None, "features kept by the private release"),
    ("release_fraction", _open_unit, None, "share of the budget of the private release"),
    ("sampling_rate", _unit_closed, None, "Poisson sampling rate of DP-SGD"),
    ("averaging_fraction", _unit_closed, None, "share of the last iterates averaged"),
    ("k", _positive_int, None, "features DP-SIS selects"),
]


def _flag(dest):
    return "--" + dest.replace("_", "-")


def _default_text(dest):
    """'(default: ...)' of an estimator option, per model when they differ."""
    by_model = {}
    for name, spec in MODELS.items():
        param = spec.params.get(dest)
        if param is None:
            continue
        cls = spec.cls
        if dest == "k" and name == "select-then-fit":
            from ..selection import DPSIS
            cls = DPSIS
        by_model[name] = _models.default_of(cls, param)
    values = {repr(v) for v in by_model.values()}
    if len(values) == 1:
        return f"{', '.join(by_model)} (default: {next(iter(by_model.values()))!r})"
    return ", ".join(f"{n} (default: {v!r})" for n, v in by_model.items())


def _add_data_options(p, *, train):
    p.add_argument("--data", help="LIBSVM file (plain, .bz2, .gz) or text corpus (folder "
                                  "or tar archive: IMDB, 20news-bydate, review polarity)"
                   + ("; without it, a synthetic sparse problem" if train else ""),
                   required=not train)
    if train:
        p.add_argument("--n-features", type=_positive_int, default=None,
                       help="text corpora: hashed features (default: the loader's, "
                            f"{_data_default()})")
    p.add_argument("--positive", help="20news: positive group(s), names or prefixes, "
                                      "comma-separated (binary task); default: all groups")
    p.add_argument("--negative", help="20news: negative group(s) (default: the other "
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
                        description="Train a classifier (private with --epsilon), evaluate "
                                    "it on held-out data, print the privacy guarantee.")
    _add_model_option(tr)
    _add_data_options(tr, train=True)
    grp = tr.add_mutually_exclusive_group()
    grp.add_argument("--test", help="LIBSVM test file (LIBSVM --data only)")
    grp.add_argument("--test-size", type=_open_unit, default=None,
                     help="held-out fraction when there is no test set (default: 0.25)")
    tr.add_argument("--n-features-libsvm", type=_positive_int, default=None,
                    help="number of features of a LIBSVM file (default: inferred)")
    tr.add_argument("--synthetic-samples", type=_positive_int, default=None,
                    help="rows of the synthetic problem (no --data; default: 20000)")
    tr.add_argument("--synthetic-features", type=_positive_int, default=None,
                    help="columns of the synthetic problem (no --data; default: 200000)")
    tr.add_argument("--seed", type=int, default=0,
                    help="seed of the data split and of the mechanisms' noise")
    _add_privacy_options(tr)
    _add_estimator_options(tr)
    tr.add_argument("--select-fraction", type=_open_unit, default=None,
                    help="select-then-fit: share of --epsilon spent by DP-SIS "
                         f"(default: {_models.SELECT_FRACTION})")
    tr.add_argument("--search-model", choices=SEARCHABLE, default=None,
                    help=f"search: the model searched (default: {DEFAULT_MODEL})")
    tr.add_argument("--grid", type=_grid_item, action="append", default=None,
                    metavar="NAME=V1,V2",
                    help="search: a hyper-parameter and its candidate values (repeat for "
                         "several); default grids: " + "; ".join(
                             f"{m}: {g}" for m, g in SEARCH_GRIDS.items()))
    tr.add_argument("--n-runs", type=_n_runs, default=None,
                    help="search: mean number of private runs (default: the search's, "
                         f"{_models.default_of(_search_cls(), 'n_runs')})")
    tr.add_argument("--save", metavar="PATH", help="write the fitted model (skops format)")
    tr.add_argument("--report", metavar="PATH", help="write a JSON report "
                                                     "(dptoolkit/report_schema.json)")
    tr.add_argument("--verbose", type=int, default=None,
                    help="progress bar (models that have one) when > 0 (default: 1 "
                         "when stderr is a terminal, else 0)")

    pr = sub.add_parser("predict", formatter_class=fmt, help="predict with a saved model",
                        description="Write the predictions of a saved model as CSV "
                                    "(index,prediction[,score]).")
    pr.add_argument("--model-file", required=True, help="model written by train --save")
    _add_data_options(pr, train=False)
    _add_subset_options(pr)
    pr.add_argument("--output", metavar="PATH", default=None,
                    help="CSV file (default: standard output)")

    ev = sub.add_parser("evaluate", formatter_class=fmt, help="score a saved model",
                        description="Print the accuracy and AUC of a saved model.")
    ev.add_argument("--model-file", required=True, help="model written by train --save")
    _add_data_options(ev, train=False)
    _add_subset_options(ev)
    ev.add_argument("--report", metavar="PATH", help="write a JSON report")

    ac = sub.add_parser("account", formatter_class=fmt,
                        help="the privacy guarantee of a configuration, without data",
                        description="Print the (epsilon, delta) guarantee of a model "
                                    "configuration and how it is spent (per-step "
                                    "epsilon, steps, composition, noise multipliers) for "
                                    "a dataset of the given shape; no data is read.")
    _add_model_option(ac)
    ac.add_argument("--n-samples", type=_positive_int, required=True,
                    help="number of training examples N (treated as public)")
    ac.add_argument("--n-features", type=_positive_int, required=True,
                    help="number of features D")
    ac.add_argument("--n-classes", type=_positive_int, default=2, help="number of classes")
    _add_privacy_options(ac)
    _add_estimator_options(ac)
    ac.add_argument("--select-fraction", type=_open_unit, default=None,
                    help="select-then-fit: share of --epsilon spent by DP-SIS "
                         f"(default: {_models.SELECT_FRACTION})")
    ac.add_argument("--search-model", choices=SEARCHABLE, default=None,
                    help=f"search: the model searched (default: {DEFAULT_MODEL})")
    ac.add_argument("--grid", type=_grid_item, action="append", default=None,
                    metavar="NAME=V1,V2", help="search: a hyper-parameter and its values")
    ac.add_argument("--n-runs", type=_n_runs, default=None,
                    help="search: mean number of private runs")
    ac.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    ac.set_defaults(verbose=None)
    return parser


def _add_subset_options(p):
    p.add_argument("--subset", choices=("train", "test", "all"), default=None,
                   help="examples to score: a corpus's own split, else the part of the "
                        "random split train makes (--test-size, --seed); default: test for "
                        "a corpus, all for a LIBSVM file")
    p.add_argument("--test-size", type=_open_unit, default=None,
                   help="held-out fraction of that split, as given to train (default: "
                        "0.25)")
    p.add_argument("--seed", type=int, default=0, help="seed of that split, as given to "
                                                       "train")


def _search_cls():
    from ..model_selection import PrivateHyperparameterSearch
    return PrivateHyperparameterSearch


def _add_model_option(p):
    p.add_argument("--model", default="default", choices=MODEL_NAMES, metavar="NAME",
                   help="one of " + ", ".join(MODEL_NAMES) + f" ('default' is the best "
                        f"private sparse model, now {DEFAULT_MODEL}; "
                        f"{_models.DEFAULT_MULTICLASS_MODEL} for more than two classes): " + "; ".join(
                            f"{n}: {s.description}" for n, s in MODELS.items()))


def _add_privacy_options(p):
    p.add_argument("--epsilon", type=_positive_float, default=None,
                   help="total privacy budget epsilon > 0; default: the model's (" +
                        _model_defaults("epsilon", "none, i.e. a non-private fit") +
                        "); required by select-then-fit and search")
    p.add_argument("--delta", type=_open_unit, default=None,
                   help="delta in (0, 1) of the guarantee; default: the model's (" +
                        _model_defaults("delta", "none, i.e. pure DP") + ")")


def _model_defaults(param, none_text):
    """'model: default' for the models whose estimator has ``param``."""
    parts = []
    for name, spec in MODELS.items():
        if spec.cls is None or name == "select-then-fit":
            continue
        value = _models.default_of(spec.cls, param)
        parts.append(f"{name}: {none_text if value is None else repr(value)}")
    return "; ".join(parts)


def _add_estimator_options(p):
    for dest, typ, choices, text in _ESTIMATOR_OPTIONS:
        p.add_argument(_flag(dest), dest=dest, type=typ, choices=choices, default=None,
                       help=f"{text}; applies to {_default_text(dest)}")


# ---------------------------------------------------------------------------
# validation before any data is read
# ---------------------------------------------------------------------------

class UsageError(Exception):
    """A bad command line (exit status 2)."""


def _check_path(flag, path, *, folder_ok=False):
    p = Path(path)
    if folder_ok and p.is_dir():
        return
    if not p.is_file():
        raise UsageError(f"{flag}: no such file{' or folder' if folder_ok else ''}: {path}")


def _check_out_path(flag, path):
    parent = Path(path).resolve().parent
    if not parent.is_dir():
        raise UsageError(f"{flag}: folder {parent} does not exist")
    if Path(path).is_dir():
        raise UsageError(f"{flag}: {path} is a folder")


def _check_model_options(args):
    model = _models.resolve_model(args.model)
    dests = [d for d, *_ in _ESTIMATOR_OPTIONS] + ["select_fraction", "search_model",
                                                    "grid", "n_runs"]
    for dest in dests:
        if getattr(args, dest, None) is not None and not _models.option_applies(dest, args):
            shown = model if model != "search" else (
                f"search (searching {_models.inner_model(args)})")
            raise UsageError(f"{_flag(dest)} does not apply to --model {shown}; it applies "
                             f"to: {', '.join(_models.models_of(dest))}")
    spec = MODELS[_models.inner_model(args)]
    if getattr(args, "verbose", None) and not _models.has_progress(args):
        raise UsageError(f"--verbose does not apply to --model {model}; it applies to: "
                         f"{', '.join(_models.models_with_progress())}")
    if model in ("select-then-fit", "search") and args.epsilon is None:
        raise UsageError(f"--epsilon is required for --model {model} (it composes private "
                         "steps under one budget)")
    if args.delta is not None and args.epsilon is None \
            and _models.default_of(spec.cls, "epsilon") is None:
        raise UsageError(f"--delta needs --epsilon for --model {model} (without --epsilon "
                         "the fit is not private)")
    if model == "search" and args.grid:
        names = _models.inner_model(args)
        params = MODELS[names].cls().get_params()
        for name, _ in args.grid:
            if name not in params:
                raise UsageError(f"--grid: {name!r} is not a parameter of "
                                 f"{MODELS[names].cls.__name__} (--search-model {names})")
        args.grid = dict(args.grid)


def _check_train_data_options(args):
    if args.data is None:
        for dest in ("test", "n_features", "n_features_libsvm", "positive", "negative",
                     "cache_dir"):
            if getattr(args, dest) is not None:
                raise UsageError(f"{_flag(dest)} needs --data (without --data the "
                                 "synthetic problem is used)")
        args.synthetic_samples = args.synthetic_samples or 20000
        args.synthetic_features = args.synthetic_features or 200000
        return
    for dest in ("synthetic_samples", "synthetic_features"):
        if getattr(args, dest) is not None:
            raise UsageError(f"{_flag(dest)} applies only without --data")
    _check_corpus_or_libsvm(args, train=True)
    if (Path(args.data).name.startswith("20news") and args.positive is None
            and args.negative is None and not _models.supports_multiclass(args)
            and not _models.use_multiclass_default(args)):
        raise UsageError(f"--model {args.model} is binary only and {args.data} without "
                         "--positive/--negative is the 20-class task: choose two groups "
                         "with --positive/--negative, or a multiclass model (frank-wolfe, "
                         "sparsifier)")


def _check_corpus_or_libsvm(args, *, train):
    from ._data import is_corpus

    _check_path("--data", args.data, folder_ok=True)
    if is_corpus(args.data):
        if getattr(args, "cache_dir", None) is not None:
            cache = Path(args.cache_dir)
            if cache.exists() and not cache.is_dir():
                raise UsageError(f"--cache-dir: {cache} is not a folder")
            if not cache.exists() and not cache.parent.is_dir():
                raise UsageError(f"--cache-dir: folder {cache.parent} does not exist")
        for dest in ("test", "n_features_libsvm"):
            if getattr(args, dest, None) is not None:
                raise UsageError(f"{_flag(dest)} is for LIBSVM files; --data {args.data} is "
                                 "a text corpus")
    else:
        for dest in ("n_features", "positive", "negative", "cache_dir"):
            if getattr(args, dest, None) is not None:
                hint = " (use --n-features-libsvm)" if dest == "n_features" and train else ""
                raise UsageError(f"{_flag(dest)} is for text corpora; --data {args.data} is "
                                 f"read as a LIBSVM file{hint}")
        if train and args.test is not None:
            _check_path("--test", args.test)


def _preflight(estimator, args, n_samples=None, n_features=None):
    """Run the estimator's own checks on a zero stand-in (no data is read).

    Private fits stop at their privacy check (:func:`dptoolkit._private.plan_spend`),
    so the stand-in only needs the right shape; non-private fits run on a tiny one.
    """
    import scipy.sparse as sp

    from .._private import plan_spend

    private = args.epsilon is not None or \
        _models.default_of(MODELS[_models.inner_model(args)].cls, "epsilon") is not None
    n = n_samples or max(1000, args.batch_size if isinstance(args.batch_size, int) else 0)
    d = n_features if (private and n_features) else max(64, (args.k or 0) + 1)
    if not private:
        n = min(n, 64) if not isinstance(args.batch_size, int) else n
    y = np.arange(n) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            plan_spend(estimator, sp.csr_array((n, d), dtype=np.float64), y)
        except RuntimeError:
            pass  # a non-private fit ran to the end on the stand-in: options are valid
        except (ValueError, TypeError) as exc:
            raise UsageError(f"invalid options for --model {args.model}: {exc}") from None


# ---------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------

def _model_name_of(model):
    """The command-line name of a fitted model's class."""
    from ..model_selection import PrivateHyperparameterSearch
    from ..selection import PrivateSelectThenFit

    if isinstance(model, PrivateHyperparameterSearch):
        return "search"
    if isinstance(model, PrivateSelectThenFit):
        return "select-then-fit"
    for name, spec in MODELS.items():
        if spec.cls is not None and type(model) is spec.cls:
            return name
    return type(model).__name__


def _bound_of(name, model):
    if name == "search":
        return _bound_of(_model_name_of(model.estimator), model.estimator)
    return MODELS[name].bound if name in MODELS else None


def _describe_event(event, indent="  "):
    """Lines describing a privacy event tree."""
    from ..accounting.events import PrivacyEvent

    if event is None:
        return []
    import dataclasses

    scalars = []
    children = []
    for f in dataclasses.fields(event):
        v = getattr(event, f.name)
        if isinstance(v, PrivacyEvent):
            children.append(v)
        elif isinstance(v, tuple) and v and isinstance(v[0], PrivacyEvent):
            children.extend(v)
        else:
            scalars.append(f"{f.name}={v:.6g}" if isinstance(v, float) else f"{f.name}={v}")
    lines = [f"{indent}{type(event).__name__}({', '.join(scalars)})"]
    for child in children:
        lines.extend(_describe_event(child, indent + "  "))
    return lines


def _print_guarantee(model, name, bound, file=None):
    file = sys.stdout if file is None else file
    spent = getattr(model, "privacy_spent_", None)
    if spent is None:
        print("privacy: none (non-private fit; pass --epsilon for a private one)", file=file)
        return
    relation = model.get_params(deep=False).get("neighbouring", "add_remove")
    print(f"privacy: ({spent[0]:g}, {spent[1]:.3g})-DP, {relation} neighbouring, public "
          f"bound {bound}", file=file)
    if getattr(model, "epsilon_step_", None) is not None:
        print(f"  {model.n_iter_} exponential-mechanism steps at epsilon'="
              f"{model.epsilon_step_:.4g} each, {model.composition_} composition", file=file)
    print("  privacy event:", file=file)
    for line in _describe_event(getattr(model, "privacy_event_", None), "    "):
        print(line, file=file)


class DataError(Exception):
    """The data could not be read (exit status 1)."""


def _reading(args, load, *load_args):
    """``load(*load_args)``, with read errors naming the files given."""
    from ._data import _OwnSplit

    try:
        return load(*load_args)
    except _OwnSplit as exc:
        raise UsageError(str(exc)) from None
    except (ValueError, TypeError, EOFError, OSError) as exc:
        files = " ".join(f"{flag} {value}" for flag, value in
                         (("--data", args.data), ("--test", getattr(args, "test", None)))
                         if value is not None)
        raise DataError(f"could not read {files or 'the synthetic data'}: "
                        f"{type(exc).__name__}: {exc}") from exc


def _train(args):
    from .._persistence import save_model
    from . import _data, _report

    model_name = _models.resolve_model(args.model)
    _check_train_data_options(args)
    if args.save is not None:
        _check_out_path("--save", args.save)
    if args.report is not None:
        _check_out_path("--report", args.report)
    if args.verbose is None:
        args.verbose = 1 if sys.stderr.isatty() else 0
    estimator = _models.build_model(args)
    n_pre = args.synthetic_samples if args.data is None else args.n_samples_public
    d_pre = (args.synthetic_features if args.data is None else
             (args.n_features or _data.CORPUS_N_FEATURES) if _data.is_corpus(args.data)
             else args.n_features_libsvm)
    _preflight(estimator, args, n_pre, d_pre)
    spec = MODELS[_models.inner_model(args)]
    if (args.epsilon is not None and args.delta is None and "accounting" in spec.params
            and _models.default_of(spec.cls, "delta") is None):
        print(f"note: no --delta, so --model {args.model} is pure epsilon-DP (basic "
              "composition of its steps); with --delta (e.g. 1e-5) the steps compose in "
              "zCDP, with a far larger budget per step", file=sys.stderr)

    t0 = time.perf_counter()
    Xtr, ytr, Xte, yte, description = _reading(args, _data.load_train_test, args)
    load_time = time.perf_counter() - t0
    classes = _data.class_list(ytr)
    print(f"data: {description['description']}; {description['split']}")
    print(f"  train {Xtr.shape[0]} x {Xtr.shape[1]} (nnz {Xtr.nnz}), test {Xte.shape[0]} x "
          f"{Xte.shape[1]}, {len(classes)} classes; loaded in {load_time:.1f} s")
    if len(classes) > 2 and not _models.supports_multiclass(args):
        if _models.use_multiclass_default(args):
            print(f"note: {len(classes)} classes: --model default uses "
                  f"{args.model} (multiclass)", file=sys.stderr)
            estimator = _models.build_model(args)
            _preflight(estimator, args, Xtr.shape[0], Xtr.shape[1])
            model_name = _models.resolve_model(args.model)
    if len(classes) > 2 and not _models.supports_multiclass(args):
        raise UsageError(f"--model {args.model} is binary only and the data has "
                         f"{len(classes)} classes: choose two groups with --positive/"
                         "--negative, or a multiclass model (frank-wolfe, sparsifier)")
    t0 = time.perf_counter()
    estimator.fit(Xtr, ytr)
    fit_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    scores = _report.metrics(estimator, Xte, yte)
    predict_time = time.perf_counter() - t0
    bound = _bound_of(model_name, estimator)
    auc = "n/a" if scores["auc"] is None else f"{scores['auc']:.4f}"
    print(f"model: {model_name} ({type(estimator).__name__})")
    print(f"  test accuracy {scores['accuracy']:.4f}   AUC {auc}   non-zeros "
          f"{scores['n_nonzero']} of {_report.model_coef(estimator).size}")
    print(f"  fit time {fit_time:.2f} s")
    if hasattr(estimator, "best_params_"):
        print(f"  search: {estimator.n_runs_} private run(s); released "
              f"{estimator.best_params_} (noisy validation accuracy "
              f"{estimator.best_score_:.4f})")
    if hasattr(estimator, "support_"):
        print(f"  selection: {int(np.count_nonzero(estimator.support_))} features selected "
              "privately")
    _print_guarantee(estimator, model_name, bound)
    if args.save is not None:
        save_model(estimator, args.save)
        print(f"saved: {args.save}")
    if args.report is not None:
        data = dict(description, n_train=int(Xtr.shape[0]), n_test=int(Xte.shape[0]),
                    n_features=int(Xtr.shape[1]), classes=classes)
        report = _report.build_report(
            command="train", data=data, model=estimator, model_name=model_name,
            metrics_=scores, bound=bound,
            timings={"load_seconds": load_time, "fit_seconds": fit_time,
                     "predict_seconds": predict_time},
            extra={"saved_model": args.save})
        _report.write_report(report, args.report)
        print(f"report: {args.report}")
    return 0


def _load_saved(args):
    from .._persistence import load_model

    _check_path("--model-file", args.model_file)
    _check_corpus_or_libsvm(args, train=False)
    try:
        return load_model(args.model_file)
    except ValueError as exc:
        raise UsageError(f"--model-file: {exc}") from None


def _predict(args):
    from . import _data

    if args.output is not None:
        _check_out_path("--output", args.output)
    model = _load_saved(args)
    X, _, _ = _reading(args, _data.load_for_model, args, int(model.n_features_in_))
    pred = model.predict(X)
    score = None
    if len(getattr(model, "classes_", ())) == 2 and hasattr(model, "decision_function"):
        score = np.asarray(model.decision_function(X)).ravel()
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        out.write("index,prediction" + (",score\n" if score is not None else "\n"))
        for i, p in enumerate(pred):
            p = p.item() if hasattr(p, "item") else p
            out.write(f"{i},{p}" + (f",{score[i]:.17g}\n" if score is not None else "\n"))
        out.flush()
    except BrokenPipeError:  # e.g. piped into head: stop quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if args.output:
            out.close()
    if args.output:
        print(f"{len(pred)} predictions written to {args.output}", file=sys.stderr)
    return 0


def _evaluate(args):
    from . import _data, _report

    if args.report is not None:
        _check_out_path("--report", args.report)
    model = _load_saved(args)
    t0 = time.perf_counter()
    X, y, description = _reading(args, _data.load_for_model, args,
                                 int(model.n_features_in_))
    load_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    scores = _report.metrics(model, X, y)
    predict_time = time.perf_counter() - t0
    name = _model_name_of(model)
    bound = _bound_of(name, model)
    auc = "n/a" if scores["auc"] is None else f"{scores['auc']:.4f}"
    print(f"data: {description['description']}; {X.shape[0]} examples")
    print(f"model: {name} ({type(model).__name__}) from {args.model_file}")
    print(f"  accuracy {scores['accuracy']:.4f}   AUC {auc}   non-zeros "
          f"{scores['n_nonzero']}")
    _print_guarantee(model, name, bound)
    if args.report is not None:
        data = dict(description, n_train=None, n_test=int(X.shape[0]),
                    n_features=int(X.shape[1]), classes=_data.class_list(y))
        report = _report.build_report(
            command="evaluate", data=data, model=model, model_name=name, metrics_=scores,
            bound=bound, timings={"load_seconds": load_time, "predict_seconds": predict_time},
            extra={"model_file": args.model_file})
        _report.write_report(report, args.report)
        print(f"report: {args.report}")
    return 0


def _account(args):
    import scipy.sparse as sp

    from .._private import plan_spend

    if (args.n_classes > 2 and not _models.supports_multiclass(args)
            and not _models.use_multiclass_default(args)):
        raise UsageError(f"--model {args.model} is binary only; --n-classes "
                         f"{args.n_classes} needs frank-wolfe or sparsifier")
    model_name = _models.resolve_model(args.model)
    if args.epsilon is None and _models.default_of(
            MODELS[_models.inner_model(args)].cls, "epsilon") is None:
        raise UsageError(f"--epsilon is required by account for --model {model_name}")
    if args.n_classes < 2:
        raise UsageError("--n-classes must be >= 2")
    args.verbose = 0
    estimator = _models.build_model(args)
    n, d = args.n_samples, args.n_features
    standin = sp.csr_array((n, d), dtype=np.float64)
    y = np.arange(n) % args.n_classes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # N is public here (--n-samples)
        try:
            event, spent = plan_spend(estimator, standin, y)
        except (ValueError, TypeError) as exc:
            raise UsageError(f"invalid options for --model {args.model}: {exc}") from None
    print(f"model: {model_name} ({type(estimator).__name__}), N = {n}, D = {d}, "
          f"{args.n_classes} classes (N and D treated as public)")
    print(f"guarantee: ({spent[0]:g}, {spent[1]:.3g})-DP")
    if model_name == "frank-wolfe":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b = estimator.budget(d, n_classes=args.n_classes, n_samples=n)
        steps = _count_steps(b.event)
        print(f"  Frank-Wolfe: T = {steps} exponential-mechanism steps, per-step "
              f"epsilon' = {b.epsilon_step:.6g}, {b.composition} composition")
        if getattr(b, "screening_noise_multiplier", None) is not None:
            print(f"  private candidate screening: Gaussian noise multiplier "
                  f"{b.screening_noise_multiplier:.6g}")
    multipliers = _noise_multipliers(event)
    if multipliers:
        print("  noise multiplier(s): " + ", ".join(f"{m:.6g}" for m in multipliers))
    print("privacy event:")
    for line in _describe_event(event, "  "):
        print(line)
    return 0


def _count_steps(event):
    from ..accounting.events import ComposedEvent, SelfComposedEvent

    if isinstance(event, SelfComposedEvent):
        return event.count
    if isinstance(event, ComposedEvent):
        return max((_count_steps(e) for e in event.events), default=1)
    return 1


def _noise_multipliers(event):
    import dataclasses

    from ..accounting.events import PrivacyEvent

    out = []
    if event is None:
        return out
    if hasattr(event, "noise_multiplier"):
        out.append(float(event.noise_multiplier))
    for f in dataclasses.fields(event):
        v = getattr(event, f.name)
        for child in (v if isinstance(v, tuple) else (v,)):
            if isinstance(child, PrivacyEvent):
                out.extend(_noise_multipliers(child))
    return out


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings on the command line: the category and the message, no source line."""
    text = str(message)
    if "n_samples_public" in text:
        text += "  (Command line: --n-samples-public N.)"
    print(f"warning ({category.__name__}): {text}", file=file or sys.stderr)


_COMMANDS = {"train": _train, "predict": _predict, "evaluate": _evaluate,
             "account": _account}


def main(argv=None):
    """Entry point of ``python -m dptoolkit`` and the ``dptoolkit`` script.

    Parameters
    ----------
    argv : list of str or None
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 on success, 2 for a bad command line (reported before
        any data is read) or data that does not fit the model, 1 for other
        errors.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    from ..exceptions import BudgetExceededError

    try:
        if args.command in ("train", "account"):
            _check_model_options(args)
        with warnings.catch_warnings():     # restores the warning display afterwards
            warnings.showwarning = _show_warning
            return _COMMANDS[args.command](args)
    except UsageError as exc:
        parser.exit(2, f"{parser.prog} {args.command}: error: {exc}\n")
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except DataError as exc:
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, BudgetExceededError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
