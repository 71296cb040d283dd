r"""Private hyperparameter search by random repetition (Papernot and Steinke 2022).

Choosing hyperparameters by looking at private data is itself a privacy cost.
:class:`PrivateHyperparameterSearch` pays it inside one guarantee: it runs a
*random* number K of private trainings, each with hyperparameters drawn at
random from ``param_distributions`` and scored privately on a held-out split,
and releases the best model.  The randomness of K is what makes the release
cheap: with K drawn from a truncated negative binomial distribution the
whole search costs about two to three times one run in Renyi DP, however many
runs it makes (Papernot and Steinke 2022, Theorem 2); with pure-DP runs and a
geometric K it is 3 epsilon-DP (Liu and Talwar 2019, Theorem 3.4).
"""
import dataclasses
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone, is_classifier
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .._estimator import delegated_tags, estimator_has
from .._private import PrivateEstimatorMixin, data_dependent_error, nothing_released
from .._validation import (CLASSES, DELTA_OPTIONAL, FRACTION_OPEN, POSITIVE, PRIVATE_COMMON,
                           Checked, Interval, Options, check_X_y_named, validate_params)
from ..accounting import basic_guarantee
from ._calibration import _calibrate, _run_event
from ._k_distribution import _DISTRIBUTIONS, _draw_k, _search_event
from ._runs import _reemit_released_warnings, _run_all, _verbose_params
from ._search_candidates import _candidates

__all__ = ["PrivateHyperparameterSearch"]

# (public parameters, candidates, shape, label set) -> (run epsilon, the candidates'
# training events): the calibration is a nested bisection and does not depend on the
# data's values
_CALIBRATIONS = {}


@dataclasses.dataclass(frozen=True)
class SearchParams:
    """The validated parameters of a search: its budget, the mean and shape of the
    number of runs, the validation fraction, the score's noise (None: "auto"
    until planned), the distributions, their grid and probes."""
    epsilon: float
    delta: float
    mean: float
    shape: float
    frac: float
    noise: float
    dists: list
    grid: list
    probes: list


@dataclasses.dataclass(frozen=True)
class SearchPlan:
    """The parameters a search runs with (its privacy plan's ``params``): the
    validated parameters (read-only), the unfitted template of the runs, each
    run's epsilon and the candidates' distinct training events, N and the
    validation part's size."""
    validated: SearchParams
    template: object
    epsilon_run: float
    train_events: tuple
    n_samples: int
    n_val: int


def _check_private(estimator):
    if not isinstance(estimator, PrivateEstimatorMixin):
        raise TypeError("not a private estimator")


def _check_dists(dists):
    dists = [dists] if isinstance(dists, dict) else list(dists)
    if not dists or not all(isinstance(d, dict) for d in dists):
        raise TypeError("not a dict or a non-empty list of dicts")


