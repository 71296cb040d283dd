"""Private candidate screening of Frank-Wolfe: the released statistic of each
the screening score (its sensitivity, what it scores), and what each keeps.

The statistics are in ``dptoolkit.linear_model._frank_wolfe._screening``: the column
masses of the row-normalised |X| (``"mass"``, no label) or the label-signed sums whose
post-processing is the loss gradient at the zero model (``"gradient"``).
"""
import numpy as np
import pytest
import scipy.sparse as sp

from dptoolkit.linear_model import FrankWolfeLassoClassifier
from dptoolkit.linear_model._frank_wolfe._screening import (private_top_columns,
                                                            screening_scores,
                                                            screening_statistic)


def _rows(seed, n=40, d=30):
    """Signed sparse rows of every L2 norm: short, long (norm far above 1), dense."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, random_state=seed, format="csr")
    X.data = rng.uniform(-1.0, 1.0, X.nnz)
    X = X.toarray()
    X[0] = 1.0                  # norm sqrt(d): scaled down to 1
    X[1] = 0.0                  # empty row
    X[2, :3] = [1.0, -1.0, 0.5]
    return sp.csr_array(X)


def _normalised(X):
    X = X.toarray()
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]


@pytest.mark.parametrize("score,n_classes", [("mass", 2), ("gradient", 2),
                                             ("gradient", 3), ("gradient", 5)])
@pytest.mark.parametrize("seed", [0, 1])
def test_statistic_sensitivity_is_one_add_remove_two_replace_one(score, n_classes, seed):
    """Removing any one example moves the released statistic by Frobenius norm
    <= 1, and replacing it (row and label) by <= 2: the Gaussian mechanism's L2
    sensitivity the budget split assumes.  The bound is reached (it is tight)."""
    X = _rows(seed)
    codes = np.arange(X.shape[0]) % n_classes
    full = screening_statistic(X, score, codes, n_classes)
    worst = 0.0
    for i in range(X.shape[0]):
        keep = np.arange(X.shape[0]) != i
        moved = np.linalg.norm(full - screening_statistic(X[keep], score, codes[keep],
                                                          n_classes))
        assert moved <= 1.0 + 1e-12
        worst = max(worst, moved)
        # replace-one: row i becomes the dense row 0 with another label
        Xr = X.toarray()
        Xr[i] = Xr[0]
        other = codes.copy()
        other[i] = (codes[i] + 1) % n_classes
        moved = np.linalg.norm(full - screening_statistic(sp.csr_array(Xr), score, other,
                                                          n_classes))
        assert moved <= 2.0 + 1e-12
    assert worst == pytest.approx(1.0)


def test_gradient_score_is_the_loss_gradient_at_zero():
    """Noise-free, the gradient score is |grad_j| of the logistic loss at w = 0
    (times 2), and for K classes max_k |grad_kj| of the softmax cross-entropy at
    W = 0, on the row-normalised data."""
    X = _rows(3)
    A = _normalised(X)
    y = np.arange(X.shape[0]) % 2
    got = screening_scores(screening_statistic(X, "gradient", y, 2), "gradient")
    np.testing.assert_allclose(got, 2.0 * np.abs(A.T @ (0.5 - y)), rtol=1e-12, atol=1e-14)
    K = 4
    y = np.arange(X.shape[0]) % K
    Y = np.eye(K)[y]
    grad = A.T @ (1.0 / K - Y)          # (d, K): softmax cross-entropy at W = 0
    got = screening_scores(screening_statistic(X, "gradient", y, K), "gradient")
    np.testing.assert_allclose(got, np.abs(grad).max(axis=1), rtol=1e-12, atol=1e-14)
    mass = screening_scores(screening_statistic(X, "mass"), "mass")
    np.testing.assert_allclose(mass, np.abs(A).sum(axis=0), rtol=1e-12)


N_PLANT, D_PLANT, N_STOP, N_INFORMATIVE, K_KEPT = 2000, 5000, 100, 10, 50


def _planted(seed=0):
    """Binary rows: 100 'stop word' columns in half the rows whatever the label,
    10 informative columns in 30% of the positive rows only, and rare background."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, N_PLANT)
    X = rng.random((N_PLANT, D_PLANT)) < 0.002
    X[:, :N_STOP] = rng.random((N_PLANT, N_STOP)) < 0.5
    inf = slice(N_STOP, N_STOP + N_INFORMATIVE)
    X[:, inf] = (rng.random((N_PLANT, N_INFORMATIVE)) < 0.3) & (y[:, None] == 1)
    return sp.csr_array(X.astype(np.float64)), y


