"""The commands of the command line: train, predict, evaluate, account."""
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from .._validation import trusted_parameters
from ..accounting.events import count_steps, describe_event, noise_multipliers
from . import _models, _progress
from ._parser import _flag
from ._rule_of_thumb import data_budget_note


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
    for dest in _models.option_dests():
        if getattr(args, dest, None) is not None and not _models.option_applies(dest, args):
            shown = model if model != "search" else (
                f"search (searching {_models.inner_model(args)})")
            raise UsageError(f"{_flag(dest)} does not apply to --model {shown}; it applies "
                             f"to: {', '.join(_models.models_of(dest))}")
    non_private = getattr(args, "non_private", False)
    if non_private and args.epsilon is not None:
        raise UsageError("--non-private and --epsilon exclude each other: give --epsilon E "
                         "for a private fit or --non-private for a fit without privacy")
    if model in ("select-then-fit", "search") and args.epsilon is None:
        raise UsageError(f"--epsilon is required for --model {model} (it composes private "
                         "steps under one budget; it has no --non-private fit)")
    if args.command == "train" and args.epsilon is None and not non_private:
        raise UsageError("train needs --epsilon E (a private fit with budget E > 0) or "
                         "--non-private (a fit without privacy); neither was given")
    if args.command == "account" and args.epsilon is None:
        raise UsageError(f"--epsilon is required by account for --model {model}")
    if args.delta is not None and args.epsilon is None:
        raise UsageError(f"--delta needs --epsilon for --model {model} (--non-private fits "
                         "have no delta)")
    if model == "search" and not args.grid and _models.inner_model(args) not in \
            _models.SEARCH_GRIDS:
        raise UsageError(f"--model search over {_models.inner_model(args)} needs --grid "
                         "NAME=V1,V2 (it has no default grid)")
    if model == "search" and args.grid:
        names = _models.inner_model(args)
        cls = _models.models()[names].cls
        params = cls().get_params()
        for name, _ in args.grid:
            if name not in params:
                raise UsageError(f"--grid: {name!r} is not a parameter of "
                                 f"{cls.__name__} (--search-model {names})")
        args.grid = dict(args.grid)


def _check_train_data_options(args):
    if args.data is None:
        for dest in ("test", "n_features", "positive", "negative", "cache_dir", "classes"):
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
    if (getattr(args, "classes", None) is not None and len(args.classes) > 2
            and not _models.supports_multiclass(args)):
        raise UsageError(f"--model {args.model} is binary only and --classes gives "
                         f"{len(args.classes)} classes: choose a multiclass model "
                         f"({_models.multiclass_models()})")
    if (Path(args.data).name.startswith("20news") and args.positive is None
            and args.negative is None and not _models.supports_multiclass(args)):
        raise UsageError(f"--model {args.model} is binary only and {args.data} without "
                         "--positive/--negative is the 20-class task: choose two groups "
                         "with --positive/--negative, or a multiclass model "
                         f"({_models.multiclass_models()})")


def _check_classes(args):
    classes = getattr(args, "classes", None)
    if classes is None:
        return
    if len(classes) < 2:
        raise UsageError(f"--classes needs at least two labels, got {len(classes)}")
    if len(set(classes)) != len(classes):
        raise UsageError("--classes: every label once, got "
                         + " ".join(f"{c:g}" for c in classes))


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
        for dest in ("test", "classes"):
            if getattr(args, dest, None) is not None:
                raise UsageError(f"{_flag(dest)} is for LIBSVM files; --data {args.data} is "
                                 "a text corpus" + (" (its classes are the corpus's)"
                                                    if dest == "classes" else ""))
        return
    for dest in ("positive", "negative", "cache_dir"):
        if getattr(args, dest, None) is not None:
            raise UsageError(f"{_flag(dest)} is for text corpora; --data {args.data} is "
                             "read as a LIBSVM file")
    _check_classes(args)
    if train:
        if args.n_features is None:
            raise UsageError(f"--n-features is required for the LIBSVM file {args.data}: "
                             "the number of features is a public constant, never inferred "
                             "from the data (e.g. 123 for the a*a files)")
        if args.test is not None:
            _check_path("--test", args.test)
            if args.split_seed is not None:
                raise UsageError("--split-seed does not apply with --test (no random split)")
    elif (args.subset or "all") == "all":
        for dest in ("test_size", "split_seed"):
            if getattr(args, dest, None) is not None:
                raise UsageError(f"{_flag(dest)} does not apply to --subset all (the "
                                 "default for a LIBSVM file): give --subset train or test")


