"""Tests of dptoolkit.selection.

Statistical tests use fixed seeds; each states its false-failure rate, i.e. the
probability that it would fail for a random seed if the code were correct.
Exact laws are derived here independently of the implementation: the canonical
Lipschitz mechanism is report-noisy-max with Exp(1) noise over all C(d, k)
subsets, whose law is computed by numerical integration from the definition of
the loss (checked against a linear program for gamma = 1/2); the peeling
mechanism's law is the product of the per-round exponential-mechanism
probabilities.
"""
import itertools
import math
import tracemalloc

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from dptoolkit.selection import canonical_lipschitz_top_k, peeling_top_k
from dptoolkit.selection._topk import _iter_log_class_sizes, _max_exponential_noise


# ---------------------------------------------------------------------------
# Independent reference: the canonical Lipschitz mechanism by brute force
# ---------------------------------------------------------------------------

def _subsets(d, k):
    return list(itertools.combinations(range(d), k))


def _loss(y, x, gamma):
    """Generalised canonical loss from its definition (order-free form)."""
    inside = np.zeros(x.size, dtype=bool)
    inside[list(y)] = True
    a = x[~inside].max()          # best excluded score
    b = x[inside].min()           # worst included score
    return (1.0 - gamma) * max(a, b) - gamma * b


def _canonical_loss_lp(y, x):
    """min_{v : top-k(v) = y} ||x - v||_inf as a linear program (gamma = 1/2)."""
    d = x.size
    inside = set(y)
    # variables v_1..v_d, s ; minimise s
    c = np.zeros(d + 1)
    c[-1] = 1.0
    A, b = [], []
    for i in range(d):
        row = np.zeros(d + 1); row[i] = 1.0; row[-1] = -1.0
        A.append(row); b.append(x[i])          # v_i - s <= x_i
        row = np.zeros(d + 1); row[i] = -1.0; row[-1] = -1.0
        A.append(row); b.append(-x[i])         # -v_i - s <= -x_i
    for i in inside:
        for j in range(d):
            if j not in inside:
                row = np.zeros(d + 1); row[j] = 1.0; row[i] = -1.0
                A.append(row); b.append(0.0)   # v_j <= v_i
    res = optimize.linprog(c, A_ub=np.array(A), b_ub=np.array(b),
                           bounds=[(None, None)] * d + [(0, None)], method="highs")
    assert res.status == 0
    return res.fun


def _exact_law(x, k, epsilon, gamma, sensitivity=1.0):
    """P(output = y) for every k-subset y (report-noisy-max with Exp(1) noise)."""
    xn = np.asarray(x, float) / sensitivity
    subsets = _subsets(xn.size, k)
    util = np.array([-0.5 * epsilon * _loss(y, xn, gamma) for y in subsets])
    values, counts = np.unique(np.round(util, 12), return_counts=True)
    prob_of_value = {}
    for i, ui in enumerate(values):
        diffs = values - ui                  # F(e + u_i - u_j) = 1 - exp(-(e - diffs_j))
        lower = max(0.0, diffs.max())

        def f(e, diffs=diffs, i=i):
            logp = -e
            for j, dj in enumerate(diffs):
                n = counts[j] - (1 if j == i else 0)
                if n:
                    logp += n * np.log(-np.expm1(-(e - dj)))
            return np.exp(logp)

        val, _ = integrate.quad(f, lower, np.inf, epsabs=1e-14, epsrel=1e-12, limit=500)
        prob_of_value[ui] = val
    probs = np.array([prob_of_value[v] for v in np.round(util, 12)])
    return subsets, probs


def _empirical_counts(draws, subsets):
    index = {s: i for i, s in enumerate(subsets)}
    counts = np.zeros(len(subsets), dtype=np.int64)
    for row, c in zip(*np.unique(draws, axis=0, return_counts=True)):
        counts[index[tuple(int(v) for v in row)]] += c
    return counts


def _chi_square_pvalue(counts, probs, min_expected=5.0):
    """Pearson chi-square p-value, pooling cells with small expected counts."""
    n = counts.sum()
    expected = n * probs
    small = expected < min_expected
    obs = list(counts[~small]) + ([counts[small].sum()] if small.any() else [])
    exp = list(expected[~small]) + ([expected[small].sum()] if small.any() else [])
    obs, exp = np.array(obs, float), np.array(exp, float)
    exp *= obs.sum() / exp.sum()
    return stats.chisquare(obs, exp).pvalue


# ---------------------------------------------------------------------------
# Canonical Lipschitz: structure
# ---------------------------------------------------------------------------

def test_loss_formula_matches_linear_program():
    # The order-free loss with gamma = 1/2 is the canonical loss
    # min_{v: top-k(v) = y} ||x - v||_inf (Shekelyan & Loukides; Swope et al. A.3).
    rng = np.random.default_rng(0)
    x = rng.normal(size=6)
    for y in _subsets(6, 2):
        assert _loss(y, x, 0.5) == pytest.approx(_canonical_loss_lp(y, x), abs=1e-9)


@pytest.mark.parametrize("d", [5, 8, 9])
def test_class_sizes_partition_all_subsets(d):
    # Each k-subset belongs to exactly one class (h, p) (head size h: best excluded
    # item is order[h]; p: position of the worst included item); the class sizes
    # the mechanism uses must equal the enumerated counts and sum to C(d, k).
    for k in range(1, d):
        counts = {}
        for y in _subsets(d, k):           # identity order: item i has rank i
            ys = set(y)
            h = next(i for i in range(d) if i not in ys)
            h = min(h, k - 1)
            p = max(ys)
            counts[(h, p)] = counts.get((h, p), 0) + 1
        assert counts.pop((k - 1, k - 1)) == 1      # the true top-k
        total = 1
        for h, log_m in _iter_log_class_sizes(d, k):
            for p in range(k, d):
                m = counts.get((h, p), 0)
                assert m >= 1
                assert np.exp(log_m[p - k]) == pytest.approx(m, rel=1e-12)
                # and against gammaln: log C(p-h-1, k-h-1)
                ref = (special.gammaln(p - h) - special.gammaln(k - h)
                       - special.gammaln(p - k + 1))
                assert log_m[p - k] == pytest.approx(ref, abs=1e-10)
                total += m
        assert total == math.comb(d, k)
        # Swope et al. (2024) (A.4, Alg. 2 line 15) counts C(t-h-1, k-h-1) = C(p-h, k-h-1):
        # with it the classes would hold more than C(d, k) subsets whenever a
        # class with h < k - 1 exists.
        paper_total = 1 + sum(math.comb(p - h, k - h - 1)
                              for h in range(k) for p in range(k, d))
        if k >= 2:
            assert paper_total > math.comb(d, k)