def test_gradient_screening_keeps_planted_columns_that_mass_drops():
    """Rows have about 61 ones (entries about 0.128 once normalised).  A stop
    column's mass is about 128 and its class difference |d| about 4 (sd 4); an
    informative column's mass and |d| are both about 38 (sd 2).  With noise sd 2 and
    k = 50 kept, the mass screening keeps the 100 stop columns' best 50 (an
    informative column would need a 22-sd excess) and the gradient screening keeps
    the 10 informative columns (it fails only if 40 of the other 4,990 columns pass
    |d~| > 30: a stop column 6 sd out, each about 1e-9).  False-failure rate
    below 1e-6 over data and noise; the seeds are fixed."""
    X, y = _planted()
    informative = set(range(N_STOP, N_STOP + N_INFORMATIVE))
    kept = {}
    for score in ("mass", "gradient"):
        kept[score] = set(private_top_columns(X, K_KEPT, 2.0, np.random.default_rng(1),
                                              score=score, y_codes=y, n_classes=2))
    assert informative <= kept["gradient"]
    assert not informative & kept["mass"]
    assert kept["mass"] <= set(range(N_STOP))


def _with_score(est, score):
    """``est`` with its internal ``SCREENING_SCORE`` replaced by ``score`` ("auto":
    kept)."""
    if score != "auto":
        est._screening_score = lambda: score
    return est


def test_estimator_gradient_screening_same_event_other_candidates():
    """Through the estimator: the gradient score screens in the planted
    columns that ``"mass"`` misses, with the same privacy event (one Gaussian
    release of L2 sensitivity 1, then the steps), the event ``budget()`` plans;
    ``"auto"`` is ``"mass"``, draw for draw.  epsilon = 8 gives the screening noise
    sd 1.4 (< 2 of the test above, same false-failure bound)."""
    X, y = _planted()
    informative = set(range(N_STOP, N_STOP + N_INFORMATIVE))
    fits = {}
    for score in ("auto", "mass", "gradient"):
        est = _with_score(FrankWolfeLassoClassifier(
            epsilon=8.0, delta=1e-5, k=K_KEPT, max_iter=30, l1_bound=5.0, classes=[0, 1],
            n_samples_public=N_PLANT, random_state=np.random.default_rng(2)), score)
        fits[score] = est.fit(X, y)
    budget = fits["gradient"].budget(D_PLANT)
    assert budget.screening_noise_multiplier < 1.5
    assert informative <= set(fits["gradient"].screened_features_)
    assert not informative & set(fits["mass"].screened_features_)
    assert fits["gradient"].privacy_event_ == fits["mass"].privacy_event_ == budget.event
    assert fits["gradient"].privacy_spent_ == fits["mass"].privacy_spent_
    np.testing.assert_array_equal(fits["auto"].screened_features_,
                                  fits["mass"].screened_features_)
    np.testing.assert_array_equal(fits["auto"].coef_, fits["mass"].coef_)
    # the model learns from the informative columns it was given
    assert np.abs(fits["gradient"].coef_[0, N_STOP:N_STOP + N_INFORMATIVE]).sum() > 0
    assert fits["gradient"].score(X, y) > fits["mass"].score(X, y)


def test_multinomial_gradient_screening():
    """K = 3: the per-class sums are released (sensitivity 1: one row changes one
    class's sum) and scored by max_k |grad_k| at W = 0; the columns informative of
    one class are kept, at the event of the mass screening.  A marking column has
    mass about 26 and gradient score about 17, a frequent column mass about 97 and
    score about 3 (sd 3); noise sd 1.4: false-failure rate below 1e-6, fixed seeds."""
    rng = np.random.default_rng(5)
    n, d = 1500, 3000
    y = rng.integers(0, 3, n)
    X = rng.random((n, d)) < 0.002
    X[:, :60] = rng.random((n, 60)) < 0.5
    for k in range(3):       # columns 60 + 4k .. 63 + 4k mark class k
        X[:, 60 + 4 * k:64 + 4 * k] = (rng.random((n, 4)) < 0.4) & (y[:, None] == k)
    X = sp.csr_array(X.astype(np.float64))
    fits = {score: _with_score(FrankWolfeLassoClassifier(
        epsilon=8.0, delta=1e-5, k=30, max_iter=20,
        l1_bound=5.0, classes=[0, 1, 2], n_samples_public=n,
        random_state=np.random.default_rng(0)), score).fit(X, y)
        for score in ("mass", "gradient")}
    planted = set(range(60, 72))
    assert planted <= set(fits["gradient"].screened_features_)
    assert not planted & set(fits["mass"].screened_features_)
    assert fits["gradient"].privacy_event_ == fits["mass"].privacy_event_
