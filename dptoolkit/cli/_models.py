"""The models of the command line: names, the options that apply, how they are built.

Every option is passed to the estimator only when the user gave it, so the
defaults are the estimators' own (one set of defaults).  The help text reads
them from the estimator classes.
"""
import inspect

from ..linear_model import (
    DPIGHTClassifier,
    DPNBLogisticClassifier,
    DPSCDClassifier,
    DPSGDClassifier,
    FrankWolfeLassoClassifier,
    SparsifiedLassoClassifier,
)
from ..model_selection import PrivateHyperparameterSearch
from ..selection import DPSIS, PrivateSelectThenFit

__all__ = ["DEFAULT_MODEL", "MODELS", "SEARCH_GRIDS",
           "build_model", "declare_classes",
           "resolve_model", "option_applies", "default_of"]

#: The model ``--model default`` stands for: the toolkit's best private sparse model
#: (private naive-Bayes-scaled logistic regression, any number of classes).
DEFAULT_MODEL = "dp-nb-logistic"

#: Default grids of ``--model search`` (``--grid NAME=V1,V2,...`` replaces them).
SEARCH_GRIDS = {
    "frank-wolfe": {"l1_bound": [10.0, 50.0, 100.0]},
    "sparsifier": {"l1_bound": [5.0, 10.0, 50.0]},
    "dp-sgd": {"alpha": [1e-5, 1e-4, 1e-3], "learning_rate": [0.05, 0.1, 0.5]},
    "dp-scd": {"alpha": [1e-5, 1e-4, 1e-3]},
    "dp-ight": {"sparsity": [10, 50, 100]},
    "dp-nb-logistic": {"k": [1000, 5000, 20000]},
}


class ModelSpec:
    """A model of the command line.

    Parameters
    ----------
    name : str
        ``--model`` value.
    cls : type
        The estimator fitted (for meta-models, the inner model's class).
    params : dict
        Option destination (argparse ``dest``) -> estimator parameter name.
    multiclass : bool
        Whether more than two classes are supported.
    description : str
    bound : str
        The public bound the data must satisfy (for the report).
    dask : bool
        Whether the estimator's fit takes Dask arrays of CSR row blocks (then
        ``train --scheduler``/``--n-workers`` fit it on a cluster).
    """

    def __init__(self, name, cls, params, multiclass, description, bound, extra=(),
                 dask=False):
        self.name = name
        self.cls = cls
        # options the estimator takes (the generic ones whenever its signature has
        # them), so that the command line follows the estimators' parameters
        accepted = set() if cls is None else set(inspect.signature(cls.__init__).parameters)
        params = dict(params, **{g: g for g in _GENERIC})
        self.params = {d: p for d, p in params.items() if p in accepted or p in extra}
        self.multiclass = multiclass
        self.description = description
        self.bound = bound
        self.dask = dask


#: Options passed to every estimator whose ``__init__`` takes them.
_GENERIC = ("n_samples_public", "neighbouring")

_FW_PARAMS = {"l1_bound": "l1_bound", "max_iter": "max_iter", "solver": "solver",
              "mechanism": "mechanism", "refresh_tol": "refresh_tol",
              "composition": "composition", "neighbouring": "neighbouring",
              "n_samples_public": "n_samples_public"}
_LINF = "||x_i||_inf <= 1 (entries clipped to [-1, 1])"
_L2 = "||x_i||_2 <= 1 (rows normalised)"