def test_log_class_sizes_large_d_against_gammaln():
    d, k = 10**6, 14
    for h, log_m in _iter_log_class_sizes(d, k):
        p = np.array([k, k + 1, 1000, d // 2, d - 1])
        ref = special.gammaln(p - h) - special.gammaln(k - h) - special.gammaln(p - k + 1)
        # gammaln differences of numbers near 1e7 are themselves only good to ~1e-8
        np.testing.assert_allclose(log_m[p - k], ref, rtol=0, atol=1e-7)


@pytest.mark.parametrize("log_m", [0.0, np.log(7.0), np.log(1e4), 45.0, 100.0, 800.0])
def test_max_exponential_noise_law(log_m):
    # max of m Exp(1) has CDF (1 - e^-v)^m.  KS test, n = 20000; false-failure
    # rate 0.001 per case (alpha = 1e-3).
    rng = np.random.default_rng(12345)
    v = _max_exponential_noise(np.float64(log_m), rng, (20000,))
    assert np.all(np.isfinite(v))
    m = np.exp(min(log_m, 700.0))

    def cdf(t):
        # (1 - e^-t)^m = exp(-exp(log m + log(-log1p(-e^-t)))), stable for huge m
        with np.errstate(divide="ignore"):
            inner = np.where(t > 30, -t, np.log(-np.log1p(-np.exp(-np.minimum(t, 30)))))
        return np.exp(-np.exp(log_m + inner))

    assert stats.kstest(v, cdf).pvalue > 1e-3
    if log_m < 30:  # Theorem A.3: mean is the harmonic number H_m
        mi = int(round(m))
        h_m = special.digamma(mi + 1) + np.euler_gamma
        # sd of the max is <= pi / sqrt(6); 5-sigma bound, false-failure < 1e-6
        assert abs(v.mean() - h_m) < 5 * (np.pi / np.sqrt(6)) / np.sqrt(v.size)


# ---------------------------------------------------------------------------
# Canonical Lipschitz: exactness
# ---------------------------------------------------------------------------

EXACT_CASES = [
    # scores, k, epsilon, gamma, sensitivity
    (np.array([3.0, 2.5, 2.2, 1.0, 0.9, 0.3, -0.5, 0.0]), 3, 2.0, 0.5, 1.0),
    (np.array([4.0, 4.0, 3.0, 1.0, 1.0, 1.0, 0.0, 6.0]), 3, 3.0, 0.25, 2.0),   # ties
    (np.array([1.0, 5.0, 2.0, 8.0, 3.0, 0.0, 4.0, 7.0]), 3, 1.0, 1.0, 1.0),
]


@pytest.mark.parametrize("case", range(len(EXACT_CASES)))
def test_exact_distribution_chi_square(case):
    # 10^5 draws over all C(8,3) = 56 subsets against the brute-force law;
    # Pearson chi-square at alpha = 1e-3 (false-failure rate 0.001 per case).
    x, k, eps, gamma, sens = EXACT_CASES[case]
    subsets, probs = _exact_law(x, k, eps, gamma, sens)
    assert probs.sum() == pytest.approx(1.0, abs=1e-8)
    draws = canonical_lipschitz_top_k(x, k, epsilon=eps, gamma=gamma, sensitivity=sens,
                                      random_state=1000 + case, size=100_000)
    assert draws.shape == (100_000, k)
    counts = _empirical_counts(draws, subsets)
    assert counts.sum() == 100_000
    assert _chi_square_pvalue(counts, probs) > 1e-3


def test_exact_law_detects_wrong_class_sizes():
    # Power check of the chi-square test: the law with the paper's class sizes
    # C(t-h-1, k-h-1) (an over-count) differs from the correct law by far more
    # than 10^5 draws can hide.  Simulate the paper's version by brute force.
    x, k, eps, gamma, _ = EXACT_CASES[0]
    subsets, probs = _exact_law(x, k, eps, gamma)
    rng = np.random.default_rng(7)
    d = x.size
    order = np.argsort(-x, kind="stable")
    xs = x[order]
    n = 100_000
    best = (0.5 * eps * (2 * gamma - 1)) * xs[k - 1] + rng.standard_exponential(n)
    winner = np.full((n, 2), [k - 1, k - 1])
    for h in range(k):
        for p in range(k, d):
            m = math.comb(p - h, k - h - 1)              # paper's count
            u = 0.5 * eps * (gamma * xs[p] - (1 - gamma) * xs[h])
            v = u + _max_exponential_noise(np.log(m), rng, (n,))
            better = v > best
            best = np.where(better, v, best)
            winner[better] = [h, p]
    # members: for the paper's variant body from order[h:p] minus order[h] is
    # not defined; compare the law of the worst included rank p instead.
    emp = np.bincount(winner[:, 1], minlength=d)[k - 1:]
    exact_p = np.zeros(d - k + 1)
    for y, pr in zip(subsets, probs):
        ranks = [int(np.flatnonzero(order == i)[0]) for i in y]
        exact_p[max(ranks) - (k - 1)] += pr
    chi = stats.chisquare(emp, n * exact_p / exact_p.sum())
    assert chi.pvalue < 1e-6


def _reference_classes(xs, k, eps, gamma, n, rng):
    """Winning (head, tail) per draw with one noise per class (no grouping)."""
    d = xs.size
    hs, ps = np.meshgrid(np.arange(k), np.arange(k, d), indexing="ij")
    log_m = (special.gammaln(ps - hs) - special.gammaln(k - hs)
             - special.gammaln(ps - k + 1))
    util = 0.5 * eps * (gamma * xs[ps] - (1 - gamma) * xs[hs])
    vals = util[None] + _max_exponential_noise(log_m[None], rng, (n,) + log_m.shape)
    flat = vals.reshape(n, -1)
    arg = np.argmax(flat, axis=1)
    top = 0.5 * eps * (2 * gamma - 1) * xs[k - 1] + rng.standard_exponential(n)
    head = np.where(flat[np.arange(n), arg] > top, hs.ravel()[arg], k - 1)
    tail = np.where(flat[np.arange(n), arg] > top, ps.ravel()[arg], k - 1)
    return head, tail


def test_huge_classes_grouped_path_matches_per_class_reference():
    # d = 120, k = 25: classes up to C(118, 24) ~ e^60 use the grouped
    # Gumbel-max path (log m >= 45).  The law of the winning class's head size
    # and tail position must match a reference drawing one noise per class.
    # Two-sample chi-square on each statistic at alpha = 1e-3 (false-failure
    # rate <= 2e-3).
    from dptoolkit.selection._topk import _LOG_M_LARGE
    d, k, eps, gamma, n = 120, 25, 7.0, 0.5, 3000
    x = np.sort(np.random.default_rng(0).normal(size=d) * 8)[::-1]
    assert (special.gammaln(d - 1) - special.gammaln(k) - special.gammaln(d - k)) > _LOG_M_LARGE
    draws = canonical_lipschitz_top_k(x, k, epsilon=eps, gamma=gamma, random_state=8,
                                      size=n)
    # (scores sorted decreasingly: item i has rank i) -> head = first missing rank
    missing = np.array([np.setdiff1d(np.arange(d), r)[0] for r in draws])
    head = np.minimum(missing, k - 1)
    tail = draws.max(axis=1)
    ref_h, ref_t = _reference_classes(x, k, eps, gamma, n, np.random.default_rng(9))
    def is_huge(h, t):
        with np.errstate(invalid="ignore"):
            lm = special.gammaln(t - h) - special.gammaln(k - h) - special.gammaln(t - k + 1)
        return (h < k - 1) & (t >= k) & (lm >= _LOG_M_LARGE)

    big, ref_big = is_huge(head, tail), is_huge(ref_h, ref_t)
    assert 0.2 < ref_big.mean() < 0.8   # both paths win often enough to be tested
    for a, b in [(head, ref_h), (tail // 8, ref_t // 8), (big, ref_big)]:
        values = np.union1d(a, b)
        table = np.array([[np.sum(a == v) for v in values], [np.sum(b == v) for v in values]])
        keep = table.sum(axis=0) >= 10
        pooled = np.c_[table[:, keep], table[:, ~keep].sum(axis=1)]
        pooled = pooled[:, pooled.sum(axis=0) > 0]
        assert stats.chi2_contingency(pooled).pvalue > 1e-3


def test_large_epsilon_returns_true_top_k():
    x = np.array([0.0, 5.0, 1.0, 4.0, 2.0, 3.0, -1.0, 6.0])
    draws = canonical_lipschitz_top_k(x, 3, epsilon=500.0, random_state=3, size=2000)
    # P(miss) <= (C(8,3) - 1) exp(-gamma eps xi / 2) = 55 e^-125: never.
    assert np.all(draws == [1, 3, 7])
    assert list(canonical_lipschitz_top_k(x, 3, epsilon=500.0, random_state=4)) == [1, 3, 7]


def test_utility_bound_corrected_theorem():
    # Theorem 4.1 of Swope et al. (AISec 2024) with Shekelyan-Loukides A.20 corrected:
    # P(output != top-k) <= (C(d,k) - 1) exp(-gamma eps xi / 2), xi = x_[k] - x_[k+1].
    x = np.array([9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0])
    k, gamma, xi = 3, 0.5, 1.0
    for eps in [12.0, 20.0, 30.0]:
        bound = min(1.0, (math.comb(8, 3) - 1) * math.exp(-gamma * eps * xi / 2))
        draws = canonical_lipschitz_top_k(x, k, epsilon=eps, gamma=gamma,
                                          random_state=int(eps), size=20000)
        miss = np.mean(np.any(draws != [0, 1, 2], axis=1))
        # binomial 4-sigma slack: false-failure < 1e-4 per epsilon
        assert miss <= bound + 4 * np.sqrt(bound * (1 - bound) / 20000) + 1e-12
    # the bound is not vacuous in this regime: at eps = 30 it is 0.03
    assert (math.comb(8, 3) - 1) * math.exp(-7.5) < 0.04


def test_tiny_epsilon_every_subset_uniform():
    # epsilon -> 0: all utilities equal, so the law is uniform over the 56 subsets;
    # every subset appears and chi-square against uniform at alpha = 1e-3
    # (false-failure rate 0.001).
    x = np.array([10.0, 0.0, 3.0, 7.0, 1.0, 2.0, 9.0, 8.0])
    draws = canonical_lipschitz_top_k(x, 3, epsilon=1e-9, random_state=5, size=100_000)
    subsets = _subsets(8, 3)
    counts = _empirical_counts(draws, subsets)
    assert np.all(counts > 0)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_output_sorted_and_distinct():
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    draws = canonical_lipschitz_top_k(x, 20, epsilon=1.0, random_state=1, size=200)
    assert draws.dtype == np.int64
    assert np.all(np.diff(draws, axis=1) > 0)
    assert draws.min() >= 0 and draws.max() < 300


def test_reproducible_and_generator_shared():
    x = np.linspace(0, 1, 50)
    a = canonical_lipschitz_top_k(x, 5, epsilon=1.0, random_state=42)
    b = canonical_lipschitz_top_k(x, 5, epsilon=1.0, random_state=42)
    np.testing.assert_array_equal(a, b)
    rng = np.random.default_rng(1)
    c = canonical_lipschitz_top_k(x, 5, epsilon=1.0, random_state=rng, size=50)
    d = canonical_lipschitz_top_k(x, 5, epsilon=1.0, random_state=rng, size=50)
    assert not np.array_equal(c, d)


def test_chunked_batches_exact(monkeypatch):
    # Force the row-chunking of batched draws (chunks of 3 rows) and repeat the
    # exactness test: chi-square against the brute-force law at alpha = 1e-3
    # (false-failure rate 0.001).
    from dptoolkit.selection import _topk
    monkeypatch.setattr(_topk, "_CHUNK_ELEMENTS", 16)
    x, k, eps, gamma, sens = EXACT_CASES[0]
    subsets, probs = _exact_law(x, k, eps, gamma, sens)
    draws = canonical_lipschitz_top_k(x, k, epsilon=eps, gamma=gamma, random_state=77,
                                      size=30_000)
    assert _chi_square_pvalue(_empirical_counts(draws, subsets), probs) > 1e-3


def test_large_d_runs_in_o_d_memory():
    # d k = 10^7 classes; an O(d k) float array would need 80 MB.  The mechanism
    # must stay within a small multiple of d floats (traced NumPy allocations).
    d, k = 50_000, 200
    x = np.random.default_rng(0).normal(size=d)
    tracemalloc.start()
    try:
        out = canonical_lipschitz_top_k(x, k, epsilon=1.0, random_state=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert out.shape == (k,) and np.unique(out).size == k
    assert peak < 40 * 8 * d, f"peak {peak / 1e6:.1f} MB"


# ---------------------------------------------------------------------------
# Privacy: neighbour test
# ---------------------------------------------------------------------------

def test_neighbour_exact_probability_ratio_bounded():
    # Scores x and x' = x + s with s in {-1, +1}^d (every coordinate shifted by
    # the full sensitivity, the worst case) and s with zeros.  The exact law
    # (numerical integration, tolerance 1e-10) must satisfy
    # P(y | x) <= e^eps P(y | x') for every subset y.  Events are unions of
    # subsets, whose ratio is at most the largest singleton ratio.
    x = np.array([2.0, 1.4, 1.0, 0.2, -0.3])
    k, eps = 2, 1.0
    _, p = _exact_law(x, k, eps, 0.5)
    worst = 0.0
    shifts = list(itertools.product([-1.0, 1.0], repeat=5)) + [
        (1, 0, 0, 0, -1), (0, -1, 1, 0, 0), (-1, -1, 1, 1, 0)]
    for s in shifts:
        _, q = _exact_law(x + np.array(s), k, eps, 0.5)
        worst = max(worst, np.max(np.abs(np.log(p) - np.log(q))))
    assert worst <= eps + 1e-7
    # and the guarantee is nearly tight (the test can see a violation)
    assert worst > 0.5 * eps


def test_neighbour_empirical_audit():
    # Empirical audit of the implementation on the worst neighbour pair found by
    # the exact law: with n = 2e5 draws each, Clopper-Pearson intervals at level
    # 1 - 1e-4 per probability (Bonferroni over 2 x 10 subsets: family-wise
    # false-failure rate <= 2e-3) must not certify a ratio above e^eps.
    x = np.array([2.0, 1.4, 1.0, 0.2, -0.3])
    xp = x + np.array([-1.0, 1.0, -1.0, -1.0, 1.0])   # worst pair of the exact test
    k, eps, n = 2, 1.0, 200_000
    subsets = _subsets(5, k)
    a = _empirical_counts(canonical_lipschitz_top_k(x, k, epsilon=eps, random_state=11,
                                                    size=n), subsets)
    b = _empirical_counts(canonical_lipschitz_top_k(xp, k, epsilon=eps, random_state=12,
                                                    size=n), subsets)
    alpha = 1e-4
    lo_a = stats.beta.ppf(alpha / 2, a, n - a + 1)
    hi_a = stats.beta.ppf(1 - alpha / 2, a + 1, n - a)
    lo_b = stats.beta.ppf(alpha / 2, b, n - b + 1)
    hi_b = stats.beta.ppf(1 - alpha / 2, b + 1, n - b)
    with np.errstate(divide="ignore", invalid="ignore"):
        certified = np.nanmax(np.concatenate([np.log(lo_a / hi_b), np.log(lo_b / hi_a)]))
    assert certified <= eps


# ---------------------------------------------------------------------------
# Peeling baseline
# ---------------------------------------------------------------------------

def _peeling_law(x, k, eps, sensitivity=1.0, monotonic=False):
    c = (eps / k) / (sensitivity if monotonic else 2 * sensitivity)
    seqs = list(itertools.permutations(range(x.size), k))
    probs = []
    for seq in seqs:
        remaining = list(range(x.size))
        pr = 1.0
        for i in seq:
            w = np.exp(c * x[remaining])
            pr *= np.exp(c * x[i]) / w.sum()
            remaining.remove(i)
        probs.append(pr)
    return seqs, np.array(probs)


@pytest.mark.parametrize("monotonic,method,n", [(False, "oneshot", 100_000),
                                                (True, "oneshot", 100_000),
                                                (False, "sequential", 20_000)])
def test_peeling_exact_sequence_law(monotonic, method, n):
    # Law of the ordered output over all 30 sequences (d = 6, k = 2) against the
    # product of exponential-mechanism probabilities; chi-square, alpha = 1e-3
    # (false-failure rate 0.001 per case).
    x = np.array([3.0, 0.0, 2.0, 1.0, -1.0, 2.5])
    seqs, probs = _peeling_law(x, 2, 4.0, monotonic=monotonic)
    draws = peeling_top_k(x, 2, epsilon=4.0, monotonic=monotonic, method=method,
                          random_state=9, size=n)
    index = {s: i for i, s in enumerate(seqs)}
    counts = np.zeros(len(seqs), dtype=np.int64)
    for row, c in zip(*np.unique(draws, axis=0, return_counts=True)):
        counts[index[tuple(int(v) for v in row)]] += c
    assert _chi_square_pvalue(counts, probs) > 1e-3


def test_peeling_composition_per_round_budget():
    # Total epsilon is split evenly: with k = 1 peeling is one exponential
    # mechanism with the full epsilon (probabilities proportional to e^{eps x/2}).
    x = np.array([0.0, 1.0, 2.0])
    draws = peeling_top_k(x, 1, epsilon=2.0, random_state=0, size=60_000)
    p = np.exp(x) / np.exp(x).sum()
    counts = np.bincount(draws[:, 0], minlength=3)
    assert stats.chisquare(counts, 60_000 * p).pvalue > 1e-3   # false-failure 1e-3


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("func", [canonical_lipschitz_top_k, peeling_top_k])
def test_bad_input(func):
    x = np.arange(5.0)
    with pytest.raises(ValueError, match="k must be in"):
        func(x, 0, epsilon=1.0)
    with pytest.raises(ValueError, match="k must be in"):
        func(x, 5, epsilon=1.0)
    with pytest.raises(ValueError, match="k must be in"):
        func(x, -2, epsilon=1.0)
    with pytest.raises(TypeError, match="k must be an integer"):
        func(x, 2.0, epsilon=1.0)
    with pytest.raises(ValueError, match="finite"):
        func(np.array([1.0, np.nan, 2.0]), 1, epsilon=1.0)
    with pytest.raises(ValueError, match="finite"):
        func(np.array([1.0, np.inf, 2.0]), 1, epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        func(x, 2, epsilon=0.0)
    with pytest.raises(ValueError, match="epsilon"):
        func(x, 2, epsilon=-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        func(x, 2, epsilon=np.inf)
    with pytest.raises(ValueError, match="sensitivity"):
        func(x, 2, epsilon=1.0, sensitivity=0.0)
    with pytest.raises(ValueError, match="sensitivity"):
        func(x, 2, epsilon=1.0, sensitivity=-2.0)
    with pytest.raises(ValueError, match="1-D"):
        func(np.ones((2, 3)), 1, epsilon=1.0)
    with pytest.raises(ValueError, match="at least 2"):
        func(np.ones(1), 1, epsilon=1.0)
    with pytest.raises(TypeError, match="numeric"):
        func(np.array(["a", "b", "c"]), 1, epsilon=1.0)
    with pytest.raises(ValueError, match="size"):
        func(x, 2, epsilon=1.0, size=0)


def test_bad_gamma():
    with pytest.raises(ValueError, match="gamma"):
        canonical_lipschitz_top_k(np.arange(5.0), 2, epsilon=1.0, gamma=1.5)
    with pytest.raises(ValueError, match="gamma"):
        canonical_lipschitz_top_k(np.arange(5.0), 2, epsilon=1.0, gamma=-0.1)


# ---------------------------------------------------------------------------
# SIS / DP-SIS
# ---------------------------------------------------------------------------
import warnings  # noqa: E402

import scipy.sparse as sp  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from dptoolkit.exceptions import (  # noqa: E402
    DataClippedWarning,
    EmptySupportWarning,
    PrivacyLeakWarning,
)
from dptoolkit.selection import (  # noqa: E402
    DPSIS,
    SIS,
    PrivateSelectThenFit,
    TwoStageSelector,
    block_support_counts,
    dpsis_scores,
    top_great_good,
    top_k_accuracy,
)
from dptoolkit.selection._metrics import order_statistics_hit  # noqa: E402

SPARSE_FORMATS = [sp.csr_array, sp.csc_array, sp.coo_array, sp.lil_array, sp.dok_array,
                  sp.bsr_array, sp.dia_array, sp.csr_matrix]


@parametrize_with_checks([SIS(k=1), DPSIS(k=1, epsilon=1.0, random_state=0),
                          TwoStageSelector(k=1, epsilon=1.0, random_state=0)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataClippedWarning)
        check(estimator)


def _sparse_problem(seed=0, n=60, d=30):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, d)) * (rng.random((n, d)) < 0.3)
    w = np.zeros(d)
    w[[2, 5, 11]] = [1.5, -1.0, 2.0]
    y = X @ w + 0.1 * rng.normal(size=n)
    return X, y


def test_sis_scores_are_absolute_correlations():
    X, y = _sparse_problem()
    X[:, 7] = 3.0                                    # constant column -> score 0
    sis = SIS(k=3).fit(X, y)
    ref = np.array([0.0 if X[:, j].std() == 0 else abs(np.corrcoef(X[:, j], y)[0, 1])
                    for j in range(X.shape[1])])
    np.testing.assert_allclose(sis.scores_, ref, atol=1e-12)
    assert list(sis.selected_features_) == [2, 5, 11]
    assert sis.transform(X).shape == (X.shape[0], 3)
    for fmt in SPARSE_FORMATS:
        np.testing.assert_allclose(SIS(k=3).fit(fmt(X), y).scores_, ref, atol=1e-12)


def _dpsis_reference(X, y, lo, hi, c, ylo, yhi, yc):
    Xc = (np.clip(X, lo, hi) - c) / np.maximum(hi - c, c - lo)
    yt = (np.clip(y, ylo, yhi) - yc) / max(yhi - yc, yc - ylo)
    return np.abs(Xc.T @ yt)


@pytest.mark.parametrize("fmt", [np.asarray] + SPARSE_FORMATS)
def test_dpsis_scores_public_bounds_dense_and_sparse(fmt):
    # Bounds that exclude 0 for some columns: implicit zeros of sparse input must
    # be clipped like explicit ones.
    X, y = _sparse_problem()
    d = X.shape[1]
    lo = np.full(d, -1.0); hi = np.full(d, 1.5)
    lo[:5] = 0.25                                    # 0 is outside [0.25, 1.5]
    hi[5:8] = -0.5; lo[5:8] = -3.0                   # 0 is outside [-3, -0.5]
    c = 0.5 * (lo + hi)
    c[10] = hi[10]                                   # a public centre at the edge
    ref = _dpsis_reference(X, y, lo, hi, c, -2.0, 2.0, 0.5)
    with pytest.warns(DataClippedWarning):
        got = dpsis_scores(fmt(X), y, bounds=(lo, hi), center=c, y_bounds=(-2.0, 2.0),
                           y_center=0.5)
    np.testing.assert_allclose(got, ref, atol=1e-10)


def test_dpsis_no_warning_when_inside_bounds():
    X, y = _sparse_problem()
    X = np.clip(X, -1, 1); y = np.clip(y / 5, -1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fmt in [np.asarray, sp.csr_array]:
            dpsis_scores(fmt(X), y)
            DPSIS(k=3, epsilon=1.0, random_state=0).fit(fmt(X), y)


def test_dpsis_data_bounds_reproduce_paper_and_warn():
    # Swope et al. (2024) Alg. 1 steps 1-2: centre columns and y, scale to max-abs 1.
    X, y = _sparse_problem()
    Xc = X - X.mean(axis=0)
    Xc = Xc / np.abs(Xc).max(axis=0)
    yc = y - y.mean()
    yc = yc / np.abs(yc).max()
    ref = np.abs(Xc.T @ yc)
    for fmt in [np.asarray, sp.csr_array, sp.csc_array]:
        with pytest.warns(PrivacyLeakWarning):
            got = dpsis_scores(fmt(X), y, bounds="data", y_bounds="data")
        np.testing.assert_allclose(got, ref, atol=1e-10)
    with pytest.warns(PrivacyLeakWarning):
        DPSIS(k=3, epsilon=1.0, bounds="data", y_bounds="data", random_state=0).fit(X, y)


@pytest.mark.parametrize("neighbouring,sens", [("add_remove", 1.0), ("replace_one", 2.0)])
def test_dpsis_score_sensitivity(neighbouring, sens):
    # Adding/removing one example moves every score by <= 1, replacing one by <= 2
    # (public bounds [-1, 1]); extreme rows (entries +-1) attain the bound.
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(40, 25)); y = rng.uniform(-1, 1, size=40)
    base = dpsis_scores(X, y)
    worst = 0.0
    for _ in range(200):
        row = rng.choice([-1.0, 1.0], size=25) * rng.uniform(0.5, 1, size=25)
        t = rng.choice([-1.0, 1.0])
        if neighbouring == "add_remove":
            other = dpsis_scores(np.vstack([X, row]), np.append(y, t))
        else:
            i = rng.integers(40)
            X2, y2 = X.copy(), y.copy()
            X2[i], y2[i] = row, t
            other = dpsis_scores(X2, y2)
        worst = max(worst, np.max(np.abs(other - base)))
    assert worst <= sens + 1e-12
    assert worst > 0.75 * sens
    est = DPSIS(k=2, epsilon=1.0, neighbouring=neighbouring, random_state=0).fit(X, y)
    assert est.sensitivity_ == sens
    assert est.privacy_spent_ == (1.0, 0.0)


@pytest.mark.parametrize("selector", ["canonical_lipschitz", "peeling"])
def test_dpsis_is_top_k_mechanism_on_scores(selector):
    # DP-SIS = the chosen top-k mechanism applied to the scores with the stated
    # sensitivity: same seed, same output.
    from dptoolkit.selection import canonical_lipschitz_top_k as clt, peeling_top_k as pk
    X, y = _sparse_problem(seed=5)
    X = np.clip(X, -1, 1); y = np.clip(y / 5, -1, 1)
    scores = dpsis_scores(X, y)
    est = DPSIS(k=4, epsilon=3.0, neighbouring="replace_one", mechanism=selector,
                gamma=0.3, random_state=123).fit(sp.csr_array(X), y)
    if selector == "canonical_lipschitz":
        ref = clt(scores, 4, epsilon=3.0, sensitivity=2.0, gamma=0.3, random_state=123)
    else:
        ref = np.sort(pk(scores, 4, epsilon=3.0, sensitivity=2.0, random_state=123))
    np.testing.assert_array_equal(est.selected_features_, ref)
    assert est.get_support().sum() == 4
    assert not hasattr(est, "scores_")            # non-private scores are not exposed


def test_dpsis_recovers_strong_features():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(2000, 200))
    y = np.clip(X[:, [3, 50, 150]].sum(axis=1) / 3, -1, 1)
    est = DPSIS(k=3, epsilon=5.0, random_state=0).fit(X, y)
    assert list(est.selected_features_) == [3, 50, 150]


def test_selectors_bad_input():
    X, y = _sparse_problem()
    for est in [SIS(k=3), DPSIS(k=3, epsilon=1.0), TwoStageSelector(k=3, epsilon=1.0)]:
        with pytest.raises(ValueError, match="inconsistent numbers of samples"):
            est.fit(X, y[:-1])
        Xn = X.copy(); Xn[0, 0] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            est.fit(Xn, y)
        with pytest.raises(ValueError, match=r"k (of \w+ )?must be"):  # the table's or k < D
            est.set_params(k=0).fit(X, y)
        if isinstance(est, DPSIS):
            with pytest.raises(ValueError, match="k must be in"):
                est.set_params(k=X.shape[1]).fit(X, y)
        est.set_params(k=3)
    for est in [DPSIS(k=3, epsilon=None), TwoStageSelector(k=3, epsilon=None)]:
        for bad in [0.0, -1.0, np.inf]:
            with pytest.raises(ValueError, match="epsilon"):
                est.set_params(epsilon=bad).fit(X, y)
        est.set_params(epsilon=1.0)
        with pytest.raises(ValueError, match="neighbouring"):
            est.set_params(neighbouring="swap").fit(X, y)
        est.set_params(neighbouring="add_remove")
        with pytest.raises(ValueError, match="mechanism"):
            est.set_params(mechanism="gumbel").fit(X, y)
    with pytest.raises(ValueError, match="bounds"):
        DPSIS(k=3, bounds=(1.0, -1.0), epsilon=None).fit(X, y)
    with pytest.raises(ValueError, match="bounds"):
        DPSIS(k=3, bounds="clip", epsilon=None).fit(X, y)
    with pytest.raises(ValueError, match="y_bounds"):
        DPSIS(k=3, y_bounds=(0.0, np.nan), epsilon=None).fit(X, y)
    with pytest.raises(ValueError, match="center"):
        DPSIS(k=3, center=5.0, epsilon=None).fit(X, y)
    with pytest.raises(ValueError, match="bounds must hold"):
        DPSIS(k=3, bounds=(np.zeros(3), np.ones(3)), epsilon=None).fit(X, y)
    with pytest.raises(ValueError, match="center must be"):
        DPSIS(k=3, center=np.zeros(4), epsilon=None).fit(X, y)
    with pytest.raises(ValueError, match="n_blocks"):
        TwoStageSelector(k=3, n_blocks=0, epsilon=None).fit(X, y)
    with pytest.raises(ValueError, match="n_blocks"):
        TwoStageSelector(k=3, n_blocks=X.shape[0] + 1, epsilon=None).fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        TwoStageSelector(k=3, alpha=0.0, epsilon=None).fit(X, y)
    with pytest.raises(ValueError, match="block_support"):
        TwoStageSelector(k=3, block_support="all", epsilon=None).fit(X, y)


# ---------------------------------------------------------------------------
# Two-stage
# ---------------------------------------------------------------------------

def _w1(seed, n=100, d=100):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, :5].sum(axis=1) + np.sqrt(0.1) * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("alpha_scale", ["absolute", "block_max"])
def test_block_counts_sensitivity_replace_one(alpha_scale):
    # Same seed = same partition; replacing one example changes one block, so
    # every count moves by at most 1 (while several counts do move).  With
    # alpha_scale="block_max" the changed block's penalty changes too, and only it.
    X, y = _w1(0, n=64, d=40)
    base = block_support_counts(X, y, n_blocks=8, alpha_scale=alpha_scale, random_state=1)
    rng = np.random.default_rng(2)
    moved = 0
    for i in rng.choice(64, size=6, replace=False):
        X2, y2 = X.copy(), y.copy()
        X2[i] = 10 * rng.normal(size=40); y2[i] = -50.0
        other = block_support_counts(X2, y2, n_blocks=8, alpha_scale=alpha_scale,
                                     random_state=1)
        assert np.max(np.abs(other - base)) <= 1
        moved += np.count_nonzero(other != base)
    assert moved > 0


@pytest.mark.parametrize("alpha_scale", ["absolute", "block_max"])
def test_block_counts_sensitivity_add_remove(alpha_scale):
    # i.i.d. block labels: appending an example keeps every other example's
    # block (same seed), so counts move by at most 1.
    X, y = _w1(1, n=64, d=40)
    base = block_support_counts(X, y, n_blocks=8, neighbouring="add_remove",
                                alpha_scale=alpha_scale, random_state=4)
    rng = np.random.default_rng(5)
    for _ in range(5):
        Xa = np.vstack([X, 10 * rng.normal(size=40)])
        ya = np.append(y, 40.0)
        other = block_support_counts(Xa, ya, n_blocks=8, neighbouring="add_remove",
                                     alpha_scale=alpha_scale, random_state=4)
        assert np.max(np.abs(other - base)) <= 1


def test_block_counts_partition_and_support():
    X, y = _w1(2, n=400)
    counts = block_support_counts(X, y, n_blocks=20, alpha=0.1, random_state=0)
    assert counts.dtype == np.int64 and counts.max() <= 20 and counts.min() >= 0
    capped = block_support_counts(X, y, n_blocks=20, alpha=0.1, max_support=5,
                                  random_state=0)
    assert capped.sum() <= 100
    assert np.all(capped <= counts)
    # with blocks of 20 examples the 5 true features are found by most blocks
    assert np.all(counts[:5] >= 10)
    X, y = _w1(2)
    # contiguous, unshuffled blocks (planted-outlier experiment of Swope et al., Sec. 3)
    a = block_support_counts(X, y, n_blocks=10, shuffle=False, random_state=0)
    b = block_support_counts(X, y, n_blocks=10, shuffle=False, random_state=99)
    np.testing.assert_array_equal(a, b)


def test_two_stage_selects_and_reports_budget():
    X, y = _w1(3, n=400)
    est = TwoStageSelector(k=5, epsilon=50.0, random_state=0).fit(sp.csr_array(X), y)
    assert list(est.selected_features_) == [0, 1, 2, 3, 4]
    assert est.n_blocks_ == 20
    assert est.privacy_spent_ == (50.0, 0.0)
    with pytest.warns(PrivacyLeakWarning, match="n_samples"):
        TwoStageSelector(k=5, epsilon=1.0, neighbouring="add_remove", random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        TwoStageSelector(k=5, epsilon=1.0, neighbouring="add_remove", n_blocks=20,
                         mechanism="peeling", block_support="top_k", random_state=0).fit(X, y)


def test_two_stage_warns_when_every_block_support_is_empty():
    # Features of order 0.01: every block's alpha_max (~0.01 here) is below the
    # default alpha = 0.1, all supports are empty and the selection is random.
    X, y = _w1(3, n=400)
    X_small = 0.01 * X
    with pytest.warns(EmptySupportWarning, match="support is empty.*alpha_scale='block_max'"):
        counts = block_support_counts(X_small, y, n_blocks=20, random_state=0)
    assert not counts.any()
    # the private fit stays silent: a data-dependent warning is outside epsilon
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmptySupportWarning)
        est = TwoStageSelector(k=5, epsilon=50.0, random_state=0).fit(X_small, y)
    assert est.selected_features_.shape == (5,)
    # the same penalty at feature scale 1 selects, silently
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmptySupportWarning)
        assert block_support_counts(X, y, n_blocks=20, random_state=0)[:5].min() >= 10
        TwoStageSelector(k=5, epsilon=1.0, random_state=0).fit(X, y)


def test_block_max_alpha_is_scale_invariant():
    # alpha_scale="block_max": each block's penalty is alpha times its own
    # alpha_max, so rescaling X or y rescales the block problems exactly.
    X, y = _w1(3, n=400)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EmptySupportWarning)
        ref = block_support_counts(X, y, n_blocks=20, alpha=0.1, alpha_scale="block_max",
                                   random_state=0)
        assert ref[:5].min() >= 10 and ref[:5].min() > ref[5:].max()
        for cx, cy in [(0.01, 1.0), (1e-3, 1e3), (100.0, 0.1)]:
            counts = block_support_counts(cx * X, cy * y, n_blocks=20, alpha=0.1,
                                          alpha_scale="block_max", random_state=0)
            np.testing.assert_array_equal(counts, ref)
        # same counts and same random stream: the same private selection
        a = TwoStageSelector(k=5, epsilon=1.0, alpha_scale="block_max", random_state=7)
        b = TwoStageSelector(k=5, epsilon=1.0, alpha_scale="block_max", random_state=7)
        np.testing.assert_array_equal(a.fit(X, y).selected_features_,
                                      b.fit(0.01 * X, y).selected_features_)
    # a block whose y is constant has alpha_max = 0: an empty support, no error
    with pytest.warns(EmptySupportWarning, match="y is constant"):
        counts = block_support_counts(X, np.ones(X.shape[0]), n_blocks=4,
                                      alpha_scale="block_max", random_state=0)
    assert not counts.any()


def test_two_stage_alpha_scale_bad_input():
    X, y = _w1(3, n=100)
    with pytest.raises(ValueError, match="alpha_scale"):
        TwoStageSelector(k=3, alpha_scale="relative", epsilon=None).fit(X, y)
    for bad in [0.0, 1.0, 1.5]:
        with pytest.raises(ValueError, match="alpha"):
            TwoStageSelector(k=3, alpha=bad, alpha_scale="block_max", epsilon=None).fit(X, y)
        with pytest.raises(ValueError, match="alpha"):
            block_support_counts(X, y, n_blocks=4, alpha=bad, alpha_scale="block_max")
    # > 1 is a valid absolute penalty
    sel = TwoStageSelector(k=3, epsilon=1.0, alpha=1e6, random_state=0).fit(X, y)
    assert sel.selected_features_.size == 3


# ---------------------------------------------------------------------------
# Metrics
# ---------------------------------------------------------------------------

def test_top_k_accuracy():
    assert top_k_accuracy([1, 2, 3], [3, 4, 1]) == pytest.approx(2 / 3)
    np.testing.assert_allclose(top_k_accuracy(np.array([[1, 2], [5, 6]]), [2, 6]), [0.5, 0.5])
    with pytest.raises(ValueError, match="repeated"):
        top_k_accuracy([1, 1], [1, 2])
    with pytest.raises(ValueError, match="reference"):
        top_k_accuracy([1, 2], [])
    with pytest.raises(TypeError, match="integer"):
        top_k_accuracy([1.0, 2.0], [1, 2])


def test_top_great_good():
    scores = np.arange(100.0)[::-1]                  # item i has rank i + 1
    k = 20
    top = np.arange(20)
    great = np.r_[0, 1, np.arange(3, 21)]            # top 2 kept, rest within top 22
    good = np.r_[np.arange(1, 20), 29]               # within top 30, top 0 required
    bad = np.r_[np.arange(1, 20), 30]
    res = top_great_good(np.vstack([top, great, good, bad]), scores)
    np.testing.assert_array_equal(res["top"], [True, False, False, False])
    np.testing.assert_array_equal(res["great"], [True, True, False, False])
    np.testing.assert_array_equal(res["good"], [True, True, True, False])
    # missing the best item fails GREAT (floor(20/10) = 2 head items)
    assert not top_great_good(np.r_[np.arange(1, 21)], scores)["great"]
    # ties: swapping an item for an equal-scored one keeps TOP
    tied = np.array([5.0, 4.0, 4.0, 1.0])
    assert top_great_good([0, 2], tied)["top"] and top_great_good([0, 1], tied)["top"]
    assert k == 20
    with pytest.raises(ValueError, match="tail"):
        order_statistics_hit([0, 1], tied, 1, 1)


# ---------------------------------------------------------------------------
# Pipeline
# ---------------------------------------------------------------------------

def _fw_classifier():
    lm = pytest.importorskip("dptoolkit.linear_model")
    if not hasattr(lm, "FrankWolfeLassoClassifier"):
        pytest.skip("FrankWolfeLassoClassifier not available")
    return lm.FrankWolfeLassoClassifier


def _classification(seed=0, n=600, d=80):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = (X[:, 0] + X[:, 1] - X[:, 2] > 0).astype(float)
    return X, y


def test_pipeline_total_guarantee_and_prediction():
    FW = _fw_classifier()
    X, y = _classification()
    pipe = PrivateSelectThenFit(
        DPSIS(k=5, epsilon=2.0, y_bounds=(0.0, 1.0), random_state=0),
        FW(l1_bound=5.0, max_iter=50, epsilon=10.0, delta=1e-6, random_state=0), epsilon=None)
    pipe.fit(sp.csr_array(X), y)
    assert pipe.privacy_spent_[0] == pytest.approx(12.0)
    assert pipe.privacy_spent_[1] == pytest.approx(1e-6)
    assert pipe.support_.sum() == 5
    assert pipe.predict(X).shape == (X.shape[0],)
    assert pipe.score(X, y) > 0.6
    assert set(np.flatnonzero(pipe.support_)) >= {0, 1, 2}


def test_pipeline_rejects_non_private_and_mismatched_relations():
    FW = _fw_classifier()
    X, y = _classification()
    with pytest.raises(ValueError, match="must be private"):
        PrivateSelectThenFit(DPSIS(k=5, epsilon=1.0),
                             FW(l1_bound=5.0, max_iter=10, epsilon=None),
                             epsilon=None).fit(X, y)
    with pytest.raises(ValueError, match="neighbouring"):
        PrivateSelectThenFit(
            TwoStageSelector(k=5, epsilon=1.0, neighbouring="replace_one"),
            FW(l1_bound=5.0, max_iter=10, epsilon=1.0, delta=1e-6,
               neighbouring="add_remove"), epsilon=None).fit(X, y)


def test_pipeline_pure_total_budget_names_the_delta_a_step_needs():
    """A pure total budget (delta None) gives DP-SGD (a Gaussian mechanism)
    delta=None: refused with the reason and the remedy, not the step's bare
    "delta must be a real number"."""
    from dptoolkit.linear_model import DPSGDClassifier

    X, y = _classification(n=100, d=10)
    pipe = PrivateSelectThenFit(DPSIS(k=3, epsilon=None, y_bounds=(0.0, 1.0)),
                                DPSGDClassifier(epsilon=None, n_epochs=1,
                                                n_samples_public=100),
                                epsilon=1.0, classes=[0, 1])
    with pytest.raises((TypeError, ValueError), match="pure DP.*give the pipeline a delta"):
        pipe.fit(X, y)
    pipe.set_params(delta=1e-5).fit(X, y)       # with a delta it splits


def test_pipeline_budget_accountant():
    FW = _fw_classifier()
    acc_mod = pytest.importorskip("dptoolkit.accounting")
    if not hasattr(acc_mod, "BudgetAccountant"):
        pytest.skip("dptoolkit.accounting.BudgetAccountant not available yet")
    from dptoolkit.exceptions import BudgetExceededError
    X, y = _classification()
    make = lambda: PrivateSelectThenFit(  # noqa: E731
        DPSIS(k=5, epsilon=2.0, y_bounds=(0.0, 1.0), random_state=0),
        FW(l1_bound=5.0, max_iter=100, epsilon=1.0, delta=1e-6, random_state=0),
        accountant=acc, epsilon=None)
    acc = acc_mod.BudgetAccountant(epsilon=3.5, delta=1e-5)
    make().fit(X, y)
    # a second fit needs 3.0 more: refused before any work, nothing spent
    pipe = make()
    with pytest.raises(BudgetExceededError):
        pipe.fit(X, y)
    assert not hasattr(pipe, "estimator_")


# ---------------------------------------------------------------------------
# Privacy events of the selectors and of the pipeline
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [DPSIS, TwoStageSelector])
def test_selector_privacy_event_names_the_mechanism(cls):
    from dptoolkit.accounting import epsilon_of_event
    from dptoolkit.accounting.events import (
        ExponentialMechanismEvent,
        PureDPEvent,
        SelfComposedEvent,
    )

    X, y = _w1(3, n=100, d=20)
    X = np.clip(X, -1, 1); y = np.clip(y / 5, -1, 1)
    kw = {} if cls is DPSIS else {"n_blocks": 5}
    # canonical Lipschitz: exponential noise over subsets, not bounded range
    est = cls(k=4, epsilon=2.0, random_state=0, **kw).fit(X, y)
    assert est.privacy_event_ == PureDPEvent(2.0)
    assert est.privacy_spent_ == (2.0, 0.0)
    # peeling: k rounds of the exponential mechanism with epsilon / k
    est = cls(k=4, epsilon=2.0, mechanism="peeling", random_state=0, **kw).fit(X, y)
    assert est.privacy_event_ == SelfComposedEvent(ExponentialMechanismEvent(0.5), 4)
    assert est.privacy_spent_ == (2.0, 0.0)
    assert epsilon_of_event(est.privacy_event_, 0.0) == pytest.approx(2.0, rel=1e-15)


def test_pipeline_accountant_pays_less_than_the_sum():
    # The accountant is checked once with the composed event's figure (Renyi DP):
    # it accepts a pipeline whose steps' epsilons sum above its budget.
    FW = _fw_classifier()
    from dptoolkit.accounting import BudgetAccountant, epsilon_of_event
    from dptoolkit.exceptions import BudgetExceededError

    X, y = _classification(n=200, d=30)

    def make(acc):
        return PrivateSelectThenFit(
            DPSIS(k=5, epsilon=0.5, y_bounds=(0.0, 1.0), mechanism="peeling", random_state=0),
            FW(l1_bound=5.0, max_iter=200, epsilon=1.0, delta=1e-6, random_state=0),
            accountant=acc, epsilon=None)

    too_small = BudgetAccountant(epsilon=1.0, delta=1e-5)
    with pytest.raises(BudgetExceededError):
        make(too_small).fit(X, y)
    assert too_small.spends == [] and too_small.events == []
    events = BudgetAccountant(epsilon=1.4, delta=1e-5, composition="events")
    pipe = make(events).fit(X, y)
    assert pipe.privacy_spent_[0] < 1.4 < 0.5 + 1.0
    assert len(events.spends) == 1 and events.events == [pipe.privacy_event_]
    assert events.spent[0] == pytest.approx(epsilon_of_event(pipe.privacy_event_, 1e-5),
                                            rel=1e-15)
    assert events.spent[0] < 1.4


def test_pipeline_refuses_before_the_selector_reads_the_data(monkeypatch):
    FW = _fw_classifier()
    from dptoolkit.accounting import BudgetAccountant
    from dptoolkit.exceptions import BudgetExceededError

    calls = []
    original = DPSIS._scores
    monkeypatch.setattr(DPSIS, "_scores",
                        lambda self, *a: calls.append(1) or original(self, *a))
    X, y = _classification(n=100, d=20)
    acc = BudgetAccountant(epsilon=1.0)
    pipe = PrivateSelectThenFit(DPSIS(k=5, epsilon=0.5, y_bounds=(0.0, 1.0)),
                                FW(max_iter=20, epsilon=1.0, delta=1e-6), accountant=acc,
                                    epsilon=None)
    with pytest.raises(BudgetExceededError):
        pipe.fit(X, y)
    assert calls == [] and acc.spends == []
    with pytest.raises(TypeError, match="accountant"):
        PrivateSelectThenFit(DPSIS(k=5, epsilon=None), FW(max_iter=20, epsilon=1.0),
                             accountant="acc", epsilon=None).fit(X, y)


def test_metrics_refuse_indices_outside_the_scores():
    from dptoolkit.selection._metrics import order_statistics_hit, top_great_good

    scores = np.arange(10.0)
    for bad in ([-1, 3], [2, 10]):
        with pytest.raises(ValueError, match="outside"):
            top_great_good(np.array(bad), scores)
        with pytest.raises(ValueError, match="outside"):
            order_statistics_hit(np.array(bad), scores, 1, 2)
    assert top_great_good(np.array([9, 8]), scores)["top"]


# ---------------------------------------------------------------------------
# k="auto": the number of features the private selection can still find
# ---------------------------------------------------------------------------

def test_auto_k_is_the_largest_k_passing_the_level_condition():
    """Closed form: log C(D, k) <= gamma eps rho N / (2 Delta) holds at k, fails at k + 1."""
    from dptoolkit.selection import auto_k
    from dptoolkit.selection._sis import INFORMATIVE_SCORE
    for d, n, eps, sens, gamma in [(2**20, 5325, 0.5, 1.0, 0.5), (2**20, 25000, 1.0, 2.0, 0.5),
                                   (5000, 3000, 2.0, 1.0, 0.8), (2**16, 8000, 0.25, 1.0, 0.3)]:
        k = auto_k(d, n, eps, sensitivity=sens, gamma=gamma)
        level = gamma * eps * INFORMATIVE_SCORE * n / (2.0 * sens)

        def log_c(j):
            return special.gammaln(d + 1) - special.gammaln(j + 1) - special.gammaln(d - j + 1)
        assert 1 <= k < d
        assert log_c(k) <= level or k == 1
        assert log_c(k + 1) > level
    # peeling: eps rho N / (2 k Delta) >= log D
    k = auto_k(2**20, 25000, 1.0, mechanism="peeling")
    assert k == math.floor(1.0 * INFORMATIVE_SCORE * 25000 / 2.0 / math.log(2**20))


def test_auto_k_grows_with_n_and_epsilon_and_saturates_at_d_minus_one():
    from dptoolkit.selection import auto_k
    ks_n = [auto_k(2**20, n, 1.0) for n in (500, 2000, 8000, 32000, 128000)]
    ks_e = [auto_k(2**20, 8000, e) for e in (0.1, 0.5, 1.0, 4.0, 16.0)]
    assert ks_n == sorted(ks_n) and ks_n[0] == 1 and ks_n[-1] > 100
    assert ks_e == sorted(ks_e) and ks_e[0] == 1
    # few features, many rows: every k passes, all but one feature are kept
    assert auto_k(123, 32561, 0.5) == 122
    # never beyond D / 2 by the symmetry of C(D, k) when the condition fails there
    assert auto_k(1000, 2000, 1.0) < 500


def _planted(n, d, n_signal, rho, seed):
    """Binary features; the first n_signal score about rho * n, the rest about 0."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(float)
    X = (rng.random((n, d)) < 0.05).astype(float)
    for j in range(n_signal):   # present in 2 rho more of the positives
        X[:, j] = np.where(y == 1, rng.random(n) < 0.05 + 2 * rho, rng.random(n) < 0.05)
    return X, y


def test_dpsis_auto_k_finds_planted_features():
    """Planted: k_auto features scoring about 0.3 N (above the 0.1 N the auto k
    assumes), N = 4000, D = 3000, eps = 1: the selection keeps mostly planted ones.

    Seeds 0-4; false-failure rate below 1e-6: the top-k set's utility exceeds that
    of the class keeping no planted feature by gamma eps (0.3 N) / 2 - log C(D, k)
    > 300 - 110 (Swope et al. 2024, Theorem 4.1), and the classes keeping fewer than
    80% of them are at least e^-100 less likely, by the same count.
    """
    from dptoolkit.selection import DPSIS, auto_k
    n, d = 4000, 3000
    k_auto = auto_k(d, n, 1.0)
    assert 5 <= k_auto <= 40
    for seed in range(5):
        X, y = _planted(n, d, k_auto, 0.3, seed)
        sel = DPSIS(epsilon=1.0, y_bounds=(0, 1), n_samples_public=n,
                    random_state=seed).fit(X, y)
        assert sel.k_ == k_auto
        assert np.mean(sel.selected_features_ < k_auto) >= 0.8


def test_dpsis_auto_k_reads_n_only_from_n_samples_public():
    """The selected count is a function of public quantities: the same k for 300 or
    3000 rows with the same n_samples_public; without it, a PrivacyLeakWarning."""
    from dptoolkit.exceptions import PrivacyLeakWarning
    from dptoolkit.selection import DPSIS, auto_k
    X, y = _planted(3000, 500, 3, 0.3, 0)
    ks = {DPSIS(epsilon=2.0, y_bounds=(0, 1), n_samples_public=2000,
                random_state=0).fit(X[:m], y[:m]).k_ for m in (300, 3000)}
    assert ks == {auto_k(500, 2000, 2.0)}
    with pytest.warns(PrivacyLeakWarning, match="n_samples_public"):
        DPSIS(epsilon=2.0, y_bounds=(0, 1), random_state=0).fit(X, y)
    # non-private (explicit, so silent): Fan and Lv's n / log n, capped at D - 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        assert DPSIS(epsilon=None).fit(X[:600], y[:600]).k_ == int(600 / math.log(600))
        assert DPSIS(epsilon=None).fit(X[:, :50], y).k_ == 49


def test_select_then_fit_plans_the_auto_k():
    """PrivateSelectThenFit plans the estimator on the selector's auto k columns."""
    from dptoolkit.linear_model import FrankWolfeLassoClassifier
    from dptoolkit.selection import DPSIS, PrivateSelectThenFit, auto_k
    X, y = _planted(2000, 400, 4, 0.3, 1)
    pipe = PrivateSelectThenFit(
        DPSIS(epsilon=1.0, y_bounds=(0, 1), n_samples_public=2000, random_state=0),
        FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, n_samples_public=2000,
                                  classes=[0, 1], random_state=0), epsilon=None).fit(X, y)
    assert pipe.support_.sum() == auto_k(400, 2000, 1.0)
    assert pipe.score(X, y) > 0.6