def _preflight(estimator, args, n_samples=None, n_features=None, n_classes=2):
    """Run the estimator's own checks on public quantities (no data is read, no fit).

    Its privacy plan (:func:`dptoolkit._private.plan_spend`) validates the
    options and computes the event from the shape and the label set alone;
    a non-private estimator's plan validates them too.
    """
    from .._private import plan_spend

    private = _models.is_private(args)
    n = n_samples or max(1000, args.batch_size if isinstance(args.batch_size, int) else 0)
    d = n_features if (private and n_features) else max(64, (args.k or 0) + 1)
    if not private:
        n = min(n, 64) if not isinstance(args.batch_size, int) else n
    y = (np.arange(n) % n_classes).astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            plan_spend(estimator, n_samples=n, n_features=d, y=y)
        except (ValueError, TypeError) as exc:
            raise _option_error(exc, args) from None


def _flag_in_message(text, args):
    """The flag of the estimator parameter an error message names first (or None)."""
    spec = _models.models()[_models.inner_model(args)]
    params = dict(spec.params, epsilon="epsilon", delta="delta")
    if _models.resolve_model(args.model) == "search":
        params["n_runs"] = "n_runs"
    if _models.resolve_model(args.model) == "select-then-fit":
        params["k"] = "k"       # DP-SIS's, not the estimator's
    found = [(m.start(), dest) for dest, param in params.items()
             for m in [re.search(rf"\b{re.escape(param)}\b", text)] if m]
    return _flag(min(found)[1]) if found else None


def _option_error(exc, args):
    """A :class:`UsageError` for an estimator's refusal of the options, naming the flag."""
    flag = _flag_in_message(str(exc), args)
    where = f"invalid for --model {args.model}: {exc}"
    return UsageError(f"{flag}: {where}" if flag else f"invalid options: {where}")


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
    for name, spec in _models.models().items():
        if spec.cls is not None and type(model) is spec.cls:
            return name
    return type(model).__name__


def _bound_of(name, model):
    if name == "search":
        return _bound_of(_model_name_of(model.estimator), model.estimator)
    return _models.models()[name].bound if name in _models.models() else None


def _print_guarantee(model, name, bound, file=None, *, delta=None, noise=None):
    file = sys.stdout if file is None else file
    spent = getattr(model, "privacy_spent_", None)
    if spent is None:
        print("privacy: none (non-private fit; pass --epsilon for a private one)", file=file)
        return
    relation = model.get_params(deep=False).get("neighbouring", "add_remove")
    print(f"privacy: ({spent[0]:g}, {spent[1]:.3g})-DP, {relation} neighbouring, public "
          f"bound {bound}", file=file)
    print("  covers: the released model, trained on the training examples (the test "
          "metrics are exact on held-out examples, which it does not protect)", file=file)
    n_public, takes_n = _n_public_of(model)
    if n_public is not None:
        print(f"  N: {n_public} (--n-samples-public, public)", file=file)
    elif takes_n:
        print("  N: taken from the data by the estimator (see its PrivacyLeakWarning): "
              "the guarantee covers only neighbours of the same size", file=file)
    if delta is not None:
        print(f"  delta: {delta}", file=file)
    if noise is not None:
        print(f"  noise: {noise}", file=file)
    if getattr(model, "epsilon_step_", None) is not None:
        print(f"  {model.n_iter_} exponential-mechanism steps at epsilon'="
              f"{model.epsilon_step_:.4g} each, {model.composition_} composition", file=file)
    print("  privacy event:", file=file)
    for line in describe_event(getattr(model, "privacy_event_", None), "    "):
        print(line, file=file)


