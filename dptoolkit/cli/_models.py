"""The models of the command line: names, the options that apply, how they are built.

The models are found, not listed: every estimator :func:`dptoolkit._discovery.all_estimators`
finds that has a command-line name (:func:`dptoolkit._discovery.cli_name`: the
toolkit's private classifiers, and a private estimator defined elsewhere that
declares itself public) is a model, with the options its constraint table
(``_parameter_constraints``) declares; ``select-then-fit`` and ``search`` are
the command line's own compositions of them.

Every option is passed to the estimator only when the user gave it, so the
defaults are the estimators' own (one set of defaults).  The help text reads
them from the estimator classes.
"""
import argparse
import functools
import inspect

from .._discovery import _registered, all_estimators, cli_name
from .._validation import Boolean, Interval, Options
from ..model_selection import PrivateHyperparameterSearch
from ..selection import DPSIS, PrivateSelectThenFit

__all__ = ["DEFAULT_MODEL", "SEARCH_GRIDS", "models", "model_names", "searchable",
           "build_model", "declare_classes", "cli_parameters",
           "resolve_model", "option_applies", "default_of"]

#: The model ``--model default`` stands for: the toolkit's best private sparse model
#: (private naive-Bayes-scaled logistic regression, any number of classes).
DEFAULT_MODEL = "dp-nb-logistic"

#: Default grids of ``--model search`` (``--grid NAME=V1,V2,...`` replaces them; a
#: model without one is searched over the grid given).
SEARCH_GRIDS = {
    "frank-wolfe": {"l1_bound": [10.0, 50.0, 100.0]},
    "sparsifier": {"l1_bound": [5.0, 10.0, 50.0]},
    "dp-sgd": {"alpha": [1e-5, 1e-4, 1e-3], "learning_rate": [0.05, 0.1, 0.5]},
    "dp-scd": {"alpha": [1e-5, 1e-4, 1e-3]},
    "dp-ight": {"sparsity": [10, 50, 100]},
    "dp-nb-logistic": {"k": [1000, 5000, 20000]},
}

#: Estimator parameters the command line sets from its own options (``--epsilon``,
#: ``--delta``, ``--seed``, the label set, ``--verbose``) or never sets.
CLI_SET = ("epsilon", "delta", "random_state", "classes", "accountant", "verbose")
#: The default of a deprecated alias kept for old code (not an option).
_DEPRECATED = "deprecated"
#: The constraints an option can be generated from (None: the option not given).
_REPRESENTABLE = (Options, Interval, Boolean)


def cli_parameters(cls):
    """The parameters of ``cls`` the command line offers as options: those of its
    constraint table whose every constraint is a string choice, a number range, a
    bool or None, but the ones it sets itself (:data:`CLI_SET`) and deprecated
    aliases (default ``"deprecated"``)."""
    table = getattr(cls, "_parameter_constraints", None) or {}
    signature = inspect.signature(cls.__init__).parameters
    return [name for name, constraints in table.items()
            if name in signature and name not in CLI_SET
            and signature[name].default != _DEPRECATED
            and all(c is None or isinstance(c, _REPRESENTABLE) for c in constraints)]


def _summary(cls):
    """The first paragraph of the class docstring, on one line."""
    doc = inspect.getdoc(cls) or cls.__name__
    return " ".join(doc.split("\n\n", 1)[0].replace("``", "").split()).rstrip(".")


def _multiclass(cls):
    try:
        tags = cls().__sklearn_tags__()
    except Exception:   # an estimator that needs arguments: assume two classes
        return False
    return bool(tags.classifier_tags and tags.classifier_tags.multi_class)


class ModelSpec:
    """A model of the command line.

    Parameters
    ----------
    name : str
        ``--model`` value.
    cls : type
        The estimator fitted (for meta-models, the inner model's class).
    multiclass : bool
        Whether more than two classes are supported.
    description : str
    bound : str
        The public bound the data must satisfy (for the report).
    dask : bool
        Whether the estimator's fit takes Dask arrays of CSR row blocks (then
        ``train --scheduler``/``--n-workers`` fit it on a cluster).

    Attributes
    ----------
    params : dict
        Option destination (argparse ``dest``) -> estimator parameter name: the
        parameters of :func:`cli_parameters` (an option is named after its
        parameter, so a renamed parameter renames its option).
    """

    def __init__(self, name, cls, multiclass, description, bound, dask=False):
        self.name = name
        self.cls = cls
        self.params = {} if cls is None else {p: p for p in cli_parameters(cls)}
        self.multiclass = multiclass
        self.description = description
        self.bound = bound
        self.dask = dask


_LINF = "||x_i||_inf <= 1 (entries clipped to [-1, 1])"
_L2 = "||x_i||_2 <= 1 (rows normalised)"
#: The public bound each model's data must satisfy, as the output states it; a
#: model without an entry: its ``data_norm`` when it has one, else a pointer
#: to its estimator's documentation.
_BOUNDS = {
    "frank-wolfe": _LINF, "sparsifier": _LINF, "dp-sgd": _L2, "dp-scd": _L2,
    "dp-nb-logistic": "rows normalised to ||x_i||_2 = 1 (a local operation)",
}