# ------------------------------------------------------- DPSIS, Gaussian selector
def _gaussian_reference(X, y, data_norm, lo=-1.0, hi=1.0, c=0.0, ylo=-1.0, yhi=1.0, yc=0.0):
    """The Gaussian selector's exact scores, dense: map, scale rows to data_norm, X^T y."""
    M = (np.clip(X, lo, hi) - c) / np.maximum(hi - c, c - lo)
    norms = np.linalg.norm(M, axis=1)
    M = np.where(norms[:, None] > 0, data_norm * M / np.where(norms > 0, norms, 1)[:, None], 0)
    yt = (np.clip(y, ylo, yhi) - yc) / max(yhi - yc, yc - ylo)
    return M.T @ yt


@pytest.mark.parametrize("fmt", [np.asarray, sp.csr_array, sp.csc_array, sp.coo_array])
def test_dpsis_gaussian_scores_are_unit_row_correlations(fmt):
    # bounds that exclude 0 for some columns: the implicit zeros of sparse input
    # enter the row norms and the sums like explicit ones; a zero row stays 0
    X, y = _sparse_problem()
    X[3] = 0.0
    d = X.shape[1]
    lo = np.full(d, -1.0); hi = np.full(d, 1.5)
    lo[:5] = 0.25
    c = 0.5 * (lo + hi)
    ref = _gaussian_reference(X, y, 2.5, lo, hi, c, -2.0, 2.0, 0.5)
    with pytest.warns(DataClippedWarning):
        got = dpsis_scores(fmt(X), y, bounds=(lo, hi), center=c, y_bounds=(-2.0, 2.0),
                           y_center=0.5, data_norm=2.5)
    np.testing.assert_allclose(got, ref, atol=1e-10)
    # no stored entry at all (sparse): every row is zero, every score 0
    np.testing.assert_array_equal(dpsis_scores(fmt(np.zeros((5, 4))), np.ones(5),
                                               data_norm=1.0), np.zeros(4))
    X0 = np.clip(X, -1, 1)      # default bounds, centre 0: zero rows contribute 0
    np.testing.assert_allclose(dpsis_scores(fmt(X0), np.clip(y, -1, 1), data_norm=1.0),
                               _gaussian_reference(X0, np.clip(y, -1, 1), 1.0), atol=1e-10)