class DataError(Exception):
    """The data could not be read (exit status 1)."""


def _reading(args, load, *load_args, **load_kw):
    """``load(*load_args, **load_kw)``, with read errors naming the files given."""
    from ._data import OptionError, _OwnSplit

    try:
        return load(*load_args, **load_kw)
    except (_OwnSplit, OptionError) as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        cache = getattr(args, "cache_dir", None)
        name = str(getattr(exc, "filename", None) or "")
        if cache is not None and name.startswith(str(Path(cache).expanduser())):
            raise UsageError(f"--cache-dir: cannot extract the corpus into {cache}: "
                             f"{exc.strerror or exc}: {name}") from None
        raise _read_failure(args, exc) from exc
    except ValueError as exc:
        match = re.match(r"(positive|negative)=", str(exc))
        if match:       # a group of --positive/--negative the corpus does not have
            raise UsageError(f"{_flag(match.group(1))}: {exc}") from None
        raise _read_failure(args, exc) from exc
    except (TypeError, EOFError) as exc:
        raise _read_failure(args, exc) from exc


def _read_failure(args, exc):
    """A :class:`DataError` naming the files given."""
    files = " ".join(f"{flag} {value}" for flag, value in
                     (("--data", args.data), ("--test", getattr(args, "test", None)))
                     if value is not None)
    return DataError(f"could not read {files or 'the synthetic data'}: "
                     f"{type(exc).__name__}: {exc}")


def _warn_seed(args):
    """A given noise seed makes a private fit's noise reproducible: say so, once.

    The library's warning (:func:`dptoolkit._private.warn_fixed_noise`), worded for
    the command line; the fits that follow then do not repeat it.
    """
    from .._private import warn_fixed_noise

    warn_fixed_noise(f"--seed {args.seed}", stacklevel=2)


def _check_delta(delta, n_public):
    """Warn when delta is not small against the public dataset size."""
    from ..exceptions import PrivacyLeakWarning

    if delta and n_public and delta >= 1.0 / n_public:
        warnings.warn(f"delta = {delta:g} >= 1/N = 1/{n_public} (--n-samples-public): a "
                      "mechanism that publishes one random example outright meets such a "
                      "guarantee; take delta well below 1/N", PrivacyLeakWarning,
                      stacklevel=2)


def _n_public_of(model):
    """``(n_samples_public, whether the model takes it)`` of a model or its inner one."""
    params = model.get_params(deep=False)
    if "n_samples_public" in params:
        return params["n_samples_public"], True
    inner = params.get("estimator")
    if inner is not None:
        return _n_public_of(inner)
    return None, False