MODELS = {
    "frank-wolfe": ModelSpec(
        "frank-wolfe", FrankWolfeLassoClassifier, _FW_PARAMS, True,
        "FrankWolfeLassoClassifier: L1-constrained logistic regression by Frank-Wolfe, "
        "private by the exponential mechanism", _LINF, dask=True),
    "sparsifier": ModelSpec(
        "sparsifier", SparsifiedLassoClassifier,
        {"l1_bound": "l1_bound", "max_iter": "max_iter", "mechanism": "mechanism",
         "refresh_tol": "refresh_tol", "composition": "composition",
         "neighbouring": "neighbouring", "epsilon_count": "epsilon_count",
         "nonprivate_max_iter": "nonprivate_max_iter"}, True,
        "SparsifiedLassoClassifier: private count of non-zeros, private LASSO, keep the "
        "largest weights", _LINF),
    "dp-sgd": ModelSpec(
        "dp-sgd", DPSGDClassifier,
        {"loss": "loss", "alpha": "alpha", "learning_rate": "learning_rate",
         "batch_size": "batch_size", "clip": "clip", "n_epochs": "n_epochs",
         "n_samples_public": "n_samples_public"}, True,
        "DPSGDClassifier: logistic regression or SVM by DP-SGD", _L2, dask=True),
    "dp-scd": ModelSpec(
        "dp-scd", DPSCDClassifier,
        {"loss": "loss", "alpha": "alpha", "batch_size": "batch_size", "clip": "clip",
         "n_epochs": "n_epochs", "variant": "variant",
         "n_samples_public": "n_samples_public"}, True,
        "DPSCDClassifier: logistic regression or SVM by DP stochastic coordinate "
        "descent", _L2),
    "dp-ight": ModelSpec(
        "dp-ight", DPIGHTClassifier,
        {"sparsity": "sparsity", "max_iter": "max_iter", "learning_rate": "learning_rate",
         "neighbouring": "neighbouring", "n_samples_public": "n_samples_public"}, True,
        "DPIGHTClassifier: sparse logistic regression by DP iterative gradient hard "
        "thresholding", "||x_i||_2 <= data_norm (rows rescaled)"),
    "dp-nb-logistic": ModelSpec(
        "dp-nb-logistic", DPNBLogisticClassifier,
        {"k": "k", "selection_share": "selection_share",
         "sampling_rate": "sampling_rate", "n_epochs": "n_epochs",
         "learning_rate": "learning_rate", "alpha": "alpha",
         "averaging_fraction": "averaging_fraction",
         "n_samples_public": "n_samples_public"}, True,
        "DPNBLogisticClassifier: private naive-Bayes-scaled logistic regression (a "
        "private release of the per-class sums picks the vocabulary and the scaling, "
        "then DP-SGD)", "rows normalised to ||x_i||_2 = 1 (a local operation)", dask=True),
    "select-then-fit": ModelSpec(
        "select-then-fit", FrankWolfeLassoClassifier, dict(_FW_PARAMS, k="k", selection_share="selection_share"),
        False,
        "PrivateSelectThenFit: DP-SIS selects --k features, then Frank-Wolfe is fitted "
        "on them; the pair spends exactly --epsilon and --delta (the pipeline sets both "
        "steps' budgets, a share --selection-share of the budget to DP-SIS)",
        "DP-SIS: x_ij in [-1, 1], y in [-1, 1]; Frank-Wolfe: " + _LINF,
        extra=("k", "selection_share"),
        dask=True),
    "search": ModelSpec(
        "search", None, {}, None,
        "PrivateHyperparameterSearch: random search with a random number of private "
        "runs (mean --n-runs) around --search-model, over --grid (default grids in "
        "dptoolkit.cli._models.SEARCH_GRIDS)", None),
}
#: ``--model`` names (``default`` is an alias of :data:`DEFAULT_MODEL`).
MODEL_NAMES = tuple(MODELS) + ("default",)
#: Models ``--model search`` can search over.
SEARCHABLE = tuple(SEARCH_GRIDS)

#: Options that are not estimator parameters, with the models they apply to.
_EXTRA = {"search_model": ("search",), "grid": ("search",), "n_runs": ("search",)}


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
    return dest in MODELS[inner_model(args)].params


def option_applies_to(dest, model):
    """Whether option ``dest`` is passed to the estimator of ``model``."""
    model = resolve_model(model)
    if model == "search":
        model = DEFAULT_MODEL
    return dest in MODELS[model].params


def models_of(dest):
    """The models an option applies to (for error messages)."""
    if dest in _EXTRA:
        return list(_EXTRA[dest])
    return [name for name, spec in MODELS.items() if dest in spec.params]


def default_of(cls, param):
    """Default of ``param`` in ``cls.__init__`` (for the help text)."""
    p = inspect.signature(cls.__init__).parameters.get(param)
    return None if p is None else p.default


def multiclass_models():
    """The names of the models that fit more than two classes, ``default`` first."""
    return ", ".join(["default"] + [name for name, spec in MODELS.items() if spec.multiclass])


def supports_multiclass(args):
    """Whether the chosen model fits more than two classes."""
    return MODELS[inner_model(args)].multiclass


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
    spec = MODELS[name]
    kw = _given(args, spec)
    kw.pop("k", None)
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
        est = _base("frank-wolfe", args, budget=(None, None), classes=classes)
        kw = {"epsilon": args.epsilon, "delta": args.delta}
        if args.selection_share is not None:
            kw["selection_share"] = args.selection_share
        return PrivateSelectThenFit(DPSIS(**_with_classes(DPSIS, sel_kw, classes)), est,
                                    **_with_classes(PrivateSelectThenFit, kw, classes))
    if model == "search":
        inner = inner_model(args)
        est = _base(inner, args, classes=classes)
        grid = args.grid if args.grid else SEARCH_GRIDS[inner]
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
           else MODELS[inner_model(args)].cls)
    default = default_of(cls, "delta")
    if default is None:
        return ("no --delta: pure epsilon-DP, up to the floating-point delta of the "
                "samplers")
    return f"no --delta: {cls.__name__}'s default {default:g}, a public constant"