@pytest.mark.parametrize("neighbouring,factor", [("add_remove", 1.0), ("replace_one", 2.0)])
def test_dpsis_gaussian_l2_sensitivity(neighbouring, factor):
    # Adding/removing one example moves the score VECTOR by at most data_norm in L2
    # norm (a row of norm data_norm times |y| <= 1), replacing one by at most twice
    # that; rows with a target of +-1 attain the bound.
    rng = np.random.default_rng(7)
    data_norm = 0.7
    X = rng.uniform(-1, 1, size=(40, 25)) * (rng.random((40, 25)) < 0.4)
    y = rng.uniform(-1, 1, size=40)
    base = dpsis_scores(X, y, data_norm=data_norm)
    worst = 0.0
    for _ in range(200):
        row = rng.uniform(-1, 1, size=25) * (rng.random(25) < 0.5)
        t = rng.choice([-1.0, 1.0]) * rng.uniform(0.5, 1.0)
        if neighbouring == "add_remove":
            other = dpsis_scores(np.vstack([X, row]), np.append(y, t), data_norm=data_norm)
        else:
            i = rng.integers(40)
            X2, y2 = X.copy(), y.copy()
            X2[i], y2[i] = row, t
            other = dpsis_scores(X2, y2, data_norm=data_norm)
        worst = max(worst, np.linalg.norm(other - base))
    assert worst <= factor * data_norm + 1e-12
    assert worst > 0.75 * factor * data_norm
    est = DPSIS(k=2, epsilon=1.0, delta=1e-5, mechanism="gaussian", data_norm=data_norm,
                neighbouring=neighbouring, random_state=0).fit(X, y)
    assert est.sensitivity_ == factor * data_norm