def _train(args):
    from .. import save_model
    from . import _cluster, _data, _report

    _check_train_data_options(args)
    _cluster.check_cluster_options(args, UsageError)
    if args.save is not None:
        _check_out_path("--save", args.save)
    if args.report is not None:
        _check_out_path("--report", args.report)
    _progress.default_verbose(args)
    private = _models.is_private(args)
    n_classes_pre = len(args.classes) if getattr(args, "classes", None) else 2
    estimator = _models.build_model(args)
    n_pre = args.synthetic_samples if args.data is None else args.n_samples_public
    d_pre = (args.synthetic_features if args.data is None else
             (args.n_features or _data.CORPUS_N_FEATURES))
    _preflight(estimator, args, n_pre, d_pre, n_classes_pre)
    spec = _models.models()[_models.inner_model(args)]
    if private and args.seed is not None:
        _warn_seed(args)
    # (a search has its own delta, 1e-5 by default: the note is not about it)
    if (args.epsilon is not None and args.delta is None and "composition" in spec.params
            and _models.resolve_model(args.model) != "search"
            and _models.default_of(spec.cls, "delta") is None):
        print(f"note: no --delta, so --model {args.model} is pure epsilon-DP (basic "
              "composition of its steps); with --delta (e.g. 1e-5) the steps compose in "
              "zCDP, with a far larger budget per step", file=sys.stderr)

    t0 = time.perf_counter()
    Xtr, ytr, Xte, yte, info = _reading(args, _data.load_train_test, args)
    load_time = time.perf_counter() - t0
    class_names = info["classes"]
    n_classes = len(class_names)
    classes = [float(c) for c in range(n_classes)]
    print(f"data: {info['description']}")
    print(f"  split: {info['split']}")
    model_name = _models.resolve_model(args.model)
    if n_classes > 2 and not _models.supports_multiclass(args):
        raise UsageError(f"--model {args.model} is binary only and the task has "
                         f"{n_classes} classes: choose two groups with --positive/"
                         f"--negative, or a multiclass model ({_models.multiclass_models()})")
    if args.data is None and private and args.n_samples_public is None and \
            _models.option_applies("n_samples_public", args):
        # synthetic data are public, so the size of their training part is too
        args.n_samples_public = int(Xtr.shape[0])
        estimator = _models.build_model(args, classes)
        print(f"  N = {args.n_samples_public}: the size of the synthetic training part "
              "(public: the data are synthetic)")
    else:   # the estimator checked before reading, with the label set now known
        estimator = _models.declare_classes(estimator, classes)
    # every option was validated before the data were read (_preflight); the
    # estimator fitted is built from them and the label set and N the command line
    # derived itself, so its fit takes them as validated (one validation, not two)
    with trusted_parameters(estimator):
        note = data_budget_note(estimator, n_classes) if private else None
        if note is not None:
            print(note, file=sys.stderr)
        t0 = time.perf_counter()
        try:
            with _cluster.cluster_client(args, UsageError) as client:
                Xfit, yfit = Xtr, ytr
                if client is not None:
                    Xfit, yfit, n_blocks = _cluster.to_dask(Xtr, ytr, client)
                    print(f"  cluster: fit on {client.scheduler.address} "
                          f"({len(client.scheduler_info()['workers'])} workers, "
                          f"{n_blocks} row blocks)")
                with _progress.fit_progress(estimator, args.verbose):
                    estimator.fit(Xfit, yfit)
        except (ValueError, TypeError) as exc:
            # options valid on the stand-in but not at the data's size (e.g. a batch
            # larger than the training part): an argument error when it names an option
            if _flag_in_message(str(exc), args) is None:
                raise
            raise _option_error(exc, args) from None
    fit_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    # a model without predictions (a registered private transformer): nothing to score
    scores = _report.metrics(estimator, Xte, yte) if hasattr(estimator, "predict") else None
    predict_time = time.perf_counter() - t0
    bound = _bound_of(model_name, estimator)
    print(f"model: {model_name} ({type(estimator).__name__})")
    if scores is not None:
        auc = "n/a" if scores["auc"] is None else f"{scores['auc']:.4f}"
        print(f"  test accuracy {scores['accuracy']:.4f}   AUC {auc}   on "
              f"{scores['n_samples']} held-out examples;   non-zeros {scores['n_nonzero']} "
              f"of {_report.model_coef(estimator).size}")
    else:
        print("  no predictions to score (the model has no predict)")
    if hasattr(estimator, "best_params_"):
        print(f"  search: released {estimator.best_params_} (noisy validation accuracy "
              f"{estimator.best_score_:.4f})")
    if hasattr(estimator, "support_"):
        print(f"  selection: {int(np.count_nonzero(estimator.support_))} features selected "
              "privately")
    noise = _noise_text(args, private)
    if private:
        _check_delta(estimator.privacy_spent_[1], _n_public_of(estimator)[0])
    _print_guarantee(estimator, model_name, bound, delta=_models.delta_source(args),
                     noise=noise)
    stats = None
    if args.nonprivate_stats or not private:
        stats = _nonprivate_stats(estimator, Xtr, ytr, n_classes, private,
                                  {"load_seconds": load_time, "fit_seconds": fit_time,
                                   "predict_seconds": predict_time})
        _print_stats(stats)
    if args.save is not None:
        save_model(estimator, args.save,
                   data_description=_data.data_description(info, args))
        print(f"saved: {args.save}")
    if args.report is not None:
        data = {k: info[k] for k in ("source", "path", "description", "split",
                                     "n_features", "classes")}
        report = _report.build_report(
            command="train", data=data, model=estimator, model_name=model_name,
            metrics_=scores, bound=bound, extra={"saved_model": args.save},
            noise=noise, delta=_models.delta_source(args), outside_guarantee=stats)
        _report.write_report(report, args.report)
        print(f"report: {args.report}")
    return 0


