"""PrivateSelectThenFit with Frank-Wolfe's naive-Bayes start on the selected columns.

Where Frank-Wolfe alone on the pipeline's input would start from naive Bayes
(``start="auto"``: a private two-class fit with zCDP accounting on more columns than
its screening keeps), the pipeline keeps Frank-Wolfe's release of the per-class sums
on all the selected columns (its screening selects nothing: the release buys only
the start), so that:

* the estimator's event holds that Gaussian release and the pair still spends
  exactly (epsilon, delta), as planned before the fit;
* the start is ``naive_bayes_start`` of the released sums of the selected columns
  (replayed from the seed): a function of the two releases only;
* where Frank-Wolfe alone would start from zero (few columns, pure DP) nothing
  changes; an explicit ``start="naive_bayes"`` is honoured on few columns too.

The first three tests fail on the former pipeline (``k=None`` inside it, so
``start="auto"`` fell back to the zero start).  No statistical assertion.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit._private import plan_spend
from dptoolkit.accounting import epsilon_of_event
from dptoolkit.accounting.events import GaussianEvent
from dptoolkit.linear_model import FrankWolfeLassoClassifier
from dptoolkit.linear_model._frank_wolfe import _estimator as fw_estimator
from dptoolkit.linear_model._frank_wolfe._screening import naive_bayes_start, screening_statistic
from dptoolkit.selection import DPSIS, PrivateSelectThenFit

N, D = 300, 2000        # D > 1024: Frank-Wolfe alone would screen and start from naive Bayes


def _text_like(seed=0, d=D):
    rng = np.random.default_rng(seed)
    X = sp.random_array((N, d), density=0.02, rng=rng, format="csr")
    X.data[:] = 1.0
    y = (np.asarray(X[:, :5].sum(axis=1)).ravel() + rng.random(N) > 0.6).astype(int)
    return X, y


def _pipe(k=600, delta=1e-5, epsilon=1.0, **fw):
    return PrivateSelectThenFit(
        DPSIS(k=k, y_bounds=(0, 1), n_samples_public=N, random_state=0),
        FrankWolfeLassoClassifier(**{"n_samples_public": N, "random_state": 0, **fw}),
        epsilon=epsilon, delta=delta, classes=[0, 1])


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


@pytest.fixture
def starts(monkeypatch):
    """The (sums, columns, l1_bound, noise_std) naive_bayes_start is called with."""
    log = []

    def recorded(sums, columns, l1_bound, noise_std, **kw):
        w0 = naive_bayes_start(sums, columns, l1_bound, noise_std, **kw)
        log.append((np.array(sums), np.array(columns), l1_bound, noise_std, w0))
        return w0

    monkeypatch.setattr(fw_estimator, "naive_bayes_start", recorded)
    return log


def test_the_release_keeps_all_selected_columns(starts):
    X, y = _text_like()
    pipe = _fit(_pipe(), X, y)
    fw = pipe.estimator_
    assert pipe.support_.sum() == 600 == fw.k
    np.testing.assert_array_equal(fw.screened_features_, np.arange(600))
    assert fw.coef_.shape == (1, 600)
    assert pipe.estimator.k == "auto"            # the user's object
    # the estimator's event: its Gaussian release of the per-class sums, then the steps
    assert any(isinstance(e, GaussianEvent) for e in fw.privacy_event_.events)
    (sums, columns, l1_bound, noise_std, w0), = starts
    assert sums.shape == (2, 600) and l1_bound == fw.l1_bound_


def test_the_pair_still_spends_exactly_the_budget():
    X, y = _text_like()
    pipe = _pipe()
    planned = plan_spend(pipe, X, y)
    _fit(pipe, X, y)
    assert planned == (pipe.privacy_event_, pipe.privacy_spent_)
    eps, delta = pipe.privacy_spent_
    assert delta == 1e-5 and eps <= 1.0 * (1 + 1e-12) and eps == pytest.approx(1.0, rel=1e-7)
    assert eps == epsilon_of_event(pipe.privacy_event_, delta)
    # the estimator's share pays for its release: its steps get less than from zero
    zero = _fit(_pipe(start="zero"), X, y)
    assert pipe.estimator_.epsilon == pytest.approx(zero.estimator_.epsilon)
    assert pipe.estimator_.epsilon_step_ < zero.estimator_.epsilon_step_


def test_the_start_is_post_processing_of_the_releases(starts):
    """Replayed from the seeds: the selected columns (DP-SIS's release), then
    Frank-Wolfe's Gaussian release of their per-class sums with its noise
    multiplier, and naive_bayes_start of those sums."""
    X, y = _text_like()
    pipe = _fit(_pipe(epsilon=20.0), X, y)     # some column sums above 4 noise sds
    fw = pipe.estimator_
    budget = fw.budget(600, n_samples=N)
    assert budget.screening_noise_multiplier is not None
    sums = screening_statistic(X[:, pipe.support_], "mass", y.astype(np.int64), 2,
                               class_sums=True)
    sums += np.random.default_rng(0).normal(0.0, budget.screening_noise_multiplier,
                                            sums.shape)
    (released, columns, _, noise_std, w0), = starts
    np.testing.assert_allclose(released, sums, rtol=0, atol=1e-9)
    assert noise_std == budget.screening_noise_multiplier
    np.testing.assert_array_equal(
        w0, naive_bayes_start(released, np.arange(600), fw.l1_bound_, noise_std))
    assert np.count_nonzero(w0) > 0


@pytest.mark.parametrize("d, delta, start", [(800, 1e-5, "auto"), (D, None, "auto"),
                                             (D, 1e-5, "zero")])
def test_no_start_where_frank_wolfe_alone_starts_from_zero(starts, d, delta, start):
    """800 columns (Frank-Wolfe alone would not screen them), pure DP (no zCDP
    screening) or the zero start asked for: no release, no start, as before."""
    X, y = _text_like(d=d)
    pipe = _fit(_pipe(delta=delta, start=start), X, y)
    assert pipe.estimator_.screened_features_ is None and starts == []
    assert not any(isinstance(e, GaussianEvent)
                   for e in getattr(pipe.estimator_.privacy_event_, "events", ()))


def test_an_explicit_start_is_honoured_on_few_columns(starts):
    X, y = _text_like(d=800)
    pipe = _fit(_pipe(start="naive_bayes"), X, y)
    assert pipe.estimator_.k == 600 and len(starts) == 1
    with pytest.raises(ValueError, match="start"):      # pure DP: no release to start from
        _fit(_pipe(delta=None, start="naive_bayes"), X, y)