def _bound(name, cls):
    if name in _BOUNDS:
        return _BOUNDS[name]
    if "data_norm" in cli_parameters(cls):
        return "||x_i||_2 <= data_norm (rows rescaled)"
    return f"as documented by {cls.__name__}"


def _spec(cls):
    name = cli_name(cls)
    return ModelSpec(name, cls, _multiclass(cls), f"{cls.__name__}: {_summary(cls)}",
                     _bound(name, cls), dask=bool(getattr(cls, "_fits_dask_arrays", False)))


@functools.lru_cache(maxsize=8)
def _models_of(registered):
    # ``registered``: the external estimators registered so far (the cache key)
    table = {}
    for _, cls in all_estimators():
        name = cli_name(cls)
        if name is None:
            continue
        if name in table or name in ("select-then-fit", "search", "default"):
            raise RuntimeError(f"two models of the command line are named {name!r}: "
                               f"{table[name].cls.__name__ if name in table else name} "
                               f"and {cls.__name__} (set _cli_name on one of them)")
        table[name] = _spec(cls)
    fw = table["frank-wolfe"]
    table["select-then-fit"] = ModelSpec(
        "select-then-fit", fw.cls, False,
        "PrivateSelectThenFit: DP-SIS selects --k features, then Frank-Wolfe is fitted "
        "on them; the pair spends exactly --epsilon and --delta (the pipeline sets both "
        "steps' budgets, a share --selection-share of the budget to DP-SIS)",
        "DP-SIS: x_ij in [-1, 1], y in [-1, 1]; Frank-Wolfe: " + _LINF, dask=fw.dask)
    table["search"] = ModelSpec(
        "search", None, None,
        "PrivateHyperparameterSearch: random search with a random number of private "
        "runs (mean --n-runs) around --search-model, over --grid (default grids in "
        "dptoolkit.cli._models.SEARCH_GRIDS)", None)
    return table


def models():
    """The models of the command line, ``{--model name: ModelSpec}``: the discovered
    estimators with a command-line name (those registered so far included), then
    ``select-then-fit`` and ``search``."""
    return _models_of(tuple(cls for _, cls in _registered()))


def model_names():
    """``--model`` names (``default`` is an alias of :data:`DEFAULT_MODEL`)."""
    return tuple(models()) + ("default",)


def searchable():
    """Models ``--model search`` can search over: the classifiers (the search
    scores accuracy)."""
    from sklearn.base import ClassifierMixin

    return tuple(name for name, spec in models().items()
                 if spec.cls is not None and name != "select-then-fit"
                 and issubclass(spec.cls, ClassifierMixin))


def __getattr__(name):
    # the former module constants, now computed from discovery
    if name == "MODELS":
        return models()
    if name == "MODEL_NAMES":
        return model_names()
    if name == "SEARCHABLE":
        return searchable()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Options that are not estimator parameters, with the models they apply to.
#: (``--k`` and ``--selection-share`` are estimator parameters; for select-then-fit
#: they set its selection stage, not the Frank-Wolfe step's own screening.)
_EXTRA = {"search_model": ("search",), "grid": ("search",), "n_runs": ("search",)}


def option_dests():
    """Every option that applies to some model (estimator parameters and the
    composite models' own), in order of first appearance."""
    dests = {}
    for spec in models().values():
        dests.update(dict.fromkeys(spec.params))
    return list(dests) + [d for d in _EXTRA if d not in dests]


def resolve_model(name):
    """``default`` -> :data:`DEFAULT_MODEL`; other names unchanged."""
    return DEFAULT_MODEL if name == "default" else name


def inner_model(args):
    """The model whose estimator options apply (the searched one for ``search``)."""
    model = resolve_model(args.model)
    if model == "search":
        return resolve_model(args.search_model or DEFAULT_MODEL)
    return model


def option_applies(dest, args):
    """Whether option ``dest`` applies to ``args.model`` (and its searched model)."""
    model = resolve_model(args.model)
    if dest in _EXTRA:
        return model in _EXTRA[dest]
    return dest in models()[inner_model(args)].params


def option_applies_to(dest, model):
    """Whether option ``dest`` is passed to the estimator of ``model``."""
    model = resolve_model(model)
    if model == "search":
        model = DEFAULT_MODEL
    return dest in models()[model].params


def models_of(dest):
    """The models an option applies to (for error messages)."""
    if dest in _EXTRA:
        return list(_EXTRA[dest])
    return [name for name, spec in models().items() if dest in spec.params]


def default_of(cls, param):
    """Default of ``param`` in ``cls.__init__`` (for the help text)."""
    p = inspect.signature(cls.__init__).parameters.get(param)
    return None if p is None else p.default


def multiclass_models():
    """The names of the models that fit more than two classes, ``default`` first."""
    return ", ".join(["default"] + [name for name, spec in models().items() if spec.multiclass])