@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
def test_dpsis_gaussian_event_and_spend_are_the_accountants(neighbouring):
    from dptoolkit._private._plan import plan_spend
    from dptoolkit.accounting import calibrate_parameter, epsilon_of_event
    from dptoolkit.accounting.events import GaussianEvent
    X, y = _sparse_problem()
    est = DPSIS(k=3, epsilon=0.7, delta=1e-6, mechanism="gaussian", random_state=0,
                neighbouring=neighbouring)
    planned = plan_spend(est, X, y)
    est.fit(X, y)
    sigma = calibrate_parameter(lambda s: GaussianEvent(s), target_epsilon=0.7, delta=1e-6,
                                low=1e-3, high=1e6, increasing=False, rtol=1e-9)
    assert est.privacy_event_ == GaussianEvent(sigma)
    assert est.noise_multiplier_ == sigma
    assert est.privacy_spent_ == (epsilon_of_event(GaussianEvent(sigma), 1e-6), 1e-6)
    assert 0.7 * (1 - 1e-6) <= est.privacy_spent_[0] <= 0.7
    assert planned == (est.privacy_event_, est.privacy_spent_)
    # the neighbouring relation scales the noise (sensitivity), not the event
    assert est.mechanism_ == "gaussian"


def test_dpsis_gaussian_is_top_k_of_the_noisy_release():
    # same seed, same draw: the selection is the top k of |scores + N(0, (sigma Delta)^2)|
    X, y = _sparse_problem(seed=5)
    X = np.clip(X, -1, 1); y = np.clip(y / 5, -1, 1)
    est = DPSIS(k=4, epsilon=3.0, delta=1e-5, mechanism="gaussian", data_norm=2.0,
                neighbouring="replace_one", random_state=123).fit(sp.csr_array(X), y)
    noisy = dpsis_scores(X, y, data_norm=2.0) + np.random.default_rng(123).normal(
        0.0, est.noise_multiplier_ * 4.0, X.shape[1])
    np.testing.assert_array_equal(est.selected_features_,
                                  np.sort(np.argsort(-np.abs(noisy), kind="stable")[:4]))
    assert not hasattr(est, "scores_")


