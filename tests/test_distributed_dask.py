"""Private fits on a Dask cluster: exact per-block sums, noise once on the client.

One ``LocalCluster`` of two single-threaded worker processes serves the module.
Every check is exact or a comparison with the in-memory fit at the same seed
(relative 1e-9: only the summation order differs); nothing here is statistical.
"""
import logging
import os
import sys
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

distributed = pytest.importorskip(
    "dask.distributed", reason="dask[distributed] is not installed (pip install "
    "dptoolkit[dask]); the distributed backend is optional")
import cloudpickle  # noqa: E402  (a dependency of distributed)
import dask  # noqa: E402
import dask.array as da  # noqa: E402

from dptoolkit.distributed import (class_feature_sums, clipped_gradient_sum,  # noqa: E402
                                   column_counts, column_sums, map_row_blocks)
from dptoolkit.distributed import _blocksum  # noqa: E402
from dptoolkit.distributed import _engine, _seeds  # noqa: E402
from dptoolkit.linear_model._glm import _dask_sgd as _sgd_rounds  # noqa: E402
from dptoolkit.linear_model._frank_wolfe import _fw_fast  # noqa: E402
from dptoolkit.exceptions import PrivacyLeakWarning  # noqa: E402
from dptoolkit.linear_model import DPNBLogisticClassifier  # noqa: E402
from dptoolkit.linear_model._glm._nb_logistic import _transform  # noqa: E402

# the workers cannot import this file: ship its functions by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])

N, D, CHUNK = 600, 300, 150  # four row blocks


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = sp.csr_array((rng.random((N, D)) < 0.05) * rng.integers(1, 4, (N, D)),
                     dtype=np.float64)
    y = (X[:, :5].sum(axis=1) > X[:, 5:10].sum(axis=1)).astype(np.int64)
    return X, y


def _load_block(X, i, marker=None, kill="never"):
    """Row block ``i`` of X; with ``kill``, the worker process dies while loading it:
    ``"once"`` the first time (a marker file remembers), ``"always"`` every time."""
    if kill == "always" or (kill == "once" and not os.path.exists(marker)):
        if kill == "once":
            open(marker, "w").close()
        os._exit(1)
    return sp.csr_matrix(X[i * CHUNK:(i + 1) * CHUNK])