class PrivateHyperparameterSearch(PrivateEstimatorMixin, MetaEstimatorMixin, BaseEstimator):
    r"""Random search over hyperparameters with the privacy cost of the search included.

    Each *run* draws hyperparameters from ``param_distributions``, trains a clone
    of ``estimator`` privately on the training part of the data, and computes a
    private validation score: the number of correct predictions on the held-out
    part plus Gaussian noise of standard deviation ``score_noise`` (Laplace for a
    pure-DP search).  The number of runs K is random and independent of the data;
    the released model is the run with the best noisy score.

    The search follows Papernot and Steinke (2022): K i.i.d. runs of one private
    mechanism Q, the best released, with K drawn from a truncated negative
    binomial law (their Theorem 2); with pure-DP runs and a geometric K, Liu and
    Talwar (2019), Theorem 3.4.

    **Privacy.**  Neighbouring relation: add/remove one example (the estimator's
    relation must be add/remove).  The validation part is
    ``n_val = round(validation_fraction * N)`` examples drawn uniformly without
    replacement (one split, shared by the runs), the others train, with
    :math:`N` = ``n_samples_public``.  Because ``n_val`` is public, the splits of
    :math:`D` and :math:`D' = D \cup \{x\}` can be coupled so that either
    :math:`x` trains and the validation parts are equal, or :math:`x` is
    validated in the place of an example :math:`z` that :math:`D` validates,
    and :math:`z` trains in :math:`D'` only: the training parts are add/remove
    neighbours and, for a given model, the count of correct validation
    predictions changes by at most 1 (sensitivity 1 under add/remove and under
    that exchange alike).  Each run's mechanism Q (training event composed with
    the score's Gaussian on that count) is accounted by plain composition, an
    upper bound, and the search by the theorems above on every coupled pair of
    splits.  Q draws its hyperparameters independently of the data, so its
    Renyi DP at every order is at most the maximum over the candidates of their
    runs' (a :class:`~dptoolkit.accounting.events.MaxOfEvents` of the training
    events, composed with the score): a grid over a parameter that changes the
    training event (``max_iter``, ``n_epochs``, ``batch_size``, ...) is
    accounted at its most expensive point, order by order.  Lists of values
    are enumerated (every point of their product); a distribution (with
    ``rvs``) is checked at public quantiles and must not change the event
    (``ValueError`` naming it otherwise: give such a parameter as a list), and
    every run's actual event is checked against the accounted ones before
    anything is released.  A split size read from the data breaks the coupling
    (where ``round(validation_fraction * n)`` moves between :math:`n` and
    :math:`n + 1`, :math:`x` can replace a training example instead), and
    ``best_score_ = (count + noise) / n_val`` would carry :math:`n`: hence
    ``n_samples_public``.

    * ``delta > 0``: K ~ truncated negative binomial with ``shape`` :math:`\eta`
      and mean ``n_runs`` (``"geometric"``: :math:`\eta = 1`; ``"logarithmic"``:
      :math:`\eta = 0`).  The search is RDP with, at every order :math:`\lambda`,
      :math:`\varepsilon_Q(\lambda) + (1+\eta)(1 - 1/\hat\lambda)\varepsilon_Q(\hat\lambda)
      + (1+\eta)\ln(1/\gamma)/\hat\lambda + \ln(\mathbb{E}K)/(\lambda-1)` minimised over
      :math:`\hat\lambda` (Papernot and Steinke 2022, Theorem 2), converted to
      (epsilon, delta).  Each run's epsilon is the largest (bisection, relative
      tolerance 1e-3) for which this is at most ``epsilon``, searched above the
      smallest budget the estimator accepts: for an estimator with a share of
      its budget fixed (the Sparsifier's ``epsilon_count``, which its epsilon
      must exceed) the bracket starts 1% of the remaining budget above that
      share; for every estimator it starts at 1e-4 ``epsilon`` above it, raised
      tenfold until the estimator can plan its fit there (e.g. DP-IGHT refuses a
      noise multiplier above 1e6).  A budget that leaves a run no more than that
      raises ``ValueError``.
    * ``delta = 0``: K geometric with mean ``n_runs``; each run is
      :math:`\varepsilon/3`-DP at every point of the grid (training
      :math:`0.9\varepsilon/3`, Laplace score :math:`0.1\varepsilon/3`), and the
      search :math:`\varepsilon`-DP (Liu and Talwar 2019, Theorem 3.4).  The estimator must then be pure DP up to a
      floating-point delta (below 1e-9 per run, e.g. the samplers' quantisation),
      which adds ``n_runs`` times that delta (a union bound over the runs, whose
      expected number is ``n_runs``) to ``privacy_spent_``.

    ``privacy_event_`` is the :class:`~dptoolkit.accounting.events.RepeatAndSelectEvent`
    of the run's event, ``ComposedEvent((training, score))`` with ``training``
    the candidates' training event (their ``MaxOfEvents`` when they differ);
    ``privacy_spent_`` is (epsilon, delta) as requested.

    **What the search shows.**  Only the best run's model, hyperparameters and
    noisy score are released, as the theorems require: K and the other runs'
    hyperparameters, scores and outputs are not, on any channel.  K is not an
    attribute; the runs are silent (fitted with every ``verbose`` parameter at 0,
    the user's value put back on ``best_estimator_``, and whatever they print to
    ``sys.stdout`` or ``sys.stderr`` dropped): no progress bar, no line per run,
    and the search itself prints nothing.  The runs' warnings are recorded and
    dropped, except the released run's, each passed on once and marked as
    outside the guarantee (which run is released depends on the data).  The
    running time grows with K and is not covered.

    **A run that fails.**  A run whose fit or scoring raises is a run without
    output, never the best, and the search goes on: in Papernot and Steinke's
    terms its mechanism Q released "no model", with the lowest score, and the
    search is still the best of K runs of Q (an error that is a function of the
    run's private output, e.g. a diverged model, stays inside the guarantee; one
    that reads the data directly is outside it, as any data-dependent message).
    Its error, its warnings and its output are dropped.  When no run yields a
    model the search raises a ``ValueError`` naming no run, value or count (and
    chaining none).  The release is the whole search's, so its whole event is
    charged as soon as any run's noise ran (a charge for the runs made would
    tell K), also when the search then raises or is interrupted; nothing of a
    failed fit stays on the search.  A run whose privacy event is not one the
    budget covers stops the search (``ValueError``, checked before the run's
    noise for a value drawn from a distribution, after its fit otherwise, then
    charged).

    Parameters
    ----------
    estimator : estimator following the private-estimator contract
        Its ``epsilon`` (and ``delta``) are set per run; everything else it has is
        kept unless a drawn hyperparameter overrides it.
    param_distributions : dict or list of dict
        As for :class:`sklearn.model_selection.RandomizedSearchCV`: lists are
        sampled uniformly, scipy distributions with ``rvs``.  Must not name
        ``epsilon``, ``delta`` or ``accountant``.  A parameter that changes the
        runs' privacy event must be a list (the budget is calibrated on every
        point of the lists' product, at most 2000 points and probes).
    epsilon : float, default=1.0
        Total budget of the search, > 0.
    delta : float, default=1e-5
        In [0, 1); 0 for a pure-DP search.
    n_runs : float, default=10.0
        Mean number of runs E[K], > 1.
    distribution : {"geometric", "negative_binomial", "logarithmic"}, default="geometric"
        Law of K (pure-DP searches use "geometric").
    shape : float, default=1.0
        :math:`\eta` of ``"negative_binomial"``, > 0.
    validation_fraction : float, default=0.2
        Share of the examples held out for scoring, in (0, 1).
    score_noise : float or "auto", default="auto"
        Standard deviation of the Gaussian noise on the number of correct
        validation predictions, > 0 (a noisy accuracy of resolution
        ``score_noise / n_validation``).  ``"auto"``: ``30 / epsilon``, whose
        zCDP cost :math:`\rho = \varepsilon^2/1800` is under a tenth of a run's
        share of the budget at delta = 1e-5 (a resolution of 0.6 accuracy points
        with 5,000 validation examples at epsilon = 1).
    n_samples_public : int or None, default=None
        The public dataset size :math:`N` (>= 4), used in place of the number of
        rows wherever it enters the guarantee: the size of the validation part,
        ``n_val = max(1, min(round(validation_fraction * N), N - 1))`` (the
        other rows, however many, train), the scale of ``best_score_``
        (a noisy count divided by ``n_val``), the shape from which the runs'
        budget is calibrated (their plans, no fit), and the runs' dataset size
        ``N - n_val``, passed on as ``n_samples_public`` to an estimator that
        has that parameter unset (one that declares its own keeps it).  None:
        :math:`N` is the number of rows, and the search warns with a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning` (once, for the search
        and its runs): a neighbour with one more or one fewer example can get
        another split size, so the guarantee covers only neighbours of the same
        size.  Data with no more rows than ``n_val`` raise ``ValueError``.
    classes : array-like of shape (n_classes,) or None, default=None
        The public label set, passed on to every run's estimator (which must have
        a ``classes`` parameter) and used, instead of the labels of ``y``, in the
        calibration of the runs' budget; ``y`` is checked against it before any
        run (a label outside it raises ``ValueError``).  None: each run's
        estimator reads the label set from its training split and warns with a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning`.
    accountant : BudgetAccountant or None, default=None
    random_state : int, numpy.random.Generator or None, default=None
        Randomness of the split, of K, of the drawn hyperparameters, of the
        scores' noise and (through a child stream per run,
        :meth:`numpy.random.Generator.spawn`, handed to the run's fit and not
        stored) of every run's training noise; the estimator's own
        ``random_state`` is not used by the runs and is kept as given on
        ``best_estimator_``.  None (the default for a release): fresh OS
        entropy, and nothing on the fitted search can regenerate the noise.  A
        seed or a Generator makes it reproducible by whoever knows it (a
        :class:`~dptoolkit.exceptions.PrivacyLeakWarning`, once per process).

    Attributes
    ----------
    best_estimator_ : estimator
        The released model (trained on the training split).
    best_params_ : dict
        Its hyperparameters.
    best_score_ : float
        Its noisy validation accuracy: (correct validation predictions + noise)
        divided by ``n_val``, a public number with ``n_samples_public`` set.
    epsilon_run_ : float
        The epsilon each run's estimator was given.
    classes_ : ndarray
        From the best estimator.
    privacy_event_ : RepeatAndSelectEvent
        Of ``ComposedEvent((training, score))``: ``training`` is the
        candidates' training event at ``epsilon_run_``, their
        :class:`~dptoolkit.accounting.events.MaxOfEvents` when they differ.
    privacy_spent_ : tuple (epsilon, delta)

    References
    ----------
    N. Papernot, T. Steinke. Hyperparameter Tuning with Renyi Differential Privacy.
    ICLR 2022 (Theorem 2).
    J. Liu, K. Talwar. Private Selection from Private Candidates. STOC 2019
    (Theorem 3.4).
    """

    _privacy_label = "private hyperparameter search"

    _parameter_constraints = {
        **PRIVATE_COMMON, "epsilon": POSITIVE, "delta": DELTA_OPTIONAL, "classes": CLASSES,
        "estimator": [Checked(_check_private, "a dptoolkit private estimator (following the "
                                              "private-estimator contract)")],
        # each distribution's names and values are checked against the estimator's
        # parameters (rules between the two) in _check_params
        "param_distributions": [Checked(_check_dists, "a dict or a non-empty list of dicts")],
        "n_runs": [Interval("real", 1.0, 1e6, closed="right")],
        "distribution": [Options(*_DISTRIBUTIONS)],
        "shape": [Interval("real", 0.0, 1e3, closed="right")],  # used by negative_binomial
        "validation_fraction": FRACTION_OPEN, "score_noise": [Options("auto"), *POSITIVE],
    }

    def __init__(self, estimator, param_distributions, *, epsilon=1.0, delta=1e-5, n_runs=10.0,
                 distribution="geometric", shape=1.0, validation_fraction=0.2,
                 score_noise="auto", n_samples_public=None, classes=None, accountant=None,
                 random_state=None):
        self.estimator = estimator
        self.n_samples_public = n_samples_public
        self.classes = classes
        self.param_distributions = param_distributions
        self.epsilon = epsilon
        self.delta = delta
        self.n_runs = n_runs
        self.distribution = distribution
        self.shape = shape
        self.validation_fraction = validation_fraction
        self.score_noise = score_noise
        self.accountant = accountant
        self.random_state = random_state

    # ------------------------------------------------------------------ checks
    def _check_params(self):
        """The validated parameters as the search uses them: their ranges are the
        constraint table's (checked once); the rules between them here."""
        epsilon, delta = self._check_budget(optional=False)
        if getattr(self.estimator, "neighbouring", "add_remove") != "add_remove":
            raise ValueError("the search's guarantee is for add/remove neighbours: the "
                             "estimator must use neighbouring='add_remove'")
        dists = self.param_distributions
        dists = [dists] if isinstance(dists, dict) else list(dists)
        for d in dists:
            bad = {"epsilon", "delta", "accountant"} & set(d)
            if bad:
                raise ValueError(f"param_distributions must not set {sorted(bad)}: the "
                                 "search sets each run's budget")
            unknown = set(d) - set(self.estimator.get_params())
            if unknown:
                raise ValueError(f"param_distributions names parameters that "
                                 f"{type(self.estimator).__name__} does not have: "
                                 f"{sorted(unknown)}")
            for name, values in d.items():
                # checked here, before the (slow) calibration, rather than when a
                # run draws from it
                if hasattr(values, "rvs"):
                    continue
                if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
                    raise TypeError(f"param_distributions[{name!r}] must be a non-empty "
                                    "list of values or a distribution with rvs, got "
                                    f"{type(values).__name__}")
                if len(values) == 0:
                    raise ValueError(f"param_distributions[{name!r}] must be a non-empty "
                                     "list of values, got an empty one")
        mean, shape = float(self.n_runs), float(self.shape)
        shape = {"geometric": 1.0, "logarithmic": 0.0}.get(self.distribution, shape)
        if delta == 0.0 and self.distribution != "geometric":
            raise ValueError("a pure-DP search (delta=0) needs distribution='geometric' "
                             "(Liu and Talwar 2019, Theorem 3.4)")
        frac = float(self.validation_fraction)
        noise = None if self.score_noise == "auto" else float(self.score_noise)
        grid, probes = _candidates(dists)
        return SearchParams(epsilon=epsilon, delta=delta, mean=mean, shape=shape, frac=frac,
                            noise=noise, dists=dists, grid=grid, probes=probes)

    # --------------------------------------------------------------------- fit
    def _draw_k(self, p, rng):
        """K >= 1, drawn from the law of K (the tests replace it to fix K)."""
        return _draw_k(p.shape, p.mean, rng)


    def fit(self, X, y):
        """Run the search and keep the best model.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self

        Raises
        ------
        ValueError, TypeError
            X or y invalid (empty, not 2-D, of different lengths, NaN or
            infinity, complex; checked first, with scikit-learn's messages);
            invalid parameters (named; ``classes`` set for an estimator without
            a ``classes`` parameter; ``n_samples_public`` below 4; a
            distribution over a parameter that changes the runs' privacy
            event; more than 2000 points and probes in
            ``param_distributions``; an ``epsilon`` that leaves each run less
            than the estimator accepts, e.g. the Sparsifier's
            ``epsilon_count``), labels of ``y`` outside ``classes``, data with
            no more rows than the validation part; no run yielded a model (a
            message naming no run; charged if any run's noise ran); a run's
            privacy event outside the budget's.
        BudgetExceededError
            The accountant cannot pay; no run is made.

        Warns
        -----
        PrivacyLeakWarning
            ``n_samples_public`` is None: the split sizes, the runs' dataset
            size and the scale of ``best_score_`` were taken from the data.
        Warning
            Each distinct warning of the released run, once, in its category
            (e.g. a :class:`~dptoolkit.exceptions.PrivacyLeakWarning`) and
            marked as outside the guarantee
            (``dptoolkit._private.DATA_DEPENDENT_NOTE``: which run is released
            depends on the data).  The other runs' warnings, data-dependent
            ones included, are not passed on: they would tell which
            hyperparameters, and how many runs, the search tried.
        """
        # Its own sequence, not the template's (PrivateEstimatorMixin.fit): the runs'
        # count is random and the spend is the search's guarantee, recorded after the
        # runs; the parameters are still checked once, by the table.
        validate_params(self)
        # shape, dtype, finiteness, empty and 1-D input, with scikit-learn's messages;
        # sparse X in any SciPy format (CSR below)
        check_X_y_named(X, y)
        X, y = validate_data(self, X, y, accept_sparse=True, reset=True)
        if isinstance(self.estimator, BaseEstimator) and is_classifier(self.estimator):
            # here, not in the runs: a run's error is not passed on (it could tell
            # which run failed), so a label type no run can take is refused first
            check_classification_targets(y)
        n = y.shape[0]
        N, n_val = self._split_sizes(n)
        rng = self._noise_rng()
        # public split sizes (from n_samples_public); only the permutation sees n
        if n <= n_val:
            raise data_dependent_error(
                f"X and y have too few examples for a validation part of {n_val} "
                "(validation_fraction * n_samples_public) and a training part")
        if self.classes is not None:    # y checked against the declared label set
            self._resolve_classes(y, private=True)
        perm = rng.permutation(n)  # the split: uniform, of public sizes
        val, train = perm[:n_val], perm[n_val:]
        Xs = sp.csr_array(X) if sp.issparse(X) else np.asarray(X)
        X_train, y_train, X_val, y_val = Xs[train], y[train], Xs[val], y[val]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # the split sizes warned above
            # the label set enters the runs' events: the declared one, else the data's
            plan = self._privacy_plan(n, Xs.shape[1], None if self.classes is not None
                                      else np.unique(y_train))
        p, template, eps_run, train_events = (plan.params.validated, plan.params.template,
                                              plan.params.epsilon_run,
                                              plan.params.train_events)
        self._check_spend(plan.event, plan.spent)
        event, spent = plan.event, plan.spent
        k = self._draw_k(p, rng)  # K stays local: the theorems release the best run only
        self._forget_fit()          # a failed refit must not leave the last release on
        streams = []
        try:
            best = _run_all(p, k, rng, template, eps_run, train_events, streams,
                            X_train, y_train, X_val, y_val, n_val)
        except BaseException as exc:
            # the whole search's event is the release Papernot and Steinke account
            # for: once a run's noise ran it is charged in full (a charge for "what
            # ran" would tell how many runs there were); before any run's noise,
            # nothing ran that the event covers, and the contract's guard of this
            # fit (which saw the search's own stream handed out) must not charge
            if any(s.touched() for s in streams):
                self._charge_failed(event, spent)
            else:
                nothing_released(exc)
            raise
        if best[1] is None:     # every run failed: nothing to release
            charged = any(s.touched() for s in streams)
            if charged:
                self._charge_failed(event, spent)
            error = data_dependent_error(
                "no run of the search could be fitted and scored (each raised an "
                "error), so there is no model to release"
                + ("; the search's privacy event was charged, as its runs' noise ran"
                   if charged else "") + ".  Fit the estimator alone to see its error")
            raise error if charged else nothing_released(error)
        self.best_score_, self.best_estimator_, self.best_params_, caught = best
        # the runs were silenced; the released model keeps the verbosity it was given
        self.best_estimator_.set_params(**_verbose_params(template))
        _reemit_released_warnings(caught)
        self.epsilon_run_ = float(eps_run)
        if hasattr(self.best_estimator_, "classes_"):
            self.classes_ = self.best_estimator_.classes_
        self.n_features_in_ = Xs.shape[1]
        return self._record_spend(event, spent)

    def _split_sizes(self, n_samples):
        """``(N, n_val)``: the public dataset size and validation-part size."""
        frac = float(self.validation_fraction)      # validated by the constraint table
        if self.n_samples_public is not None:
            N = int(self.n_samples_public)
            if N < 4:
                raise ValueError("n_samples_public must be at least 4 for the search (runs "
                                 "train on one part and are scored on another), got "
                                 f"{N}")
        else:
            N = self._n_samples(n_samples, private=True, uses="the sizes of the validation "
                                "and training splits, the runs' dataset size and the "
                                "scale of best_score_")
            if N < 4:
                raise data_dependent_error("X and y need at least 4 examples for the "
                                           "search (runs train on one part and are "
                                           f"scored on another), got {n_samples} "
                                           "sample(s)")
        return N, min(max(1, int(round(frac * N))), N - 1)

    def _privacy_plan(self, n_samples, n_features, classes):
        """The plan (:meth:`~dptoolkit._private.PrivateEstimatorMixin._privacy_plan`):
        the calibrated runs' events repeated a random number of times; ``params`` a
        :class:`SearchPlan`.  ``classes``: the training part's label set (the
        declared ``classes`` when set)."""
        p = self._check_params()
        N, n_val = self._split_sizes(n_samples)
        template = self._declare_classes_on(clone(self.estimator), ())
        params = template.get_params()
        if "n_samples_public" in params and params["n_samples_public"] is None:
            # the runs train on the training part: its size, public with N
            template.set_params(n_samples_public=N - n_val)
        if self.classes is not None or classes is None:
            classes = template.get_params().get("classes")
        if classes is None:
            raise ValueError("planning the search needs the label set: declare classes, "
                             "or pass classes or y to plan_spend")
        label_set = tuple(np.asarray(classes).tolist())
        if p.noise is None:
            p = dataclasses.replace(p, noise=30.0 / p.epsilon)
        # the training part's public shape, and labels of the label set
        shape = (N - n_val, n_features)
        y_standin = np.resize(np.asarray(label_set), N - n_val)
        key = (repr(sorted(template.get_params().items())), type(template),
               repr([(f.name, getattr(p, f.name)) for f in dataclasses.fields(p)
                     if f.name != "dists"]), shape,
               label_set)
        if key not in _CALIBRATIONS:  # a function of public quantities only
            if len(_CALIBRATIONS) > 64:
                _CALIBRATIONS.clear()
            _CALIBRATIONS[key] = _calibrate(p, template, shape, y_standin)
        eps_run, train_events = _CALIBRATIONS[key]
        run_event = _run_event(p, train_events, eps_run)
        # pure search: the runs' floating-point deltas, union bound over E[K] runs
        spent = (p.epsilon, p.delta or p.mean * basic_guarantee(run_event)[1])
        return self._plan(_search_event(p, run_event), spent, SearchPlan(
            p, template, eps_run, train_events, N, n_val))

    def _forget_fit(self):
        """Remove a previous fit's release (a failed refit must not leave it on)."""
        for name in ("best_estimator_", "best_params_", "best_score_", "epsilon_run_",
                     "classes_", "privacy_event_", "privacy_spent_"):
            self.__dict__.pop(name, None)

    def _charge_failed(self, event, spent):
        """Charge the search's event for a search that failed after its runs' noise
        ran; nothing is left on the search (it released nothing)."""
        try:
            self._record_spend(event, spent)
        finally:
            self._forget_fit()

    # ------------------------------------------------------------------ outputs
    def predict(self, X):
        """Predictions of the best model."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict(X)

    @available_if(estimator_has("decision_function", "best_estimator_"))
    def decision_function(self, X):
        """Decision function of the best model."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.decision_function(X)

    @available_if(estimator_has("predict_proba", "best_estimator_"))
    def predict_proba(self, X):
        """Class probabilities of the best model."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.predict_proba(X)

    def __sklearn_tags__(self):
        """The estimator's type, classifier / regressor and sparse-input tags."""
        return delegated_tags(super().__sklearn_tags__(), self.estimator)

    def score(self, X, y):
        """Score of the best model on (X, y) (reads the data: not private)."""
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_.score(X, y)