def test_dpsis_gaussian_finds_planted_features():
    """Ten planted features (in 60% of the positive rows, no negative one) among
    5,000 sparse binary features (density 1%).  The test first checks, on the exact
    scores of this fixed data set, that the weakest planted score exceeds the
    strongest null score by 14 noise standard deviations; the selection then fails
    only if one of the 5,000 noise draws is beyond 7 standard deviations, which has
    probability below 5000 * 2.6e-12 = 1.3e-8 (union bound, two-sided normal tail at
    7): the false-failure rate of this test under any seed."""
    rng = np.random.default_rng(2024)
    n, d, planted = 4000, 5000, np.arange(0, 5000, 500)
    y = (rng.random(n) < 0.5).astype(float)
    X = (rng.random((n, d)) < 0.01).astype(float)
    X[:, planted] = (rng.random((n, planted.size)) < 0.6) * y[:, None]
    X = sp.csr_array(X)
    est = DPSIS(k=10, epsilon=1.0, delta=1e-5, mechanism="gaussian", y_bounds=(0, 1),
                n_samples_public=n, random_state=0).fit(X, y)
    exact = np.abs(dpsis_scores(X, y, y_bounds=(0, 1), data_norm=1.0))
    null = np.delete(exact, planted)
    std = est.noise_multiplier_ * est.sensitivity_
    assert exact[planted].min() - null.max() > 14 * std
    np.testing.assert_array_equal(est.selected_features_, planted)