def _noise_text(args, private):
    if not private:
        return None
    if args.seed is None:
        return "fresh OS entropy (no --seed)"
    return f"--seed {args.seed}: reproducible by anyone who knows the seed"


def _nonprivate_stats(estimator, Xtr, ytr, n_classes, private, timings):
    """Figures of the training data computed without privacy (outside the guarantee)."""
    from . import _data, _report

    train = _report.metrics(estimator, Xtr, ytr)
    return {
        "note": ("computed from the training data without privacy: not covered by the "
                 "guarantee" if private else "non-private fit: nothing is protected"),
        "n_train": int(Xtr.shape[0]),
        "nnz_train": int(Xtr.nnz),
        "class_counts_train": _data.class_counts(ytr, n_classes),
        "train_accuracy": train["accuracy"],
        "train_auc": train["auc"],
        "timings": timings,
    }


def _print_stats(stats, file=None):
    file = sys.stdout if file is None else file
    auc = "n/a" if stats["train_auc"] is None else f"{stats['train_auc']:.4f}"
    t = stats["timings"]
    print(f"outside the guarantee ({stats['note']}):", file=file)
    print(f"  train {stats['n_train']} examples, nnz {stats['nnz_train']}, per class "
          f"{stats['class_counts_train']}; training accuracy {stats['train_accuracy']:.4f}"
          f"   AUC {auc}", file=file)
    print(f"  load {t['load_seconds']:.2f} s, fit {t['fit_seconds']:.2f} s, predict "
          f"{t['predict_seconds']:.2f} s", file=file)


def _load_saved(args):
    """The model of ``--model-file``, with ``args`` completed from its data description."""
    from .. import load_model
    from .._persistence import is_dptoolkit_model

    _check_path("--model-file", args.model_file)
    _check_corpus_or_libsvm(args, train=False)
    _progress.default_verbose(args)
    try:
        with warnings.catch_warnings():     # refused below, with the option named
            warnings.filterwarnings("ignore", message=".*is not a dptoolkit model")
            model = load_model(args.model_file)
    except ValueError as exc:
        raise UsageError(f"--model-file: {exc}") from None
    if not is_dptoolkit_model(model):
        raise UsageError(f"--model-file: {args.model_file} is not a dptoolkit model (a "
                         f"skops file holding {type(model).__module__}."
                         f"{type(model).__name__}, not written by dptoolkit.save_model or "
                         "train --save)")
    _apply_description(args, model)
    return model


def _trained_on(desc):
    """What a model's data description says it was trained on (for messages)."""
    kind = {"libsvm": "a LIBSVM file", "corpus": "a text corpus",
            "synthetic": "the synthetic problem"}.get(desc.get("source"), "unknown data")
    return f"{kind} with {desc.get('n_features')} features, classes {desc.get('classes')}"