def supports_multiclass(args):
    """Whether the chosen model fits more than two classes."""
    return models()[inner_model(args)].multiclass


def _given(args, spec):
    """Estimator parameters the user gave, for ``spec``."""
    return {param: getattr(args, dest) for dest, param in spec.params.items()
            if getattr(args, dest, None) is not None}


def _takes(cls, param):
    return param in inspect.signature(cls.__init__).parameters


def _with_classes(cls, kw, classes):
    """``kw`` plus ``classes`` when given and ``cls`` takes the declared label set."""
    if classes is not None and _takes(cls, "classes"):
        kw["classes"] = list(classes)
    return kw


def _base(name, args, *, budget=None, classes=None):
    """The estimator of model ``name`` with the options given; ``budget``: its
    ``epsilon`` (None: non-private) and ``delta`` (None: the estimator's default),
    or None for a step whose budget a meta-estimator sets."""
    spec = models()[name]
    kw = _given(args, spec)
    if budget is not None:
        epsilon, delta = budget
        kw["epsilon"] = epsilon
        if delta is not None:
            kw["delta"] = delta
    kw["random_state"] = args.seed      # None: fresh OS entropy for the noise
    if _takes(spec.cls, "verbose") and getattr(args, "verbose", None):
        kw["verbose"] = args.verbose
    return spec.cls(**_with_classes(spec.cls, kw, classes))


def build_model(args, classes=None):
    """The unfitted estimator for ``args`` (options already validated).

    Parameters
    ----------
    args : argparse.Namespace
        ``args.seed`` is the noise seed of every mechanism (``None``: fresh OS
        entropy on every run).
    classes : list of float or None
        The public label set (class indices ``0 .. K-1``), passed to every
        estimator that takes ``classes``; None before it is known.

    Returns
    -------
    estimator
    """
    model = resolve_model(args.model)
    if model == "select-then-fit":
        # one total budget: the pipeline sets both steps' epsilon and delta so that
        # their composed event spends exactly (--epsilon, --delta); with a delta,
        # DP-SIS's selector "auto" may take the Gaussian release of all scores
        sel_kw = {"random_state": args.seed, "epsilon": None}   # the pipeline sets both
        if args.k is not None:
            sel_kw["k"] = args.k
        if args.neighbouring is not None:
            sel_kw["neighbouring"] = args.neighbouring
        if getattr(args, "n_samples_public", None) is not None:
            sel_kw["n_samples_public"] = args.n_samples_public
        # --k and --selection-share are the selection stage's: Frank-Wolfe keeps its own
        fw_args = argparse.Namespace(**{**vars(args), "k": None, "selection_share": None})
        est = _base("frank-wolfe", fw_args, budget=(None, None), classes=classes)
        kw = {"epsilon": args.epsilon, "delta": args.delta}
        if args.selection_share is not None:
            kw["selection_share"] = args.selection_share
        return PrivateSelectThenFit(DPSIS(**_with_classes(DPSIS, sel_kw, classes)), est,
                                    **_with_classes(PrivateSelectThenFit, kw, classes))
    if model == "search":
        inner = inner_model(args)
        est = _base(inner, args, classes=classes)
        grid = args.grid if args.grid else SEARCH_GRIDS.get(inner)
        if not grid:
            raise ValueError(f"--model search over {inner} needs --grid NAME=V1,V2 (it has "
                             "no default grid)")
        kw = {"epsilon": args.epsilon, "random_state": args.seed}
        if args.delta is not None:
            kw["delta"] = args.delta
        if args.n_runs is not None:
            kw["n_runs"] = args.n_runs
        if getattr(args, "n_samples_public", None) is not None:
            # the search's own N (split sizes, best_score_'s scale); the searched
            # estimator keeps the same N as its own, as before
            kw["n_samples_public"] = args.n_samples_public
        return PrivateHyperparameterSearch(
            est, grid, **_with_classes(PrivateHyperparameterSearch, kw, classes))
    return _base(model, args, budget=(args.epsilon, args.delta), classes=classes)


def declare_classes(estimator, classes):
    """``estimator`` (built without ``classes``) with the public label set ``classes``
    on it and on every nested estimator that takes it, as :func:`build_model` with
    ``classes`` would build it."""
    keys = [k for k in estimator.get_params(deep=True) if k.split("__")[-1] == "classes"]
    return estimator.set_params(**{k: list(classes) for k in keys})


def is_private(args):
    """Whether the fit is private: ``--epsilon`` given (``train`` without it needs
    ``--non-private``)."""
    return args.epsilon is not None


def delta_source(args):
    """Where the fit's delta comes from (for the output): public constants only."""
    if args.delta is not None:
        return f"--delta {args.delta:g}"
    model = resolve_model(args.model)
    cls = (PrivateHyperparameterSearch if model == "search"
           else models()[inner_model(args)].cls)
    default = default_of(cls, "delta")
    if default is None:
        return ("no --delta: pure epsilon-DP, up to the floating-point delta of the "
                "samplers")
    return f"no --delta: {cls.__name__}'s default {default:g}, a public constant"