def test_dpsis_gaussian_bad_values_name_the_parameter():
    X, y = _sparse_problem()
    for delta in (None, 0.0):
        with pytest.raises(ValueError, match="delta"):
            DPSIS(k=3, epsilon=1.0, delta=delta, mechanism="gaussian").fit(X, y)
    for delta in (-1e-5, 1.0, np.nan):
        with pytest.raises(ValueError, match="delta"):
            DPSIS(k=3, epsilon=1.0, delta=delta, mechanism="gaussian").fit(X, y)
    for bound in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="data_norm"):
            DPSIS(k=3, epsilon=1.0, delta=1e-5, mechanism="gaussian", data_norm=bound).fit(X, y)
        with pytest.raises(ValueError, match="data_norm"):
            dpsis_scores(X, y, data_norm=bound)
    with pytest.raises(ValueError, match="bounds='data'"):
        DPSIS(k=3, epsilon=1.0, delta=1e-5, mechanism="gaussian", bounds="data").fit(X, y)
    with pytest.raises(ValueError, match="delta"):      # delta without a private fit
        DPSIS(k=3, delta=1e-5, mechanism="gaussian", epsilon=None).fit(X, y)


def test_dpsis_auto_selector_is_gaussian_only_with_delta_on_wide_data():
    from dptoolkit.accounting.events import GaussianEvent, PureDPEvent
    X, y = _sparse_problem(n=60, d=30)                 # D < N
    wide = np.hstack([X, X, X])                         # D = 90 > N = 60
    kw = dict(k=3, epsilon=1.0, n_samples_public=60, random_state=0)
    assert DPSIS(**kw).fit(wide, y).mechanism_ == "canonical_lipschitz"   # delta None
    assert DPSIS(delta=0.0, **kw).fit(wide, y).mechanism_ == "canonical_lipschitz"
    narrow = DPSIS(delta=1e-5, **kw).fit(X, y)
    assert narrow.mechanism_ == "canonical_lipschitz"
    assert narrow.privacy_event_ == PureDPEvent(1.0) and narrow.privacy_spent_ == (1.0, 0.0)
    est = DPSIS(delta=1e-5, **kw).fit(wide, y)
    assert est.mechanism_ == "gaussian" and isinstance(est.privacy_event_, GaussianEvent)
    # the choice uses the public N, not the data's row count
    assert DPSIS(delta=1e-5, **{**kw, "n_samples_public": 100}).fit(
        wide, y).mechanism_ == "canonical_lipschitz"
    with pytest.warns(PrivacyLeakWarning, match="mechanism='auto'"):
        DPSIS(k=3, epsilon=1.0, delta=1e-5, random_state=0).fit(wide, y)