def _apply_description(args, model):
    """Check ``--data`` against the model's saved data description and take the label
    options from it (refusing ones that contradict it), before any data is read."""
    from . import _data

    desc = getattr(model, "data_description_", None)
    evaluate = hasattr(args, "classes")
    if desc is None:
        print(f"note: {args.model_file} holds no description of its training data "
              "(saved without one, e.g. by an older dptoolkit): "
              + ("give the labels train used: --classes for a LIBSVM file, --positive/"
                 "--negative for a corpus" if evaluate else
                 "predictions are class indices 0 .. K-1"), file=sys.stderr)
        return
    model_file = f"the model in {args.model_file}"
    corpus = _data.is_corpus(args.data)
    if corpus != (desc.get("source") == "corpus"):
        raise UsageError(f"--data: {args.data} is "
                         + ("a text corpus" if corpus else "read as a LIBSVM file")
                         + f", but {model_file} was trained on {_trained_on(desc)}: give "
                         "data described as the training data were")
    if corpus:
        if desc.get("featurisation") != _data.corpus_featurisation(desc["n_features"]):
            raise UsageError(f"--model-file: {model_file} was trained on a corpus "
                             f"featurised as {desc.get('featurisation')}, this dptoolkit "
                             f"hashes as {_data.corpus_featurisation(desc['n_features'])}")
        task = desc.get("task") or {}
        for dest in ("positive", "negative"):
            given, saved = getattr(args, dest), task.get(dest)
            if given is None:
                setattr(args, dest, saved)
            elif given != saved:
                raise UsageError(f"{_flag(dest)} {given}: {model_file} was trained with "
                                 + (f"{_flag(dest)} {saved}" if saved is not None else
                                    f"no {_flag(dest)}") + " (omit the option to use it)")
        return
    if not evaluate:
        return
    saved = (None if desc.get("label_convention") != "declared"
             else [float(c) for c in desc["classes"]])
    if args.classes is None:
        args.classes = saved
        args.classes_from_model = True
    elif saved is None or [float(c) for c in args.classes] != saved:
        shown = ("the LIBSVM binary convention (-1 or 0 negative, +1 positive)"
                 if saved is None else "--classes " + " ".join(f"{c:g}" for c in saved))
        raise UsageError(f"--classes {' '.join(f'{c:g}' for c in args.classes)}: "
                         f"{model_file} was trained with {shown} (omit --classes to use "
                         "them)")


def _check_read_classes(args, model, info):
    """A corpus read for a saved model must have the model's classes."""
    desc = getattr(model, "data_description_", None)
    if desc is None or info["source"] != "corpus":
        return
    if [str(c) for c in info["classes"]] != desc["classes"]:
        raise UsageError(f"--data: {args.data} has the classes {info['classes']}, but the "
                         f"model in {args.model_file} was trained on {_trained_on(desc)}: "
                         "its predictions would name other classes")


def _label_text(value):
    return f"{value:g}" if isinstance(value, float) else str(value)