def _dask(X, y, **kill):
    blocks = [da.from_delayed(dask.delayed(_load_block, pure=False)(X, i, **kill),
                              shape=(CHUNK, X.shape[1]), dtype=np.float64,
                              meta=sp.csr_matrix((0, 0)))
              for i in range(X.shape[0] // CHUNK)]
    return da.concatenate(blocks, axis=0), da.from_array(np.asarray(y), chunks=CHUNK)


@pytest.fixture(scope="module")
def client():
    # one retry of a task whose worker died, then KilledWorker (the default is 3)
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = distributed.LocalCluster(n_workers=2, processes=True,
                                           threads_per_worker=1, dashboard_address=None,
                                           silence_logs=logging.CRITICAL)
        with distributed.Client(cluster) as c:
            yield c
        cluster.close()


@pytest.fixture
def live(client):
    # a killing test may have just run: its worker's nanny starts a new one; if that
    # one has not arrived after a minute (seen once on a loaded machine), restart the
    # workers rather than fail the next test on the cluster's set-up
    try:
        client.wait_for_workers(2, timeout=60)
    except Exception:
        client.cluster.scale(2)
        client.restart(timeout=180, wait_for_workers=False)
        client.wait_for_workers(2, timeout=180)
    return client


def _model(**kw):
    return DPNBLogisticClassifier(**{"epsilon": 2.0, "k": 40,
                                     "n_samples_public": N, "classes": [0, 1],
                                     "n_epochs": 2, "sampling_rate": 0.1, **kw})


def _fit(X, y, rng):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the fixed seed
        return _model(random_state=rng).fit(X, y)


def _assert_same_release(a, b):
    np.testing.assert_array_equal(a.feature_indices_, b.feature_indices_)
    np.testing.assert_allclose(a.log_count_ratios_, b.log_count_ratios_, rtol=1e-9)
    np.testing.assert_allclose(a.theta_, b.theta_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    assert a.privacy_event_ == b.privacy_event_
    assert a.privacy_spent_ == b.privacy_spent_
    assert a.noise_multipliers_ == b.noise_multipliers_


# ------------------------------------------------------------- primitive
def test_primitives_match_in_memory(live):
    X, y = _data()
    Xd, yd = _dask(X, y)
    coef = np.random.default_rng(1).normal(size=(1, D))
    for local, dist in [
        (class_feature_sums(X, y, [0, 1], normalize_rows=True),
         class_feature_sums(Xd, yd, [0, 1], normalize_rows=True)),
        (column_sums(X), column_sums(Xd)),
        (column_counts(X), column_counts(Xd)),
        (clipped_gradient_sum(X, y, coef, [0.5], clip=1.0),
         clipped_gradient_sum(Xd, yd, coef, [0.5], clip=1.0)),
    ]:
        np.testing.assert_allclose(dist, local, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(column_counts(X), (X != 0).sum(axis=0))
    Z = map_row_blocks(_transform, Xd, (np.arange(10), np.ones(10)))
    assert Z.indices.dtype == np.int64 and Z.shape == (N, 11)
    np.testing.assert_array_equal(Z.toarray(), _transform(X, np.arange(10),
                                                          np.ones(10)).toarray())


def test_clipped_gradient_sum_is_the_sum_of_clipped_terms():
    X, y = _data()
    X, y = X[:50], y[:50]
    rng = np.random.default_rng(2)
    for K, labels in [(1, y), (3, rng.integers(0, 3, 50))]:
        coef, b = rng.normal(size=(K, D)), rng.normal(size=K)
        want = np.zeros((K, D + 1))
        for i in range(50):
            x1 = np.append(X[[i]].toarray().ravel(), 1.0)
            m = coef @ x1[:-1] + b
            if K == 1:
                r = 1.0 / (1.0 + np.exp(-m)) - labels[i]
            else:
                r = np.exp(m - m.max()) / np.exp(m - m.max()).sum()
                r[labels[i]] -= 1.0
            g = np.outer(r, x1)
            want += g * min(1.0, 0.3 / np.linalg.norm(g))
        got = clipped_gradient_sum(X, labels, coef, b, clip=0.3)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_block_sums_are_added_in_block_order(live):
    X, y = _data()
    Xd, yd = _dask(X, y)
    want = np.zeros((2, D))
    for i in range(N // CHUNK):
        want += _blocksum._class_sums_block(X[i * CHUNK:(i + 1) * CHUNK],
                                            y[i * CHUNK:(i + 1) * CHUNK],
                                            np.array([0, 1]), True)
    for _ in range(2):  # bit for bit, every time
        np.testing.assert_array_equal(class_feature_sums(Xd, yd, [0, 1],
                                                         normalize_rows=True), want)


def test_block_functions_are_pure_and_draw_nothing(live):
    """A retried or speculative task returns the same value: every function the
    engine runs is a pure function of its block and draws no random numbers."""
    X, y = _data()
    Xb, yb = X[:CHUNK], y[:CHUNK]
    coef = np.random.default_rng(3).normal(size=(1, D))
    calls = [(_blocksum._class_sums_block, (Xb, yb, np.array([0, 1]), True)),
             (_blocksum._column_sums_block, (Xb, None, False)),
             (_blocksum._column_counts_block, (Xb, None)),
             (_blocksum._gradient_block, (Xb, yb, coef, np.zeros(1), 1.0)),
             (_transform, (Xb, np.arange(7), np.full(7, 2.0)))]

    def run_twice():
        np.random.seed(0)
        before = np.random.get_state()[1].copy()
        out = [[f(*a) for f, a in calls] for _ in range(2)]
        assert np.array_equal(np.random.get_state()[1], before)  # legacy RNG untouched
        return out

    for first, second in live.run(run_twice).values():  # on every worker
        for a, b in zip(first, second):
            a, b = (v.toarray() if sp.issparse(v) else v for v in (a, b))
            np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------- the estimator
def _assert_same_first_release(a, b):
    """The release and its post-processing are the in-memory ones (the noise of the
    release is the generator's first draw in both)."""
    np.testing.assert_array_equal(a.feature_indices_, b.feature_indices_)
    np.testing.assert_allclose(a.log_count_ratios_, b.log_count_ratios_, rtol=1e-9)
    assert a.privacy_event_ == b.privacy_event_
    assert a.privacy_spent_ == b.privacy_spent_
    assert a.noise_multipliers_ == b.noise_multipliers_
    assert a.n_steps_ == b.n_steps_


def _sampling_words(rng, n_blocks):
    """The blocks' seed words: 32 bytes drawn from the noise generator ``rng``,
    their SHA-256 digest (under the engine's label) seeds the sampling
    SeedSequence, and block b gets generate_state(8) of its b-th child."""
    import hashlib

    digest = hashlib.sha256(_seeds._SAMPLING_LABEL + rng.bytes(32)).digest()
    seq = np.random.SeedSequence(int.from_bytes(digest, "little"))
    return [c.generate_state(8) for c in seq.spawn(n_blocks)]


def _dpnb_sgd_reference(model, X, y, seed, theta0=None):
    """DPNB's DP-SGD stage on a Dask X, written out example by example: the rows
    transformed with the fitted vocabulary and ratios; the lot of step s in block b
    from PCG64(SeedSequence(words_b, spawn_key=(s,))), words_b of the sampling
    sequence seeded from a draw of the generator (_sampling_words, after the
    release's noise); each per-example gradient
    (logistic, or softmax clipped to Frobenius norm 1); dense noise from the
    generator after the release's; the average of the iterates of the last half
    of the steps (fewer than 25 here, so all of them)."""
    K = model.classes_.size
    Z = _transform(X, model.feature_indices_, model.log_count_ratios_).toarray()
    M = Z.shape[1]
    noise_rng = np.random.default_rng(seed)
    sigma1, sigma2 = model.noise_multipliers_ or (0.0, 0.0)
    # the release's noise (drawn also at sigma1 = 0, non-private: the draws move
    # the generator before the sampling words)
    noise_rng.normal(0.0, sigma1, (K, D))
    words = _sampling_words(noise_rng, N // CHUNK)
    q, lr, lam, T = model.sampling_rate, model.learning_rate_, model.alpha, model.n_steps_
    L = q * N
    shape = (M,) if K == 2 else (M, K)
    if theta0 is None:     # two classes: naive Bayes's start, (1, ..., 1, 0)
        theta0 = np.append(np.ones(M - 1), 0.0)
    theta = theta0.copy()
    start = int(np.floor((1 - model.averaging_fraction) * T))
    trace = []
    for s in range(T):
        g = np.zeros(shape)
        for b in range(N // CHUNK):
            gen = np.random.Generator(np.random.PCG64(
                np.random.SeedSequence([int(w) for w in words[b]], spawn_key=(s,))))
            u = gen.random(CHUNK)
            for i in np.flatnonzero(u < q) + b * CHUNK:
                z = Z[i]
                if K == 2:
                    t = 1.0 if y[i] == 1 else -1.0
                    g += -t / (1.0 + np.exp(t * (z @ theta))) * z
                else:
                    m = z @ theta
                    p = np.exp(m - m.max()) / np.exp(m - m.max()).sum()
                    p[y[i]] -= 1.0
                    gi = np.outer(z, p)
                    g += gi * min(1.0, 1.0 / np.linalg.norm(gi))
        theta = (1 - lr * lam) * theta - lr * g / L
        if sigma2:
            theta += lr * sigma2 / L * noise_rng.standard_normal(shape)
        if s >= start:
            trace.append(theta)
    return np.mean(trace, axis=0)


def test_same_release_and_event_and_per_block_dp_sgd(live):
    """The release is the in-memory one; DP-SGD runs on the workers with per-block
    Poisson lots (the reference above, relative 1e-9): the same randomised
    algorithm and privacy event as in memory, not the same draws."""
    X, y = _data()
    Xd, yd = _dask(X, y)
    mem, dist = _fit(X, y, np.random.default_rng(7)), _fit(Xd, yd, np.random.default_rng(7))
    _assert_same_first_release(dist, mem)
    want = _dpnb_sgd_reference(dist, X, y, 7)
    np.testing.assert_allclose(dist.theta_, want, rtol=1e-9, atol=1e-12)
    assert dist.n_features_in_ == D
    assert np.mean(dist.predict(X) == y) > 0.8
    # a second fit with the same seed releases the same model, bit for bit
    np.testing.assert_array_equal(_fit(Xd, yd, np.random.default_rng(7)).theta_,
                                  dist.theta_)


def test_multiclass_fit_is_the_per_block_softmax_dp_sgd(live):
    """Three classes: the K per-class sums come from the workers, softmax DP-SGD
    (Frobenius clipping to 1) runs over the blocks from naive Bayes's start."""
    X, _ = _data()
    y = (X[:, :3].sum(axis=1) + X[:, 3:6].sum(axis=1) * 2).astype(np.int64) % 3
    Xd, yd = _dask(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the fixed seed
        mem = _model(classes=[0, 1, 2], random_state=np.random.default_rng(3)).fit(X, y)
        dist = _model(classes=[0, 1, 2], random_state=np.random.default_rng(3)).fit(Xd, yd)
    _assert_same_first_release(dist, mem)
    assert mem.coef_.shape == dist.coef_.shape == (3, D)
    # naive Bayes's start, as in memory: theta_0 = centred log-probabilities / spread
    start = np.zeros((dist.feature_indices_.size + 1, 3))
    sums = class_feature_sums(X, y, [0, 1, 2], normalize_rows=True)
    noisy = sums + np.random.default_rng(3).normal(0.0, dist.noise_multipliers_[0],
                                                   sums.shape)
    pos = np.maximum(noisy[:, dist.feature_indices_], 0.0) + dist.noise_multipliers_[0]
    log_prob = np.log(pos) - np.log(pos.sum(axis=1, keepdims=True))
    centred = log_prob - log_prob.mean(axis=0)
    start[:-1] = centred.T / dist.log_count_ratios_[:, None]
    want = _dpnb_sgd_reference(dist, X, y, 3, theta0=start)
    np.testing.assert_allclose(dist.theta_, want, rtol=1e-9, atol=1e-12)


def test_non_private_fit_on_dask(live):
    X, y = _data()
    Xd, yd = _dask(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        mem = _model(epsilon=None, random_state=0).fit(X, y)
        dist = _model(epsilon=None, random_state=0).fit(Xd, yd)
    _assert_same_first_release(dist, mem)
    np.testing.assert_allclose(dist.theta_, _dpnb_sgd_reference(dist, X, y, 0),
                               rtol=1e-9, atol=1e-12)


def test_private_fit_without_n_samples_public_is_refused(live):
    X, y = _data()
    Xd, yd = _dask(X, y)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(ValueError, match="n_samples_public"):
        _fit_without_n = _model(n_samples_public=None, random_state=rng)
        _fit_without_n.fit(Xd, yd)
    assert rng.bit_generator.state == state
    assert not hasattr(_fit_without_n, "coef_")


@pytest.mark.parametrize("bad, match", [
    (lambda X, y: (X.rechunk({1: 100}), y), "chunked along rows only"),
    (lambda X, y: (X, y.rechunk(100)), "same row chunks"),
    (lambda X, y: (X, np.asarray(y)), "y must be a Dask array"),
])
def test_bad_dask_input_is_named(live, bad, match):
    X, y = _data()
    Xd, yd = bad(*_dask(X, y))
    with pytest.raises((ValueError, TypeError), match=match):
        _model(random_state=0).fit(Xd, yd)


def test_nan_in_a_block_raises_the_in_memory_error(live):
    X, y = _data()
    X = X.copy()
    X.data[-1] = np.nan  # in the last block
    Xd, yd = _dask(X, y)
    with pytest.raises(ValueError, match="NaN or infinity"):
        _fit(Xd, yd, 0)


# --------------------------------------------------------- a worker dies
def test_worker_killed_mid_fit_releases_the_same_model(live, tmp_path):
    """The task retried after its worker died recomputes the same exact sum;
    the noise (drawn on the client, once) is unchanged."""
    X, y = _data()
    Xd, yd = _dask(X, y, marker=str(tmp_path / "killed"), kill="once")
    rng_a, rng_b = np.random.default_rng(11), np.random.default_rng(11)
    dist = _fit(Xd, yd, rng_a)
    assert (tmp_path / "killed").exists()  # a worker did die mid-fit
    _assert_same_release(dist, _fit(*_dask(X, y), rng_b))
    assert rng_a.bit_generator.state == rng_b.bit_generator.state  # no redrawn noise


def test_worker_killed_during_dp_sgd_releases_the_same_model(live, monkeypatch):
    """A worker dies between two DP-SGD steps: its transformed blocks are
    recomputed from their pure tasks, the step is computed again, and the model
    is the one released without the failure; the generator is not moved twice."""
    X, y = _data()
    rng_a, rng_b = np.random.default_rng(4), np.random.default_rng(4)
    want = _fit(*_dask(X, y), rng_a)
    calls, killed = _kill_one_worker_at(live, monkeypatch, 8)
    got = _fit(*_dask(X, y), rng_b)
    assert len(calls) > 8 and calls[7] == "a step"     # the kill happened mid-DP-SGD
    assert killed[0] not in live.scheduler_info()["workers"]
    _assert_same_release(got, want)
    np.testing.assert_array_equal(got.theta_, want.theta_)
    assert rng_a.bit_generator.state == rng_b.bit_generator.state


def test_workers_dying_during_dp_sgd_stop_the_fit_unreleased(live, monkeypatch):
    """More deaths than distributed.scheduler.allowed-failures (1 here): a
    RuntimeError, no model and nothing charged."""
    X, y = _data()
    _kill_one_worker_at(live, monkeypatch, 6, 10)
    model = _model(random_state=np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(RuntimeError, match="died repeatedly.*nothing was released"):
            model.fit(*_dask(X, y))
    assert not hasattr(model, "coef_") and not hasattr(model, "privacy_spent_")


def test_workers_dying_repeatedly_stop_the_fit_before_any_noise(live):
    X, y = _data()
    Xd, yd = _dask(X, y, kill="always")
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    model = _model(random_state=rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(RuntimeError, match="died repeatedly.*No noise was drawn"):
            model.fit(Xd, yd)
    assert rng.bit_generator.state == state  # no noise drawn, none to redraw
    assert not hasattr(model, "coef_") and not hasattr(model, "privacy_spent_")


# ------------------------------------------------------------------ DP-SIS
@pytest.mark.parametrize("selector", ["canonical_lipschitz", "peeling", "gaussian"])
def test_dpsis_selects_as_in_memory(live, selector):
    from dptoolkit.exceptions import DataClippedWarning
    from dptoolkit.selection import DPSIS

    X, _ = _data()
    y = np.random.default_rng(4).normal(size=N)
    Xd, yd = _dask(X, y)
    models = []
    for XX, yy in [(X, y), (Xd, yd)]:
        rng = np.random.default_rng(5)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            m = DPSIS(k=6, epsilon=1.0, bounds=(0.0, 2.0), y_bounds=(-2.0, 2.0),
                      mechanism=selector, random_state=rng,
                      delta=1e-5 if selector == "gaussian" else None).fit(XX, yy)
        # the values 3 above the bound are clipped on the workers too
        assert any(issubclass(w.category, DataClippedWarning) for w in seen)
        models.append((m, rng.bit_generator.state))
    (mem, s_mem), (dist, s_dist) = models
    np.testing.assert_array_equal(dist.selected_features_, mem.selected_features_)
    assert dist.privacy_event_ == mem.privacy_event_ and s_dist == s_mem
    assert dist.n_features_in_ == D


def test_dpsis_refuses_data_bounds_on_dask(live):
    from dptoolkit.selection import DPSIS

    X, y = _data()
    with pytest.raises(ValueError, match="bounds='data'"):
        DPSIS(k=3, epsilon=1.0, bounds="data").fit(*_dask(X, y))


def test_dpsis_auto_k_on_dask_needs_n_samples_public(live):
    """k="auto" sets k from N: a distributed private fit never reads N from blocks."""
    from dptoolkit.selection import DPSIS, auto_k

    X, y = _data()
    with pytest.raises(ValueError, match="n_samples_public"):
        DPSIS(epsilon=1.0, y_bounds=(-2.0, 2.0), bounds=(0.0, 2.0)).fit(*_dask(X, y))
    sel = DPSIS(epsilon=1.0, y_bounds=(-2.0, 2.0), bounds=(0.0, 2.0), n_samples_public=5000,
                random_state=0).fit(*_dask(X, y))
    assert sel.k_ == auto_k(X.shape[1], 5000, 1.0)


def test_select_then_fit_on_dask_releases_the_in_memory_model(live):
    """DP-SIS then Frank-Wolfe (its naive-Bayes start on the selected columns) on a
    Dask array: the selector's ``transform`` keeps X lazy (the columns taken block
    by block), and the pipeline releases the in-memory fit's selection, model and
    spend."""
    from dptoolkit.linear_model import FrankWolfeLassoClassifier
    from dptoolkit.selection import DPSIS, PrivateSelectThenFit

    X, y = _fw_data()
    Xd, yd = _dask(X, y)

    def pipe():
        return PrivateSelectThenFit(
            DPSIS(k=1500, bounds=(0.0, 1.5), y_bounds=(0, 1), n_samples_public=N,
                  random_state=0),
            FrankWolfeLassoClassifier(n_samples_public=N, random_state=0, max_iter=100),
            epsilon=2.0, delta=1e-5, classes=[0, 1])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the fixed seeds; X above the bound 1
        mem, dist = pipe().fit(X, y), pipe().fit(Xd, yd)
    np.testing.assert_array_equal(dist.support_, mem.support_)
    assert mem.estimator_.screened_features_ is not None      # the start was taken
    np.testing.assert_allclose(dist.estimator_.coef_, mem.estimator_.coef_, rtol=1e-9,
                               atol=1e-12)
    assert dist.privacy_event_ == mem.privacy_event_
    assert dist.privacy_spent_ == mem.privacy_spent_
    reduced = dist.selector_.transform(Xd)
    assert isinstance(reduced, da.Array) and reduced.shape == (N, 1500)
    np.testing.assert_array_equal(reduced.compute().toarray(),
                                  mem.selector_.transform(X).toarray())
    with pytest.raises(ValueError, match="fitted on 4200 features"):
        dist.selector_.transform(Xd[:, :10])


def test_budget_refusal_happens_before_any_block_is_read(live):
    """An accountant that cannot pay stops the fit before the engine reads X: X's
    blocks would kill every worker that loads them, so reaching them would end in
    the RuntimeError, not in BudgetExceededError."""
    from dptoolkit.accounting import BudgetAccountant
    from dptoolkit.exceptions import BudgetExceededError

    X, y = _data()
    Xd, yd = _dask(X, y, kill="always")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(BudgetExceededError):
            _model(random_state=0, accountant=BudgetAccountant(epsilon=1.0)).fit(Xd, yd)


@pytest.mark.parametrize("labels", [np.full(N, 2), np.full(N, 0.5), np.full(N, -1)])
def test_gradient_sum_refuses_labels_that_are_not_class_indices(labels):
    X, _ = _data()
    with pytest.raises(ValueError, match=r"y must hold class indices in \[0, 2\)"):
        clipped_gradient_sum(X, labels, np.zeros((1, D)), [0.0], clip=1.0)


def _spy_on_results(monkeypatch):
    """The list of everything the workers send back to the client from now on
    (graph results and the DP-SGD actors' replies)."""
    received, compute, collect = [], _blocksum._compute, _engine._collect

    def spy(tasks, what):
        out = compute(tasks, what)
        received.extend(out)
        return out

    def spy_actors(futures):
        out = collect(futures)
        received.extend(out)
        return out

    monkeypatch.setattr(_blocksum, "_compute", spy)
    monkeypatch.setattr(_engine, "_collect", spy_actors)
    return received


def test_x_never_comes_to_the_client(live, monkeypatch):
    """Everything the fit brings back is a sum over rows (the release; a lot's
    clipped gradients on at most ``k + 1`` columns) or a block's
    warnings, never rows of X or of the transformed X; X itself is never computed
    or converted on the client."""
    X, y = _data()
    Xd, yd = _dask(X, y)
    def refuse(self, *args, **kwargs):
        if self.name == Xd.name:
            raise AssertionError("X was gathered on the client")
        return original(self, *args, **kwargs)

    original = da.Array.compute
    received = _spy_on_results(monkeypatch)
    monkeypatch.setattr(da.Array, "compute", refuse)
    monkeypatch.setattr(da.Array, "__array__", lambda self, *a, **k: refuse(self))
    model = _fit(Xd, yd, 0)
    M = model.theta_.size
    assert isinstance(received[0], np.ndarray) and received[0].shape == (2, D)
    # a chunk's reply: (theta, iterates, steps run, finite) and the log of its
    # rounds, empty (DP-SGD's rounds keep no state: nothing to replay)
    chunks = [r for r in received[1:] if isinstance(r, tuple) and len(r) == 2
              and isinstance(r[0], tuple) and len(r[0]) == 4]
    warned = [r for r in received[1:] if not any(r is c for c in chunks)]
    assert len(warned) == N // CHUNK and all(isinstance(w, tuple) for w in warned)
    assert len(warned) + len(chunks) + 1 == len(received)
    # DP-SGD: one reply per chunk of steps, the coordinator's: the noisy weights
    # after the chunk, the chunk's recorded iterates, the steps run; never a lot's
    # exact sum (the peers send those to the coordinator, inside the cluster)
    chunk = _sgd_rounds._chunk_steps(M)
    assert len(chunks) == -(-model.n_steps_ // chunk)
    for (theta, iterates, ran, finite), log in chunks:
        assert log == []
        assert theta.shape == (M,) and finite and 1 <= ran <= chunk
        assert all(it.shape == (M,) for it in iterates)


# ------------------------------------------------------------------ DP-SGD
def _sgd(**kw):
    from dptoolkit.linear_model import DPSGDClassifier, DPSGDRegressor

    cls = DPSGDRegressor if kw.pop("regressor", False) else DPSGDClassifier
    if cls is DPSGDClassifier:
        kw.setdefault("classes", [0, 1])
    return cls(**{"epsilon": 1.0, "n_samples_public": N, "batch_size": 60,
                  "n_epochs": 1.5, "learning_rate": 0.5, "clip": 0.5, **kw})


def _dpsgd_reference(X, t, noise_rng, *, q, T, lr, lam, clip, L, noise_std,
                     loss="logistic", n_classes=2):
    """Algorithm 1 of Abadi et al. written out example by example: the lot of step
    s in block b from PCG64(SeedSequence(words_b, spawn_key=(s,))), words_b of the
    sampling sequence seeded from a first draw of the generator (_sampling_words);
    dense noise N(0, I) * lr * noise_std / L from that generator after the lots.
    ``loss="softmax"``: weights (D, K), each example's gradient x (p - e_y)^T
    clipped to ``clip`` in Frobenius norm."""
    from scipy.special import expit, softmax

    from dptoolkit.linear_model._glm._base import transform_rows

    Xt, _ = transform_rows(X, "l2", False, 1.0)
    Xt = Xt.toarray()
    words = _sampling_words(noise_rng, N // CHUNK)
    shape = (D, n_classes) if loss == "softmax" else (D,)
    theta = np.zeros(shape)
    for s in range(T):
        g = np.zeros(shape)
        for b in range(N // CHUNK):
            gen = np.random.Generator(np.random.PCG64(
                np.random.SeedSequence([int(w) for w in words[b]], spawn_key=(s,))))
            u = gen.random(CHUNK)
            for i in range(CHUNK):
                if u[i] < q:
                    x, ti = Xt[b * CHUNK + i], t[b * CHUNK + i]
                    a = x @ theta
                    if loss == "softmax":
                        p = softmax(a)
                        p[int(ti)] -= 1.0
                        gi = np.outer(x, p)
                    else:
                        gi = (-ti * expit(-ti * a) if loss == "logistic" else a - ti) * x
                    norm = np.linalg.norm(gi)
                    g += gi * (min(1.0, clip / norm) if norm > 0 else 1.0)
        theta = (1 - lr * lam) * theta - lr * g / L
        theta += lr * noise_std / L * noise_rng.standard_normal(shape)
    return theta


@pytest.mark.parametrize("regressor", [False, True])
def test_dpsgd_on_dask_is_the_per_block_poisson_algorithm(live, regressor):
    """The distributed fit is Algorithm 1 with per-block Poisson lots (the
    reference above, relative 1e-9) and has the in-memory fit's privacy event."""
    X, y = _data()
    if regressor:
        y = np.random.default_rng(3).normal(size=N)
    Xd, yd = _dask(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        dist = _sgd(regressor=regressor, random_state=np.random.default_rng(5)).fit(Xd, yd)
        mem = _sgd(regressor=regressor, random_state=5).fit(X, y)
    assert dist.privacy_event_ == mem.privacy_event_
    assert dist.privacy_spent_ == mem.privacy_spent_
    assert dist.noise_multiplier_ == mem.noise_multiplier_ and dist.n_steps_ == 15
    t = y if regressor else np.where(y == 1, 1.0, -1.0)
    want = _dpsgd_reference(X, t, np.random.default_rng(5), q=60 / N, T=dist.n_steps_, lr=0.5, lam=1e-4,
                            clip=0.5, L=60, noise_std=dist.noise_std_,
                            loss="squared" if regressor else "logistic")
    np.testing.assert_allclose(np.ravel(dist.coef_), want, rtol=1e-9, atol=1e-12)


def test_dpsgd_multiclass_on_dask_is_the_per_block_softmax_algorithm(live):
    """Three classes: the softmax model of the in-memory fit (same privacy event,
    weights (K, D)), run over the blocks with per-block lots: the reference above
    with Frobenius clipping, relative 1e-9."""
    X, _ = _data()
    y = (X[:, :3].sum(axis=1) + X[:, 3:6].sum(axis=1) * 2).astype(np.int64) % 3
    Xd, yd = _dask(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        dist = _sgd(classes=[0, 1, 2], random_state=np.random.default_rng(5)).fit(Xd, yd)
        mem = _sgd(classes=[0, 1, 2], random_state=5).fit(X, y)
    assert dist.privacy_event_ == mem.privacy_event_
    assert dist.privacy_spent_ == mem.privacy_spent_
    assert dist.noise_multiplier_ == mem.noise_multiplier_ and dist.n_steps_ == 15
    assert dist.coef_.shape == mem.coef_.shape == (3, D)
    want = _dpsgd_reference(X, y, np.random.default_rng(5), q=60 / N, T=dist.n_steps_, lr=0.5, lam=1e-4,
                            clip=0.5, L=60, noise_std=dist.noise_std_, loss="softmax",
                            n_classes=3)
    np.testing.assert_allclose(dist.coef_, want.T, rtol=1e-9, atol=1e-12)
    assert np.isin(dist.predict(X), [0, 1, 2]).all()


def test_dpsgd_chunks_of_steps_release_the_same_model(live, monkeypatch):
    """The client draws the noise of a chunk of steps at once and one call runs
    them on the coordinator: any chunk length gives the weights, the recorded
    iterates and the generator's final state of one step per call (the rounds
    before chunks), bit for bit, binary and softmax."""
    from dptoolkit.linear_model._glm._dask_sgd import sgd_over_blocks
    from dptoolkit.linear_model._glm._nb_logistic import _transform_block

    X, y = _data()
    kw = dict(transform=_transform_block, transform_args=(np.arange(40),
                                                          np.linspace(0.5, 2.0, 40)),
              n_features=41, alpha=1e-4, learning_rate=2.0, clip=1.0, sampling_rate=0.1,
              denominator=60.0, n_steps=7, noise_std=0.5, record_steps=[2, 3, 6])
    for loss, t, extra in [("logistic", np.where(y == 1, 1.0, -1.0), {}),
                           ("softmax", (np.arange(N) % 3).astype(np.float64),
                            {"n_classes": 3})]:
        Xd, td = _dask(X, t)
        runs = []
        for chunk in (1, 3, 100):
            monkeypatch.setattr(_sgd_rounds, "_chunk_steps", lambda n_weights: chunk)
            rng = np.random.default_rng(8)
            runs.append(sgd_over_blocks(Xd, td, loss=loss, rng=rng, **kw, **extra)
                        + (rng.bit_generator.state,))
        for run in runs[1:]:
            np.testing.assert_array_equal(run[0], runs[0][0])
            np.testing.assert_array_equal(run[1], runs[0][1])
            assert run[2:] == runs[0][2:]


def test_dpsgd_single_dask_block_is_the_local_backend(live):
    """One Dask block and the in-memory local backend run the same algorithm: the
    same model bit for bit, and the same draws from the generator."""
    from dptoolkit.linear_model._glm._dask_sgd import sgd_over_blocks
    from dptoolkit.linear_model._glm._base import transform_rows

    X, y = _data()
    t = np.where(y == 1, 1.0, -1.0)
    out = []
    for XX, tt in [(X, t), (da.from_array(sp.csr_matrix(X), chunks=(N, D), asarray=False),
                            da.from_array(t, chunks=N))]:
        rng = np.random.default_rng(9)
        theta = sgd_over_blocks(XX, tt, transform=transform_rows,
                                transform_args=("l2", False, 1.0), n_features=D,
                                loss="logistic", alpha=1e-4, learning_rate=0.5, clip=1.0,
                                sampling_rate=0.1, denominator=60.0, n_steps=10,
                                noise_std=0.3, rng=rng)[0]
        out.append((theta, rng.bit_generator.state))
    np.testing.assert_array_equal(out[0][0], out[1][0])
    assert out[0][1] == out[1][1]


def test_dpsgd_actor_rounds_and_local_rounds_agree(live):
    """With a distributed client a step is one call per worker to an actor holding
    its blocks; with Dask's threads the blocks are held in this process.  Both run
    the same pure block function: the same model bit for bit (binary and softmax)."""
    from dptoolkit.linear_model._glm._dask_sgd import sgd_over_blocks
    from dptoolkit.linear_model._glm._nb_logistic import _transform_block

    X, y = _data()
    codes = (np.arange(N) % 3).astype(np.float64)
    cols, ratios = np.arange(40), np.linspace(0.5, 2.0, 40)
    kw = dict(transform=_transform_block, transform_args=(cols, ratios), n_features=41,
              alpha=1e-4, learning_rate=2.0, clip=1.0, sampling_rate=0.1,
              denominator=60.0, n_steps=6, noise_std=0.5, record_steps=[4, 5])
    for loss, t, extra in [("logistic", np.where(y == 1, 1.0, -1.0), {}),
                           ("softmax", codes, {"n_classes": 3})]:
        Xd, td = _dask(X, t)
        runs = []
        for scheduler in (None, "threads"):
            with dask.config.set(scheduler=scheduler):
                runs.append(sgd_over_blocks(Xd, td, loss=loss,
                                            rng=np.random.default_rng(1), **kw, **extra))
        np.testing.assert_array_equal(runs[0][0], runs[1][0])
        np.testing.assert_array_equal(runs[0][1], runs[1][1])
        assert runs[0][0].shape == ((41,) if loss == "logistic" else (41, 3))


# ------------------------------------------------ the workers' seed words
# numpy's SeedSequence (its hash and mix constants), written out to be inverted:
# the mixing is a bijection once the spawn key is known, so words taken from a
# spawn of a sequence give that sequence's entropy back
_M32 = 0xFFFFFFFF
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43b0d7e5, 0x931e8875, 0x8b51f9dd, 0x58f38ded
_MIX_L, _MIX_R = 0xca01f9dd, 0x4973f715


def _hash_consts(init, mult, n):
    out, h = [], init
    for _ in range(n):
        out.append((h, (h * mult) & _M32))
        h = out[-1][1]
    return out


def _hashmix(v, c):
    v = ((int(v) ^ c[0]) * c[1]) & _M32
    return v ^ (v >> 16)


def _unmix(r, y):
    r ^= r >> 16
    return ((r + _MIX_R * y) * pow(_MIX_L, -1, 2 ** 32)) & _M32


def _invert_seed_words(words, spawn_key):
    """The 128-bit entropy of the SeedSequence whose child ``spawn_key`` gave
    ``words`` (= ``child.generate_state(8)``): ``generate_state`` undone to the
    child's pool, then the pool's mixing undone with the known spawn key."""
    pool = []
    for i, c in enumerate(_hash_consts(_INIT_B, _MULT_B, 4)):
        v = int(words[i])
        v ^= v >> 16
        pool.append(((v * pow(c[1], -1, 2 ** 32)) & _M32) ^ c[0])
    consts = _hash_consts(_INIT_A, _MULT_A, 16 + 4 * len(spawn_key))
    k = len(consts)
    for s in reversed(range(len(spawn_key))):
        for d in reversed(range(4)):
            k -= 1
            pool[d] = _unmix(pool[d], _hashmix(spawn_key[s], consts[k]))
    for s in reversed(range(4)):
        for d in reversed([d for d in range(4) if d != s]):
            k -= 1
            pool[d] = _unmix(pool[d], _hashmix(pool[s], consts[k]))
    entropy = []
    for i in range(4):
        v = pool[i] ^ (pool[i] >> 16)
        entropy.append(((v * pow(consts[i][1], -1, 2 ** 32)) & _M32) ^ consts[i][0])
    return sum(w << (32 * i) for i, w in enumerate(entropy))


def _regenerated(words_per_block, n_draws):
    """The auditor's attack on what the workers receive: every block's words
    inverted to an entropy, each made into a generator (and into the children
    spawned from it), their first standard normals; and the entropies."""
    entropies = [_invert_seed_words(w, (b,)) for b, w in enumerate(words_per_block)]
    draws = []
    for e in entropies:
        seq = np.random.SeedSequence(e)
        draws.append(np.random.default_rng(seq).standard_normal(n_draws))
        draws += [np.random.default_rng(c).standard_normal(n_draws) for c in seq.spawn(4)]
    return entropies, draws


@pytest.mark.parametrize("seed", [5, 2 ** 127 + 12345])
def test_seed_words_do_not_regenerate_the_noise(seed):
    """A worker receives the blocks' seed words.  Inverting SeedSequence's mixing
    turns words spawned from the noise generator's own sequence (the earlier
    scheme, checked here as a control) into its entropy and every noise draw;
    the words of block_seeds invert to nothing of the noise stream: no entropy,
    pool, state word or draw of it (exact comparisons, nothing statistical)."""
    from dptoolkit.distributed import block_seeds

    n_blocks, n_draws = 4, 64
    # control: the attack works on spawns of the noise generator's sequence
    rng = np.random.default_rng(seed)
    spawned = [c.generate_state(8) for c in rng.bit_generator.seed_seq.spawn(n_blocks)]
    entropies, draws = _regenerated(spawned, n_draws)
    assert entropies == [seed] * n_blocks
    np.testing.assert_array_equal(draws[0], rng.standard_normal(n_draws))

    rng = np.random.default_rng(seed)
    fresh = np.random.default_rng(seed)           # the noise stream from its start
    words = block_seeds(rng, n_blocks)
    noise = np.concatenate([fresh.standard_normal(4 * n_draws),
                            rng.standard_normal(4 * n_draws)])  # after the words too
    entropies, draws = _regenerated(words, n_draws)
    assert seed not in entropies
    for d in draws:
        assert not np.isin(d, noise).any()
    # nothing received equals the noise sequence's pool or generator state words
    seq = rng.bit_generator.seed_seq
    state = rng.bit_generator.state["state"]
    secret = {int(w) for w in seq.pool} | {int(w) for w in seq.generate_state(8)}
    for v in (state["state"], state["inc"]):
        secret |= {(v >> (32 * i)) & _M32 for i in range(4)}
    received = {int(w) for w in np.ravel(words)}
    received |= {(e >> (32 * i)) & _M32 for e in entropies for i in range(4)}
    assert not received & secret
    # deterministic given the generator, and the generator moves by its 32 bytes
    again = np.random.default_rng(seed)
    np.testing.assert_array_equal(block_seeds(again, n_blocks), words)
    skip = np.random.default_rng(seed)
    skip.bytes(32)
    assert skip.bit_generator.state == again.bit_generator.state


def test_dpsgd_on_dask_needs_n_samples_public(live):
    X, y = _data()
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    model = _sgd(n_samples_public=None, random_state=rng)
    with pytest.raises(ValueError, match="n_samples_public"):
        model.fit(*_dask(X, y))
    assert rng.bit_generator.state == state and not hasattr(model, "coef_")


def _kill_one_worker_at(client, monkeypatch, *at):
    """Kill one worker process just before each of the ``at``-th computations or
    DP-SGD steps of the fit (its persisted blocks and states are lost: Dask
    recomputes them from their pure tasks)."""
    compute, collect, calls, killed = _blocksum._compute, _engine._collect, [], []
    # chunks of two steps: a fit makes several client calls, and the kill lands
    # between two of them, mid-DP-SGD
    monkeypatch.setattr(_sgd_rounds, "_chunk_steps", lambda n_weights: 2)

    def kill(what):
        calls.append(what)
        if len(calls) in at:   # the worker holding the most results (first by name)
            held = client.has_what()
            killed.append(min(sorted(held), key=lambda w: -len(held[w])))
            client.run(_exit_soon, workers=killed[-1:])
            for _ in range(600):      # until the scheduler has seen it die
                if killed[-1] not in client.scheduler_info()["workers"]:
                    break
                time.sleep(0.05)

    def killing(tasks, what):
        kill(what)
        return compute(tasks, what)

    def killing_actors(futures):
        kill("a step")
        return collect(futures)

    monkeypatch.setattr(_blocksum, "_compute", killing)
    monkeypatch.setattr(_engine, "_collect", killing_actors)
    return calls, killed


def _exit_soon():
    import threading

    threading.Timer(0.05, os._exit, (1,)).start()


def _dying_at(original, marker, at):
    """``original`` that exits this process at its ``at``-th call, unless the
    marker file exists (it is made first): one worker dies, once."""
    count = [0]

    def dying(*args):
        count[0] += 1
        if count[0] == at and not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(1)
        return original(*args)
    return dying


def _die_at_lot(marker, at):
    """In this worker process: exit at the ``at``-th lot computed here, unless the
    marker file exists (then create it first): one worker dies, once."""
    from dptoolkit.linear_model._glm import _dask_sgd as _sgd

    original = getattr(_sgd, "_unpatched_lot_gradient", _sgd._lot_gradient)
    _sgd._unpatched_lot_gradient = original
    _sgd._lot_gradient = _dying_at(original, marker, at)


def _live_again():
    from dptoolkit.linear_model._glm import _dask_sgd as _sgd

    _sgd._lot_gradient = getattr(_sgd, "_unpatched_lot_gradient", _sgd._lot_gradient)


def test_worker_killed_inside_a_chunk_releases_the_same_model(live, tmp_path):
    """A worker (the coordinator's or a peer's) dies in the middle of a chunk of
    steps: the actors are rebuilt and the chunk runs again from its first step
    with the same weights and noise, so the model is the one released without
    the failure and the generator moved once."""
    X, y = _data()
    rng_a, rng_b = np.random.default_rng(6), np.random.default_rng(6)
    want = _fit(*_dask(X, y), rng_a)
    assert _sgd_rounds._chunk_steps(want.theta_.size) >= want.n_steps_   # one chunk
    marker = str(tmp_path / "died")
    live.run(_die_at_lot, marker, 21)     # 2 blocks a step each: about step 10 of 20
    try:
        got = _fit(*_dask(X, y), rng_b)
    finally:
        live.run(_live_again)
    assert os.path.exists(marker)         # a worker did die inside the chunk
    _assert_same_release(got, want)
    np.testing.assert_array_equal(got.theta_, want.theta_)
    assert rng_a.bit_generator.state == rng_b.bit_generator.state


def test_dpsgd_worker_killed_mid_fit_releases_the_same_model(live, monkeypatch):
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        rng_a, rng_b = np.random.default_rng(2), np.random.default_rng(2)
        want = _sgd(random_state=rng_a).fit(*_dask(X, y))
        calls, killed = _kill_one_worker_at(live, monkeypatch, 6)
        got = _sgd(random_state=rng_b).fit(*_dask(X, y))
    assert len(calls) > 6     # the kill happened mid-fit
    assert killed[0] not in live.scheduler_info()["workers"]
    np.testing.assert_array_equal(got.coef_, want.coef_)
    assert rng_a.bit_generator.state == rng_b.bit_generator.state  # no redrawn noise
    assert got.privacy_event_ == want.privacy_event_


# ------------------------------------------------------------- Frank-Wolfe
D_FW = 4200   # more than the 1024 candidates of k="auto"


def _fw_data(seed=0):
    rng = np.random.default_rng(seed)
    X = sp.csr_array((rng.random((N, D_FW)) < 0.01) * rng.uniform(0.2, 1.5, (N, D_FW)))
    y = (X[:, :20].sum(axis=1) > X[:, 20:40].sum(axis=1)).astype(np.int64)
    return sp.csr_array(X), y


def _fw(**kw):
    from dptoolkit.linear_model import FrankWolfeLassoClassifier

    # the zero start unless a test asks for the naive-Bayes start ("auto")
    return FrankWolfeLassoClassifier(**{"epsilon": 2.0, "delta": 1e-5, "max_iter": 150,
                                        "l1_bound": 10.0, "classes": [0, 1],
                                        "n_samples_public": N,
                                        "start": "zero", **kw})


def _fw_fit(X, y, rng, screening_score=None, **kw):
    from dptoolkit.exceptions import DataClippedWarning

    model = _fw(random_state=rng, **kw)
    if screening_score is not None:   # the internal SCREENING_SCORE replaced
        model._screening_score = lambda: screening_score
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        model = model.fit(X, y)
    clipped = any(issubclass(w.category, DataClippedWarning) for w in seen)
    return model, clipped


def _assert_same_fw(a, b):
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(a.screened_features_, b.screened_features_)
    assert a.privacy_event_ == b.privacy_event_ and a.privacy_spent_ == b.privacy_spent_
    assert a.n_iter_ == b.n_iter_
    assert a.solver_stats_["n_refresh"] == b.solver_stats_["n_refresh"]


def test_frank_wolfe_on_dask_matches_in_memory(live):
    """Default screening (1024 of 4200 candidates), grouped sampler: the same
    candidates, model, event and generator state as in memory; entries above the
    public bound 1 are clipped on the workers with the in-memory warning."""
    X, y = _fw_data()
    Xd, yd = _dask(X, y)
    r_mem, r_dist = np.random.default_rng(4), np.random.default_rng(4)
    mem, clip_mem = _fw_fit(X, y, r_mem)
    dist, clip_dist = _fw_fit(Xd, yd, r_dist)
    assert mem.screened_features_.size == 1024   # MIN_AUTO_CANDIDATES
    assert clip_mem and clip_dist
    _assert_same_fw(dist, mem)
    assert r_dist.bit_generator.state == r_mem.bit_generator.state
    assert np.count_nonzero(mem.coef_) > 5


def test_frank_wolfe_on_dask_numbers_the_columns_as_in_memory(live, monkeypatch):
    """Where the kernel numbers its columns by their counts (wide fits: here from
    one column on), the coordinating worker's sampler takes the same numbering
    from the counts summed over the blocks: the same model, event and generator
    state as in memory, and other draws than the columns' own order."""
    X, y = _fw_data()
    Xd, yd = _dask(X, y)
    plain, _ = _fw_fit(X, y, np.random.default_rng(4))
    monkeypatch.setattr(_fw_fast, "RENUMBER_MIN_FEATURES", 1)
    r_mem, r_dist = np.random.default_rng(4), np.random.default_rng(4)
    mem, _ = _fw_fit(X, y, r_mem)
    dist, _ = _fw_fit(Xd, yd, r_dist)
    _assert_same_fw(dist, mem)
    assert r_dist.bit_generator.state == r_mem.bit_generator.state
    np.testing.assert_array_equal(mem.screened_features_, plain.screened_features_)
    assert np.abs(mem.coef_ - plain.coef_).max() > 1e-6


def test_frank_wolfe_on_dask_naive_bayes_start(live):
    """``start="auto"`` (the naive-Bayes start): the per-class sums are summed over
    the blocks and noised on the client, the start is built there from the
    release and sent with the first round (the blocks' margins X_b w0); the same
    candidates, model, event and generator state as in memory, and not the zero
    start's model."""
    X, y = _fw_data()
    Xd, yd = _dask(X, y)
    r_mem, r_dist = np.random.default_rng(4), np.random.default_rng(4)
    mem, _ = _fw_fit(X, y, r_mem, start="auto")
    dist, _ = _fw_fit(Xd, yd, r_dist, start="auto")
    _assert_same_fw(dist, mem)
    assert r_dist.bit_generator.state == r_mem.bit_generator.state
    zero, _ = _fw_fit(Xd, yd, np.random.default_rng(4), selection_share=0.75)
    assert zero.privacy_event_ == mem.privacy_event_    # the start is post-processing
    assert np.abs(dist.coef_ - zero.coef_).max() > 1e-3
    assert np.count_nonzero(dist.coef_) > np.count_nonzero(zero.coef_)


def test_frank_wolfe_on_dask_gradient_screening(live):
    """The gradient screening score: the label-signed column sums are summed over
    the blocks and noised on the client; the same candidates, model, event and
    generator state as in memory, and other candidates than the mass screening."""
    X, y = _fw_data()
    Xd, yd = _dask(X, y)
    r_mem, r_dist = np.random.default_rng(4), np.random.default_rng(4)
    mem, _ = _fw_fit(X, y, r_mem, screening_score="gradient")
    dist, _ = _fw_fit(Xd, yd, r_dist, screening_score="gradient")
    _assert_same_fw(dist, mem)
    assert r_dist.bit_generator.state == r_mem.bit_generator.state
    mass, _ = _fw_fit(X, y, np.random.default_rng(4))
    assert mass.privacy_event_ == mem.privacy_event_
    assert not np.array_equal(mass.screened_features_, mem.screened_features_)


def test_frank_wolfe_on_dask_non_private_gaps(live):
    X, y = _fw_data(1)
    Xd, yd = _dask(X, y)
    mem = _fw(epsilon=None, delta=None, mechanism="argmax").fit(X, y)
    dist = _fw(epsilon=None, delta=None, mechanism="argmax").fit(Xd, yd)
    np.testing.assert_allclose(dist.coef_, mem.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dist.gap_history_, mem.gap_history_, rtol=1e-9,
                               atol=1e-12)


def _spy_on_rounds(monkeypatch, kill_at=None, client=None):
    """What the Frank-Wolfe block holders (Dask actors) send back, round by round;
    with ``kill_at``, one worker process is killed (SIGKILL) just before that round."""
    import asyncio
    import signal

    results, received, killed = _engine._results, [], []
    pids = client.run(os.getpid) if kill_at is not None else {}

    async def spy(holders, *args):
        if kill_at is not None and len(received) + 1 == kill_at:
            killed.append(sorted(pids)[0])
            os.kill(pids[killed[0]], signal.SIGKILL)
            await asyncio.sleep(0.5)     # the process is gone before the round's calls
        out = await results(holders, *args)
        received.append(out)
        return out

    monkeypatch.setattr(_engine, "_results", spy)
    return received, killed


def _die_at_fw_round(marker, at):
    """In this worker process: exit at the ``at``-th block round computed here,
    unless the marker file exists (it is made first): the worker dies, once, in
    the middle of a chunk of steps."""
    from dptoolkit.linear_model._frank_wolfe import _dask_binary as _fw

    saved = _fw._Logistic.__dict__.get("_unpatched")
    original = saved.__func__ if saved is not None else _fw._Logistic.round
    _fw._Logistic._unpatched = staticmethod(original)
    _fw._Logistic.round = staticmethod(_dying_at(original, marker, at))


def _kill_when_placed(monkeypatch, client, marker, role, at=60):
    """Once the Frank-Wolfe holders are placed (the client's call of
    ``_run_chunks``), arm :func:`_die_at_fw_round` on the worker of the
    coordinator (``role="coordinator"``) or of a peer (``"peer"``), known from
    where the client put the holders: no worker guesses its role.  Returns the
    numbers of workers the holders were on, one per fit (1: no peer, nothing
    armed for a peer)."""
    from dptoolkit.linear_model._frank_wolfe import _dask_binary as _fw

    run_chunks, n_workers = _fw._run_chunks, []

    def arming(self, *args):
        n_workers.append(len(self.addresses))
        if len(n_workers) == 1:
            where = self.client.who_has(self.futures)
            coordinator = min(where[self.futures[0].key])
            target = ([coordinator] if role == "coordinator"
                      else sorted(self.addresses - {coordinator})[:1])
            if target:
                client.run(_die_at_fw_round, marker, at, workers=target)
        return run_chunks(self, *args)

    monkeypatch.setattr(_fw, "_run_chunks", arming)
    return n_workers


def _fw_live_again():
    from dptoolkit.linear_model._frank_wolfe import _dask_binary as _fw

    if "_unpatched" in _fw._Logistic.__dict__:
        _fw._Logistic.round = _fw._Logistic.__dict__["_unpatched"]   # the staticmethod
        del _fw._Logistic._unpatched


def _unpatch_fw_rounds(client):
    """:func:`_fw_live_again` on every live worker (the scheduler may still list
    the one just killed for a moment: try again)."""
    for _ in range(100):
        try:
            client.run(_fw_live_again)
            return
        except OSError:
            time.sleep(0.1)
    client.run(_fw_live_again)


@pytest.mark.parametrize("role,start", [("coordinator", "zero"), ("peer", "zero"),
                                        ("peer", "auto")])
def test_frank_wolfe_worker_killed_mid_fit_releases_the_same_model(live, tmp_path, role,
                                                                    start, monkeypatch):
    """A worker (the coordinator's or a peer's) dies in the middle of a chunk of
    steps, taking its holder's margins with it: the client makes new holders for
    every block (Dask recomputes the lost ones from their pure tasks), replays
    the logged rounds up to the chunk's start and runs the chunk again with the
    same state and uniforms; the released model, the privacy event, the charge
    and the generator's state are those of the in-memory fit (no noise redrawn).
    From the naive-Bayes start the replay's first round sets the margins from
    the same start."""
    from dptoolkit.accounting import BudgetAccountant

    X, y = _fw_data()
    acc_mem, acc_dist = (BudgetAccountant(epsilon=10.0, delta=1e-3) for _ in range(2))
    r_mem, r_dist = np.random.default_rng(6), np.random.default_rng(6)
    want, _ = _fw_fit(X, y, r_mem, accountant=acc_mem, start=start)
    marker = str(tmp_path / "died")
    n_workers = _kill_when_placed(monkeypatch, live, marker, role)   # about step 30
    try:
        got, _ = _fw_fit(*_dask(X, y), r_dist, accountant=acc_dist, start=start)
    finally:
        _unpatch_fw_rounds(live)
    if role == "peer" and n_workers[:1] == [1]:
        # a worker just restarted by a killing test may hold no block (or actor) yet
        pytest.skip("the scheduler put every holder on one worker: no peer to kill")
    assert os.path.exists(marker)         # a worker did die inside the chunk
    _assert_same_fw(got, want)
    np.testing.assert_array_equal(got.coef_, want.coef_)
    assert r_dist.bit_generator.state == r_mem.bit_generator.state
    assert acc_dist.spends == acc_mem.spends and len(acc_dist.spends) == 1


@pytest.mark.parametrize("K", [2, 3])
def test_frank_wolfe_workers_lost_too_often_stop_with_a_clear_error(live, monkeypatch, K,
                                                                    tmp_path):
    """More lost workers than ``distributed.scheduler.allowed-failures`` (here 0)
    stop the fit with a RuntimeError: no model, no privacy event, the accountant
    untouched (binary: a worker dies inside a chunk; multinomial: before a
    round of the client's)."""
    from dptoolkit.accounting import BudgetAccountant

    X, y = _fw_data() if K == 2 else _fw_classes(K)
    accountant = BudgetAccountant(epsilon=10.0, delta=1e-3)
    model = _fw(random_state=np.random.default_rng(6), accountant=accountant,
                classes=list(range(K)))
    marker = str(tmp_path / "died")
    if K == 2:
        _kill_when_placed(monkeypatch, live, marker, "coordinator")   # always there
    else:
        received, killed = _spy_on_rounds(monkeypatch, kill_at=40, client=live)
    try:
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with pytest.raises(RuntimeError, match="lost mid-fit.*nothing was released"):
                    model.fit(*_dask(X, y))
    finally:
        _unpatch_fw_rounds(live)
    if K == 2:
        assert os.path.exists(marker)
    else:
        assert len(received) == 40 and killed    # the 40th round found the worker gone
        assert any(isinstance(out, Exception) for out in received[-1])
    assert not hasattr(model, "coef_") and not hasattr(model, "privacy_event_")
    assert accountant.spends == []


def _rounds_of(blocks, rounds, swap_at=None, client=None):
    """The outputs of ``rounds`` on ``blocks`` (a block engine), driven from the
    client; with ``swap_at``, the first holder is replaced before that round by
    a fresh one (as if Dask had made it again)."""
    outs = []

    def steps(part):
        for args in part:
            outs.append((yield args))

    parts = [rounds] if swap_at is None else [rounds[:swap_at], rounds[swap_at:]]
    for i, part in enumerate(parts):
        if i == 1:
            held = [b for b, (h, _) in enumerate(blocks.order) if h == 0]
            blocks.holders[0] = client.submit(
                _engine.BlockActor, blocks.model, held, *[blocks.blocks[b] for b in held],
                actor=True, pure=False).result()
        blocks.run(steps(part))
    return outs


def test_frank_wolfe_holder_out_of_sequence_is_rebuilt_by_replay(live):
    """A holder that has not run the rounds the client sent (one Dask made again
    after its worker died, possibly at the old address) refuses the round; the
    client replaces it and replays the rounds: every block's outputs are those of
    the blocks held in this process, exactly."""
    from dptoolkit.linear_model._frank_wolfe import _dask_binary as _fw

    X, y = _fw_data()
    Xd, yd = _dask(X, y)
    y01 = yd.astype(np.float64)
    rounds = [(None, 1.0), ((7, 0.5, 0.8, 1.0), None), ((3, -0.2, 0.6, 1.0), 0.6),
              ((7, 0.1, 1.0, 1.0), None), ((11, 0.3, 0.9, 1.0), None)]
    def engine():
        return _engine.BlockEngine(Xd, y01, _fw._prepare_block, (None, 1.0), _fw._LOGISTIC,
                                   what="the Frank-Wolfe blocks")

    with dask.config.set(scheduler="synchronous"):
        local = engine()
    want = _rounds_of(local, rounds)
    blocks = engine()
    try:
        # one holder per worker holding blocks: two, or one when the scheduler put
        # every block on one worker (a worker just restarted by a killing test)
        assert blocks.actors and 1 <= len(blocks.holders) <= 2
        got = _rounds_of(blocks, rounds, swap_at=3, client=live)
        assert blocks.n_lost == 1
    finally:
        blocks.close()
    for out_got, out_want in zip(got, want):
        for a, b in zip(out_got, out_want):
            assert a[0] == b[0]
            for u, v in zip(a[1:], b[1:]):
                np.testing.assert_array_equal(u, v)


def _refuse_gathering(monkeypatch, Xd):
    """From now on, computing or converting ``Xd`` on the client fails the test."""
    original = da.Array.compute

    def refuse(self, *args, **kwargs):
        if self.name == Xd.name:
            raise AssertionError("X was gathered on the client")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(da.Array, "compute", refuse)
    monkeypatch.setattr(da.Array, "__array__", lambda self, *a, **k: refuse(self))


def _spy_on_chunks(monkeypatch):
    """What the Frank-Wolfe coordinator sends back to the client, chunk by chunk."""
    run_chunk, received = _engine.BlockEngine.run_chunk, []

    def spy(self, chunk, *args):
        before = len(self.log)
        loop, gaps, consumed = run_chunk(self, chunk, *args)
        received.append((loop, gaps, self.log[before:], consumed))   # the rounds' log
        return loop, gaps, consumed

    monkeypatch.setattr(_engine.BlockEngine, "run_chunk", spy)
    return received


def test_frank_wolfe_on_dask_never_gathers_rows(live, monkeypatch):
    """What comes back from the workers: sums over rows (column masses), then per
    chunk of steps the solver's state (k-vectors: alpha, the iterate, the
    sampler's weights), the chunk's gaps and the rounds' public arguments (the
    chosen coordinates and step sizes); never a row of X.  The rounds go from
    the coordinator to the other worker: the client makes one call a chunk."""
    from dptoolkit.linear_model._frank_wolfe import _dask_binary as _fw

    X, y = _fw_data()
    Xd, yd = _dask(X, y)
    _refuse_gathering(monkeypatch, Xd)
    summed = _spy_on_results(monkeypatch)
    chunks = _spy_on_chunks(monkeypatch)
    monkeypatch.setattr(_fw, "_CHUNK_STEPS", 40)
    model, _ = _fw_fit(Xd, yd, 0)
    k = model.screened_features_.size
    replies = [r for r in summed if isinstance(r, tuple)]   # the coordinator's, a chunk each
    summed = [r for r in summed if not isinstance(r, tuple)]
    assert len(summed) == 1 and summed[0].shape == (D_FW + 1,)   # the column masses
    assert len(chunks) == -(-model.n_iter_ // 40)       # 150 steps: 4 calls
    assert len(replies) == len(chunks)
    rounds = [args for _, _, log, _ in chunks for args in log]
    assert len(rounds) == model.n_iter_           # the set-up and a round a step but the last
    for step, fold in rounds[1:]:
        j, delta, w_m, rescale = step
        assert isinstance(j, int) and 0 <= j < k and np.isscalar(delta)
    for loop, gaps, log, consumed in chunks:
        arrays = [v for v in vars(loop).values() if isinstance(v, np.ndarray)]
        assert {a.size for a in arrays} == {k} and loop.selector.rng is None
        assert len(gaps) <= 40 and consumed >= 3 * len(gaps)


def test_frank_wolfe_chunks_short_of_uniforms_release_the_same_model(live, monkeypatch):
    """Chunks of 7 steps with one uniform too few (the last step's sign): the
    coordinator stops before that step, the client puts the generator back to
    what was consumed and sends the next chunk from there; the model and the
    generator's state are the in-memory fit's."""
    from dptoolkit.linear_model._frank_wolfe import _dask_binary as _fw

    X, y = _fw_data()
    chunks = _spy_on_chunks(monkeypatch)
    monkeypatch.setattr(_fw, "_CHUNK_STEPS", 7)
    monkeypatch.setattr(_fw, "_SPARE_UNIFORMS", -1)
    r_mem, r_dist = np.random.default_rng(3), np.random.default_rng(3)
    mem, _ = _fw_fit(X, y, r_mem)
    dist, _ = _fw_fit(*_dask(X, y), r_dist)
    assert len(chunks) >= 150 // 6 and all(len(c[1]) <= 6 for c in chunks)
    _assert_same_fw(dist, mem)
    np.testing.assert_array_equal(dist.coef_, mem.coef_)
    assert r_dist.bit_generator.state == r_mem.bit_generator.state


def test_frank_wolfe_block_kernels_are_the_numpy_rounds_bit_for_bit(monkeypatch):
    """The compiled block round (``_fw_block_fast``) against its NumPy reference
    over steps and refreshes: the same margins, gradients and changes of alpha
    bit for bit, once the reference's sigmoid takes the C library's exp (the
    in-memory kernel's; NumPy's own exp may differ in the last bit); the change
    of the gap term (a BLAS dot product in the reference) within 1e-12."""
    import math

    from dptoolkit.linear_model._frank_wolfe import _dask_binary as _fw

    c_exp = np.frompyfunc(math.exp, 1, 1)

    def libm_sigmoid(v):
        e = c_exp(-np.abs(v)).astype(np.float64)
        return np.where(v >= 0, 1.0 / (1.0 + e), e / (1.0 + e))

    monkeypatch.setattr(_fw, "_sigmoid", libm_sigmoid)
    X, y = _fw_data(2)
    prep = _fw._prepare_block(X, (y == 1).astype(np.float64), np.arange(0, D_FW, 3), 1.0)
    got, want = _fw._Logistic.start(prep), _fw._Logistic.start(prep)[:2]
    rng = np.random.default_rng(1)
    rounds = [(None, 1.0)]
    w_m = 1.0
    for t in range(1, 120):
        eta = 2.0 / (t + 2.0)
        w_m *= 1.0 - eta
        step = (int(rng.integers(0, 40 if t % 2 else prep[0].shape[1])),
                eta * 10.0 * rng.choice([-1.0, 1.0]) / w_m, w_m, 1.0)
        rounds.append((step, w_m if t % 17 == 0 else None))
        if t % 17 == 0:
            w_m = 1.0
    n_changed = 0
    for step, fold in rounds:
        a = _fw._block_round(prep, got, step, fold)
        b = _fw._block_round_reference(prep, want, step, fold)
        assert a[0] == b[0]
        for u, v in zip(a[1:3], b[1:3]):
            np.testing.assert_array_equal(u, v)
        if a[0] == "delta":
            np.testing.assert_allclose(a[3], b[3], rtol=1e-12, atol=1e-300)
            n_changed += a[1].size
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert not got[2].any() and not got[3].any()     # the scratch is zero again
    assert n_changed > 1000


def test_grouped_selector_from_uniforms_makes_the_generators_draws():
    """The selector fed with ``rng.random(n)`` picks the vertices it picks drawing
    from ``rng`` itself (the sampler's ``uniform(rng)`` is the bit generator's
    next double, which ``random`` returns in order), and reports what it
    consumed; a pickled selector carries no generator."""
    import pickle

    from dptoolkit.linear_model._frank_wolfe._distributed import _GroupedSelector

    data = np.random.default_rng(0)
    alphas = [data.normal(size=500) * 30 for _ in range(40)]
    rng, ref = np.random.default_rng(9), np.random.default_rng(9)
    direct, fed = (_GroupedSelector(500, 0, 0.05, r) for r in (ref, None))
    uniforms = rng.random(3 * 40 + 5)
    fed.feed(uniforms)
    for t, alpha in enumerate(alphas):
        items = np.arange(500) if t == 0 else np.sort(data.choice(500, 30, replace=False))
        for sel in (direct, fed):
            sel.update(alpha, items, t == 0)
        assert fed.select(alpha) == direct.select(alpha)
    rng2 = np.random.default_rng(9)
    rng2.random(fed.consumed)
    assert rng2.bit_generator.state == ref.bit_generator.state
    assert pickle.loads(pickle.dumps(direct)).rng is None
    short = _GroupedSelector(500, 0, 0.05, None)
    short.update(alphas[0], np.arange(500), True)
    short.feed(uniforms[:2])                      # a draw, but no sign
    assert short.select(alphas[0]) is None and short.consumed == 0


def test_frank_wolfe_steps_do_not_go_through_the_scheduler(live):
    """The scheduler runs the same tasks for 20 steps as for 150 (set-up only):
    the rounds are actor calls from the client to the workers."""
    X, y = _fw_data()
    counts = []
    for max_iter in (20, 150):
        with distributed.get_task_stream(live) as stream:
            model, _ = _fw_fit(*_dask(X, y), 0, max_iter=max_iter)
        assert model.n_iter_ == max_iter
        counts.append(len(stream.data))
    assert counts[0] == counts[1]


def test_frank_wolfe_on_a_local_dask_scheduler_matches_in_memory():
    """Without a cluster (a local scheduler), the blocks are held in-process."""
    X, y = _fw_data()
    with dask.config.set(scheduler="synchronous"):
        dist, _ = _fw_fit(*_dask(X, y), np.random.default_rng(4))
    mem, _ = _fw_fit(X, y, np.random.default_rng(4))
    _assert_same_fw(dist, mem)


@pytest.mark.parametrize("kw, match", [
    (dict(solver="standard", mechanism="exponential"), "solver='fast'"),
    (dict(mechanism="exponential"), "mechanism='grouped'"),
    (dict(epsilon=None, delta=None, mechanism="pairing_heap"), "mechanism='argmax'"),
    (dict(max_iter="auto", n_samples_public=None), "n_samples_public"),
    # fixed max_iter, l1_bound="auto": once took N from the chunk sizes (warning)
    (dict(l1_bound="auto", n_samples_public=None), "n_samples_public"),
    (dict(n_samples_public=None), "n_samples_public"),
])
def test_frank_wolfe_on_dask_refusals(live, kw, match):
    X, y = _fw_data()
    with pytest.raises(ValueError, match=match):
        _fw(**kw).fit(*_dask(X, y))


# ------------------------------------------------- multinomial Frank-Wolfe
def _fw_classes(K, seed=0):
    """The Frank-Wolfe data with K classes: the class whose 20 columns weigh most."""
    X, _ = _fw_data(seed)
    mass = np.stack([X[:, 20 * k:20 * (k + 1)].sum(axis=1) for k in range(K)], axis=1)
    return X, np.argmax(mass, axis=1)


def _assert_same_multinomial(a, b):
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
    assert a.coef_.shape == b.coef_.shape == (len(a.classes_), D_FW)
    np.testing.assert_array_equal(a.screened_features_, b.screened_features_)
    assert a.privacy_event_ == b.privacy_event_ and a.privacy_spent_ == b.privacy_spent_
    assert a.n_iter_ == b.n_iter_ and a.mechanism_ == b.mechanism_
    assert a.l1_bound_ == b.l1_bound_
    if a.gap_history_ is None:
        assert b.gap_history_ is None
    else:
        np.testing.assert_allclose(a.gap_history_, b.gap_history_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("K", [3, 4])
@pytest.mark.parametrize("kw", [
    {},                                                   # exponential, mass screening
    dict(epsilon=None, delta=None),                       # argmax, every column
    dict(screening_score="gradient", mechanism="noisy_max"),  # per-class sums, Gumbel
    dict(mechanism="laplace"),                             # unscreened, advanced
], ids=["private", "non-private", "gradient-noisy_max", "laplace"])
def test_multinomial_frank_wolfe_on_dask_matches_in_memory(live, K, kw):
    """K > 2 classes: the blocks return their parts of the K x k gradient, the
    client sums them and selects with the kernel's code: the same candidates,
    model, privacy event and generator state as in memory (summation order only)."""
    X, y = _fw_classes(K)
    kw = dict(classes=list(range(K)), **kw)
    r_mem, r_dist = np.random.default_rng(5), np.random.default_rng(5)
    mem, clip_mem = _fw_fit(X, y, r_mem, **kw)
    dist, clip_dist = _fw_fit(*_dask(X, y), r_dist, **kw)
    _assert_same_multinomial(dist, mem)
    assert r_dist.bit_generator.state == r_mem.bit_generator.state
    assert clip_dist == clip_mem == ("epsilon" not in kw)   # entries above 1 clipped
    assert dist.solver_stats_["n_iter"] == 150 and np.count_nonzero(mem.coef_) > 5
    if "epsilon" in kw:
        assert mem.privacy_event_ is None
    elif kw.get("mechanism") != "laplace":      # zCDP accounting: screened
        assert mem.screened_features_.size == 1024


def test_multinomial_frank_wolfe_on_dask_rounds_carry_no_rows(live, monkeypatch):
    """Each round each block returns its part of the gradient over the k
    candidates (k x K numbers, or the rows of its non-empty columns with their
    indices when that is fewer numbers), one round per step; X is never gathered."""
    X, y = _fw_classes(3)
    Xd, yd = _dask(X, y)
    _refuse_gathering(monkeypatch, Xd)
    summed = _spy_on_results(monkeypatch)
    rounds, _ = _spy_on_rounds(monkeypatch)
    model, _ = _fw_fit(Xd, yd, 0, classes=[0, 1, 2], screening_score="gradient")
    k = model.screened_features_.size
    assert len(summed) == 1 and summed[0].shape == (3 * D_FW + 1,)  # per-class sums
    assert len(rounds) == model.n_iter_ == 150
    for holders in rounds:
        parts = [p for h in holders for p in h]
        assert len(parts) == N // CHUNK
        for cols, part in parts:
            assert part.dtype == np.float64 and part.shape[1] == 3
            if cols is None:
                assert part.shape == (k, 3)
            else:
                assert cols.shape == (part.shape[0],) and part.shape[0] * 4 < k * 3
                assert np.all(np.diff(cols) > 0) and cols[-1] < k


def test_multinomial_gradient_parts_of_sparse_blocks_are_their_columns():
    """A block holding few of the columns sends their rows of X_b^T Q_b and their
    indices; a block holding most sends the k x K part: both are X_b^T Q_b."""
    from dptoolkit.linear_model._frank_wolfe import _dask_binary as _fw
    from dptoolkit.linear_model._frank_wolfe import _dask_multinomial as _fw_multinomial

    X, y = _fw_classes(3)
    softmax = _fw_multinomial._Softmax(3)
    for rows in (slice(0, 150), slice(0, 20)):   # 78% then 18% of the columns
        prep = _fw._prepare_block(X[rows], y[rows], None, 1.0)
        state = softmax.start(prep)
        cols, part = softmax.round(prep, state, ((5, 21, 5), (0.5, -0.25, 0.125), 0.9, 1.0))
        V = 0.9 * state[0]
        Q = np.exp(V - V.max(axis=1, keepdims=True))
        Q = Q / Q.sum(axis=1, keepdims=True) - np.eye(3)[y[rows]]
        full = np.asarray(prep[1].T @ Q)
        if rows.stop == 150:
            assert cols is None
            np.testing.assert_allclose(part, full, rtol=1e-12, atol=1e-15)
        else:
            assert cols.size == np.count_nonzero(np.diff(prep[1].indptr)) < D_FW / 2
            np.testing.assert_allclose(part, full[cols], rtol=1e-12, atol=1e-15)
            assert not np.delete(full, cols, axis=0).any()


def test_multinomial_frank_wolfe_worker_killed_mid_fit_releases_the_same_model(
        live, monkeypatch):
    """A worker killed mid-fit: its blocks' new holder replays the logged rounds
    (the vertices sent), and the release, event, charge and generator state are
    those of the in-memory fit."""
    from dptoolkit.accounting import BudgetAccountant

    X, y = _fw_classes(3)
    acc_mem, acc_dist = (BudgetAccountant(epsilon=10.0, delta=1e-3) for _ in range(2))
    r_mem, r_dist = np.random.default_rng(6), np.random.default_rng(6)
    want, _ = _fw_fit(X, y, r_mem, accountant=acc_mem, classes=[0, 1, 2])
    received, killed = _spy_on_rounds(monkeypatch, kill_at=40, client=live)
    got, _ = _fw_fit(*_dask(X, y), r_dist, accountant=acc_dist, classes=[0, 1, 2])
    assert len(received) > 40 and killed
    assert killed[0] not in live.scheduler_info()["workers"]
    _assert_same_multinomial(got, want)
    assert r_dist.bit_generator.state == r_mem.bit_generator.state
    assert acc_dist.spends == acc_mem.spends and len(acc_dist.spends) == 1


def test_multinomial_frank_wolfe_on_a_local_dask_scheduler_matches_in_memory():
    X, y = _fw_classes(4)
    with dask.config.set(scheduler="synchronous"):
        dist, _ = _fw_fit(*_dask(X, y), np.random.default_rng(4), classes=[0, 1, 2, 3])
    mem, _ = _fw_fit(X, y, np.random.default_rng(4), classes=[0, 1, 2, 3])
    _assert_same_multinomial(dist, mem)


@pytest.mark.parametrize("change, match", [
    (dict(max_iter="auto", n_samples_public=None), "n_samples_public"),
    (dict(n_samples_public=None), "n_samples_public"),
    (dict(classes=[0, 1, 3]), "not in classes|outside"),
    (dict(nan=True), "NaN or infinity"),
    (dict(rechunk=True), "same row chunks"),
])
def test_multinomial_frank_wolfe_on_dask_refusals(live, change, match):
    """Bad input and a private ``max_iter="auto"`` without ``n_samples_public``:
    a clear error before any noise is drawn, nothing released or charged (a NaN,
    found by the blocks after the screening noise, is charged: its noise ran)."""
    from dptoolkit.accounting import BudgetAccountant

    X, y = _fw_classes(3)
    if change.pop("nan", False):
        X = X.copy()
        X.data[-1] = np.nan             # in the last block
    Xd, yd = _dask(X, y)
    if change.pop("rechunk", False):
        yd = yd.rechunk(100)
    rng, accountant = np.random.default_rng(0), BudgetAccountant(epsilon=10.0, delta=1e-3)
    state = rng.bit_generator.state
    model = _fw(**{"classes": [0, 1, 2], "random_state": rng, "accountant": accountant,
                   **change})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=match):
            model.fit(Xd, yd)
    assert not hasattr(model, "coef_")
    if match != "NaN or infinity":      # found by the blocks after the screening noise
        assert rng.bit_generator.state == state and accountant.spends == []
    else:                               # whose fit is charged: its noise ran
        assert len(accountant.spends) == 1


# ------------------------------------------ nothing stays on the workers
def _held(client):
    """Per worker: the actors it holds and the keys in its memory."""
    return client.run(lambda dask_worker: (len(dask_worker.state.actors),
                                           len(dask_worker.data)))


def _assert_workers_forget(client, before, timeout=15.0):
    """Every worker holds no actor and no more keys than ``before`` the fit (the
    release is asynchronous: polled for ``timeout`` seconds; the earlier code
    kept its coordinators until the garbage collector ran)."""
    stop = time.monotonic() + timeout
    while True:
        held = _held(client)
        if all(a == 0 and d <= before.get(w, (0, 0))[1] for w, (a, d) in held.items()):
            return
        assert time.monotonic() < stop, f"left on the workers (actors, keys): {held}"
        time.sleep(0.05)


@pytest.fixture
def no_gc():
    """The garbage collector off: a release that waited for it (the actor handles'
    reference cycles) would not happen at all, where a collection would come at
    an arbitrary moment."""
    import gc

    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _interrupt_at(original, at):
    """``original`` that raises KeyboardInterrupt on the client at its ``at``-th call."""
    count = [0]

    def interrupted(*args, **kwargs):
        count[0] += 1
        if count[0] == at:
            raise KeyboardInterrupt
        return original(*args, **kwargs)
    return interrupted


@pytest.mark.parametrize("fit", ["dp-sgd", "dp-nb", "frank-wolfe", "frank-wolfe-multinomial"])
def test_no_actor_or_block_stays_on_the_workers_after_a_fit(live, no_gc, fit):
    """The coordinator and block actors hold restricted rows and margins: they and
    the transformed blocks leave the workers when the fit ends."""
    X, y = _data()
    before = _held(live)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fit == "dp-sgd":
            _sgd(random_state=0).fit(*_dask(X, y))
        elif fit == "dp-nb":
            _model(random_state=0).fit(*_dask(X, y))
        else:
            K = 3 if fit == "frank-wolfe-multinomial" else 2
            Xf, yf = _fw_classes(K)
            _fw(classes=list(range(K)), max_iter=30, random_state=0).fit(*_dask(Xf, yf))
    _assert_workers_forget(live, before)


def test_no_actor_stays_on_the_workers_after_an_error_or_an_interrupt(live, no_gc,
                                                                     monkeypatch):
    """A fit that raises (NaN in a block, found by the workers; DP-SGD or
    Frank-Wolfe interrupted mid-fit on the client, KeyboardInterrupt) leaves no
    actor and no block on the workers."""
    from dptoolkit.linear_model._frank_wolfe import _dask_binary as _fw_rounds

    X, y = _data()
    bad = X.copy()
    bad.data[-1] = np.nan               # in the last block
    before = _held(live)
    with pytest.raises(ValueError, match="NaN or infinity"):
        _sgd(random_state=0).fit(*_dask(bad, y))
    _assert_workers_forget(live, before)

    monkeypatch.setattr(_sgd_rounds, "_chunk_steps", lambda n_weights: 2)
    monkeypatch.setattr(_engine, "_collect", _interrupt_at(_engine._collect, 3))
    with pytest.raises(KeyboardInterrupt):
        _sgd(random_state=0).fit(*_dask(X, y))
    _assert_workers_forget(live, before)

    Xf, yf = _fw_data()
    monkeypatch.setattr(_fw_rounds, "_CHUNK_STEPS", 5)
    monkeypatch.setattr(_engine.BlockEngine, "run_chunk",
                        _interrupt_at(_engine.BlockEngine.run_chunk, 2))
    with pytest.raises(KeyboardInterrupt):
        _fw(max_iter=30, random_state=0).fit(*_dask(Xf, yf))
    _assert_workers_forget(live, before)