def test_gaussian_auto_k_is_the_noise_bound():
    from dptoolkit.selection import gaussian_auto_k
    # k = min(floor((N / (c sigma sqrt(2 ln 2D)))^2), floor(N / ln N)), within
    # [100, 50000] and below D
    D, sigma = 2**20, 8.0
    t = sigma * np.sqrt(2 * np.log(2 * D))
    for n in (2500, 3000):      # the noise bound binds (sigma 5 times larger)
        k_noise = int(np.floor((n / (5 * t)) ** 2))
        assert 100 < k_noise < n / np.log(n)
        assert gaussian_auto_k(D, n, 5 * sigma) == k_noise
    assert gaussian_auto_k(D, 3000, 5 * sigma, sensitivity_factor=2.0) == 100
    for n in (5325, 25_000, 10**6):   # the non-private SIS count binds
        assert gaussian_auto_k(D, n, sigma) == min(int(np.floor(n / np.log(n))), 50_000)
    assert gaussian_auto_k(D, 100, sigma) == 100
    assert gaussian_auto_k(D, 10**7, sigma) == 50_000
    assert gaussian_auto_k(50, 10**7, sigma) == 49
    assert gaussian_auto_k(500, 10, sigma) == 100
    ks = [gaussian_auto_k(D, n, sigma) for n in (1000, 4000, 8000, 16000, 64000)]
    assert ks == sorted(ks)
    # DPSIS's k="auto" with the Gaussian selector is this, from public quantities
    X, y = _sparse_problem(n=60, d=400)
    est = DPSIS(epsilon=1.0, delta=1e-5, mechanism="gaussian", n_samples_public=20_000,
                random_state=0)
    assert est.n_selected(60, 400) == est.fit(X, y).k_ == gaussian_auto_k(
        400, 20_000, est.noise_multiplier_)


def test_pipeline_with_the_gaussian_selector_plans_what_it_spends():
    from dptoolkit._private._plan import plan_spend
    from dptoolkit.linear_model import FrankWolfeLassoClassifier
    from dptoolkit.accounting.events import ComposedEvent, GaussianEvent
    X, y = _sparse_problem(n=80, d=200)
    y = (y > 0).astype(int)
    pipe = PrivateSelectThenFit(
        DPSIS(k=5, epsilon=0.5, delta=5e-6, mechanism="gaussian", y_bounds=(0, 1),
              random_state=0),
        FrankWolfeLassoClassifier(epsilon=0.5, delta=5e-6, n_samples_public=80,
                                  max_iter=5, classes=[0, 1], random_state=0),
        classes=[0, 1], epsilon=None)
    planned = plan_spend(pipe, X, y)
    pipe.fit(X, y)
    assert planned == (pipe.privacy_event_, pipe.privacy_spent_)
    assert isinstance(pipe.privacy_event_, ComposedEvent)
    assert isinstance(pipe.selector_.privacy_event_, GaussianEvent)
    assert pipe.support_.sum() == 5 and pipe.predict(X).shape == (80,)