def _predict(args):
    import csv

    from . import _data

    if args.output is not None:
        _check_out_path("--output", args.output)
    model = _load_saved(args)
    X, _, info = _reading(args, _data.load_for_model, args, int(model.n_features_in_),
                          labels=False)
    _check_read_classes(args, model, info)
    pred = model.predict(X)
    desc = getattr(model, "data_description_", None)
    if desc is not None:        # class indices -> the labels train read
        names = [_label_text(c) for c in desc["classes"]]
        pred = [names[int(p)] for p in pred]
    score = None
    if len(getattr(model, "classes_", ())) == 2 and hasattr(model, "decision_function"):
        score = np.asarray(model.decision_function(X)).ravel()
    out = open(args.output, "w", encoding="utf-8", newline="") if args.output else sys.stdout
    try:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["index", "prediction"] + (["score"] if score is not None else []))
        for i, p in enumerate(pred):
            p = p.item() if hasattr(p, "item") else p
            writer.writerow([i, p] + ([f"{score[i]:.17g}"] if score is not None else []))
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
    n_model = len(getattr(model, "classes_", ()))
    if n_model and not _data.is_corpus(args.data):   # a LIBSVM file: known before reading
        n_given = len(args.classes) if args.classes is not None else 2
        if n_given != n_model:
            raise UsageError(f"--classes: the model in {args.model_file} has {n_model} "
                             f"classes, --classes gives {n_given}: give the classes train "
                             "used")
    t0 = time.perf_counter()
    X, y, info = _reading(args, _data.load_for_model, args, int(model.n_features_in_))
    load_time = time.perf_counter() - t0
    _check_read_classes(args, model, info)
    if n_model and len(info["classes"]) != n_model:
        raise UsageError(f"the model in {args.model_file} has {n_model} classes and --data "
                         f"{args.data} is read with {len(info['classes'])} "
                         f"({info['classes']}): give the classes train used"
                         + (" (--classes)" if info["source"] == "libsvm" else ""))
    t0 = time.perf_counter()
    scores = _report.metrics(model, X, y)
    predict_time = time.perf_counter() - t0
    name = _model_name_of(model)
    bound = _bound_of(name, model)
    auc = "n/a" if scores["auc"] is None else f"{scores['auc']:.4f}"
    print(f"data: {info['description']}; {info['split']}; {X.shape[0]} examples")
    print(f"model: {name} ({type(model).__name__}) from {args.model_file}")
    print(f"  accuracy {scores['accuracy']:.4f}   AUC {auc}   non-zeros "
          f"{scores['n_nonzero']}")
    _print_guarantee(model, name, bound)
    if args.report is not None:
        data = {k: info[k] for k in ("source", "path", "description", "split",
                                     "n_features", "classes")}
        report = _report.build_report(
            command="evaluate", data=data, model=model, model_name=name, metrics_=scores,
            bound=bound, timings={"load_seconds": load_time, "predict_seconds": predict_time},
            extra={"model_file": args.model_file})
        _report.write_report(report, args.report)
        print(f"report: {args.report}")
    return 0


def _account(args):
    from .._private import plan_spend

    if args.n_classes > 2 and not _models.supports_multiclass(args):
        raise UsageError(f"--model {args.model} is binary only; --n-classes "
                         f"{args.n_classes} needs a multiclass model ({_models.multiclass_models()})")
    model_name = _models.resolve_model(args.model)
    if args.n_classes < 2:
        raise UsageError("--n-classes must be >= 2")
    args.verbose = 0
    estimator = _models.build_model(args)
    n, d = args.n_samples, args.n_features
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # N is public here (--n-samples)
        try:
            event, spent = plan_spend(estimator, n_samples=n, n_features=d,
                                      y=np.arange(n) % args.n_classes)
        except (ValueError, TypeError) as exc:
            raise _option_error(exc, args) from None
    print(f"model: {model_name} ({type(estimator).__name__}), N = {n}, D = {d}, "
          f"{args.n_classes} classes (N and D treated as public)")
    print(f"guarantee: ({spent[0]:g}, {spent[1]:.3g})-DP")
    if model_name == "frank-wolfe":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            b = estimator.budget(d, n_classes=args.n_classes, n_samples=n)
        steps = count_steps(b.event)
        print(f"  Frank-Wolfe: T = {steps} exponential-mechanism steps, per-step "
              f"epsilon' = {b.epsilon_step:.6g}, {b.composition} composition")
        if getattr(b, "screening_noise_multiplier", None) is not None:
            print(f"  private candidate screening: Gaussian noise multiplier "
                  f"{b.screening_noise_multiplier:.6g}")
    multipliers = noise_multipliers(event)
    if multipliers:
        print("  noise multiplier(s): " + ", ".join(f"{m:.6g}" for m in multipliers))
    print("privacy event:")
    for line in describe_event(event, "  "):
        print(line)
    return 0
