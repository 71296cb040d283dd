"""Tests of the Big-Step Little-Step sampler (dptoolkit.linear_model._frank_wolfe._grouped_sampler).

Statistical tests use fixed seeds, so they are deterministic; the stated
false-failure rate is the probability that a *correct* sampler fails the test
for a random seed (the significance level of the test; the chi-square tests
rely on the usual large-sample approximation with expected counts >= 5).
"""
import math
import pickle

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

from dptoolkit.linear_model._frank_wolfe._grouped_sampler import (REBASE_HI, REBASE_LO,
                                                                  GroupedExpSampler)

ALPHA = 1e-4  # significance level = false-failure rate of each statistical test


# ----------------------------------------------------------------------
# pure-Python references
# ----------------------------------------------------------------------
def reference_draw(log_weights, size, rng):
    """Plain inverse-CDF sampling on exp(logw - max), O(n) per draw."""
    lw = np.asarray(log_weights, dtype=float)
    w = np.exp(lw - lw.max())
    cdf = np.cumsum(w)
    u = rng.random(size) * cdf[-1]
    return np.searchsorted(cdf, u, side="right")


def paper_log_sum_update(c, v_old, v_new):
    """Raff, Khanna and Lu (2023), Algorithm 4, lines 34-35: c + log(1 - e^(v_old - c) + e^(v_new - c))."""
    arg = 1.0 - math.exp(v_old - c) + math.exp(v_new - c)
    return c + math.log(arg) if arg > 0 else (-math.inf if arg == 0 else math.nan)


def exact_probabilities(log_weights):
    lw = np.asarray(log_weights, dtype=float)
    p = np.exp(lw - lw.max())
    return p / p.sum()


def chi2_cells(observed, expected, min_expected=5.0):
    """Pearson statistic and degrees of freedom, cells with expected < 5 merged.

    A draw in a cell of expected count 0 (probability 0) fails immediately.
    """
    observed = np.asarray(observed, dtype=float)
    expected = np.asarray(expected, dtype=float)
    zero = expected == 0
    assert observed[zero].sum() == 0, f"items of probability 0 were drawn: {np.flatnonzero(zero & (observed > 0))}"
    observed, expected = observed[~zero], expected[~zero]
    small = expected < min_expected
    o = list(observed[~small])
    e = list(expected[~small])
    if small.any():
        po, pe = observed[small].sum(), expected[small].sum()
        if pe < min_expected and e:
            k = int(np.argmin(e))
            o[k] += po
            e[k] += pe
        else:
            o.append(po)
            e.append(pe)
    o, e = np.array(o), np.array(e)
    return float(((o - e) ** 2 / e).sum()), len(e) - 1


def group_lse(log_weights, group_size):
    lw = np.asarray(log_weights, dtype=float)
    return np.array([logsumexp(lw[s:s + group_size]) for s in range(0, lw.size, group_size)])


# ----------------------------------------------------------------------
# 1. draws follow the exact law, with updates between draws
# ----------------------------------------------------------------------
def test_draws_match_exact_law_with_interleaved_updates():
    """200 segments x 500 draws, updates between segments, pooled chi-square.

    Updates include a dominant item that then shrinks by 300 nats, jumps above
    the rebuild threshold, -inf, and a group emptied and refilled.
    False-failure rate: ALPHA = 1e-4.
    """
    n, n_seg, per_seg = 20, 200, 500
    urng = np.random.default_rng(1)
    srng = np.random.default_rng(2)
    lw = urng.normal(0.0, 1.0, n)
    lw[[4, 11]] = -np.inf
    s = GroupedExpSampler(n)  # group_size 5
    s.set_log_weights(lw)
    total_stat, total_dof = 0.0, 0
    for seg in range(n_seg):
        counts = np.bincount(s.draw(per_seg, random_state=srng), minlength=n)
        stat, dof = chi2_cells(counts, per_seg * exact_probabilities(lw))
        total_stat += stat
        total_dof += dof
        # updates for the next segment
        phase = seg % 10
        items, vals = [], []
        if phase == 0:    # item 3 becomes dominant (but not overwhelming)
            items, vals = [3], [lw[np.isfinite(lw)].max() + 3.0]
        elif phase == 1:  # ... and shrinks by 300 nats: cancellation
            items, vals = [3], [lw[3] - 300.0]
        elif phase == 2:  # huge jump above the rebuild threshold
            items, vals = [7], [lw[np.isfinite(lw)].max() + REBASE_HI + 5.0]
        elif phase == 3:  # ... and back down: underflow guard
            items, vals = [7], [urng.normal()]
        elif phase == 4:  # empty a group ...
            items, vals = list(range(15, 20)), [-np.inf] * 5
        elif phase == 5:  # ... and refill it
            items, vals = list(range(15, 20)), list(urng.normal(0.0, 1.0, 5))
        else:             # random updates, some to -inf, some from -inf
            items = list(urng.integers(0, n, 4))
            vals = list(urng.normal(0.0, 1.5, 4))
            if urng.random() < 0.3:
                vals[0] = -np.inf
        for i, v in zip(items, vals):
            s.update_item(int(i), float(v))
            lw[i] = v
        if not np.isfinite(lw).any():
            s.update_item(0, 0.0)
            lw[0] = 0.0
        np.testing.assert_array_equal(s.log_weights(), lw)
    assert s.n_rebuilds >= 20 and s.n_group_resums > 0
    p_value = stats.chi2.sf(total_stat, total_dof)
    assert p_value > ALPHA, (total_stat, total_dof, p_value)


def test_pit_with_update_before_every_draw():
    """Randomised probability-integral transform, one update batch per draw.

    If every draw follows the law in force at that moment, the values
    F(i - 1) + V p_i (V uniform, independent) are i.i.d. uniform on (0, 1);
    a Kolmogorov-Smirnov test checks it over 20000 draws.
    False-failure rate: ALPHA = 1e-4.
    """
    n, n_draws = 30, 20_000
    urng = np.random.default_rng(3)
    srng = np.random.default_rng(4)
    lw = urng.normal(0.0, 2.0, n)
    s = GroupedExpSampler(n, group_size=4)
    s.set_log_weights(lw)
    pit = np.empty(n_draws)
    for t in range(n_draws):
        k = int(urng.integers(0, n))
        r = urng.random()
        if r < 0.05:
            v = lw.max() + 10.0                     # dominant
        elif r < 0.10:
            v = lw[k] - 400.0                       # collapse by 400 nats
        elif r < 0.12:
            v = -np.inf
        else:
            v = urng.normal(0.0, 2.0)
        s.update_item(k, v)
        lw[k] = v
        p = exact_probabilities(lw)
        i = int(s.draw(1, random_state=srng)[0])
        assert p[i] > 0
        pit[t] = p[:i].sum() + urng.random() * p[i]
    assert stats.kstest(pit, "uniform").pvalue > ALPHA


@pytest.mark.parametrize("n, group_size", [(1000, 31), (1000, None), (50, 1), (50, 50), (51, 7)])
def test_draws_match_exact_law_group_layouts(n, group_size):
    """1e5 draws vs the exact law; wide weight range with -inf and underflow.

    False-failure rate: ALPHA = 1e-4 per layout.
    """
    rng = np.random.default_rng(5)
    lw = rng.normal(0.0, 3.0, n)
    lw[rng.choice(n, n // 10, replace=False)] = -np.inf
    lw[0] = lw[np.isfinite(lw)].max() - 900.0    # underflows: probability ~e^-900
    s = GroupedExpSampler(n, group_size=group_size)
    s.set_log_weights(lw)
    draws = s.draw(100_000, random_state=6)
    counts = np.bincount(draws, minlength=n)
    p = exact_probabilities(lw)
    assert counts[~(p > 1e-300)].sum() == 0
    stat, dof = chi2_cells(counts, draws.size * p)
    assert stats.chi2.sf(stat, dof) > ALPHA


# ----------------------------------------------------------------------
# 2. maintained sums stay exact under 1e6 adversarial updates
# ----------------------------------------------------------------------
def _update_chunk(kind, lw, m, rng, size):
    """One chunk of updates of a given kind (indices, values)."""
    n = lw.size
    finite = lw[np.isfinite(lw)]
    top = finite.max() if finite.size else 0.0
    mid = np.median(finite) if finite.size else 0.0
    if kind == "random":
        return rng.integers(0, n, size), rng.normal(mid, 5.0, size)
    if kind == "dominant":
        # per group: one item 40 nats above everything, then down by 450 nats
        g = rng.integers(0, (n + m - 1) // m, size // 2)
        k = np.minimum(g * m + rng.integers(0, m, g.size), n - 1)
        idx = np.column_stack([k, k]).ravel()
        vals = np.column_stack([np.full(k.size, top + 40.0),
                                np.full(k.size, top - 410.0)]).ravel()
        return idx, vals
    if kind == "jump":
        # far above the rebuild threshold and back
        k = rng.integers(0, n, size // 2)
        jump = rng.uniform(REBASE_HI + 1.0, 5000.0, k.size)
        idx = np.column_stack([k, k]).ravel()
        vals = np.column_stack([top + jump, rng.normal(mid, 5.0, k.size)]).ravel()
        return idx, vals
    if kind == "neginf":
        k = rng.integers(0, n, size)
        v = np.where(rng.random(size) < 0.5, -np.inf, rng.normal(mid, 5.0, size))
        return k, v
    if kind == "wipe":
        # everything to -inf, then back (through the empty state)
        perm = rng.permutation(n)
        return (np.concatenate([perm, perm]),
                np.concatenate([np.full(n, -np.inf), rng.normal(mid, 5.0, n)]))
    if kind == "spread":
        # values spread over thousands of nats
        return rng.integers(0, n, size), rng.uniform(top - 3000.0, top + 100.0, size)
    raise AssertionError(kind)


def _check_sums(s, lw):
    lse_total = logsumexp(lw)
    got_total = s.log_total_weight()
    assert abs(got_total - lse_total) <= 1e-9, (got_total, lse_total)
    want = group_lse(lw, s.group_size)
    got = s.log_group_weights()
    visible = want >= lse_total - REBASE_LO
    np.testing.assert_allclose(got[visible], want[visible], rtol=0, atol=1e-9)
    # groups >300 nats below the total may have underflowed (probability < e^-250)
    assert np.all(got[~visible] <= lse_total - 250.0)
    assert np.all(np.isneginf(got[np.isneginf(want)]))


def test_maintained_sums_exact_after_1e6_updates():
    """log group sums and log total vs a fresh logsumexp, 1e6 updates, |err| <= 1e-9."""
    n = 500
    rng = np.random.default_rng(7)
    lw = rng.normal(0.0, 5.0, n)
    s = GroupedExpSampler(n)
    m = s.group_size
    s.set_log_weights(lw)
    kinds = ["random", "dominant", "jump", "neginf", "random", "spread", "dominant",
             "random", "wipe"]
    done = 0
    c = 0
    while done < 1_000_000:
        kind = kinds[c % len(kinds)]
        c += 1
        idx, vals = _update_chunk(kind, lw, m, rng, 10_000)
        s.update_items(idx, vals)
        for i, v in zip(idx.tolist(), vals.tolist()):
            lw[i] = v
        done += idx.size
        np.testing.assert_array_equal(s.log_weights(), lw)
        _check_sums(s, lw)
    # the adversarial paths were exercised
    assert s.n_group_resums > 1000
    assert s.n_total_resums > 0
    assert s.n_rebuilds > 1000


def test_group_resum_on_cancellation():
    """A dominant item shrinking by 400 nats forces an exact re-sum of its group."""
    s = GroupedExpSampler(100, group_size=10)
    lw = np.zeros(100)
    lw[13] = 30.0
    s.set_log_weights(lw)
    before = s.n_group_resums
    s.update_item(13, -370.0)
    lw[13] = -370.0
    assert s.n_group_resums == before + 1
    _check_sums(s, lw)


def test_rebuild_triggers_and_empty_state():
    s = GroupedExpSampler(10, group_size=3)
    lw = np.zeros(10)
    s.set_log_weights(lw)
    assert s.n_rebuilds == 0
    s.update_item(2, REBASE_HI + 1.0)            # overflow guard
    assert s.n_rebuilds == 1
    s.update_item(2, 0.0)                        # max back near the old level: underflow guard
    assert s.n_rebuilds == 2
    lw[2] = 0.0
    _check_sums(s, lw)
    # all -inf and back is O(1): no rebuild
    s.update_items(np.arange(10), np.full(10, -np.inf))
    assert s.n_finite == 0 and s.log_total_weight() == -np.inf
    with pytest.raises(ValueError, match="all log-weights are -inf"):
        s.draw(1, random_state=0)
    s.update_item(5, 1234.5)
    assert s.n_rebuilds == 2 and s.n_finite == 1
    assert s.log_total_weight() == pytest.approx(1234.5, abs=1e-12)
    np.testing.assert_array_equal(s.draw(50, random_state=0), 5)
    s.update_item(6, 1234.5 - 1e4)               # underflows relative to item 5
    assert set(s.draw(1000, random_state=1)) == {5}


# ----------------------------------------------------------------------
# 3. agreement with the pure-Python reference sampler, edge cases, errors
# ----------------------------------------------------------------------
@pytest.mark.parametrize("group_size", [1, 6, 13, 40])
def test_agrees_with_reference_sampler(group_size):
    """Homogeneity chi-square: 5e4 draws of ours vs 5e4 of the reference.

    False-failure rate: ALPHA = 1e-4 per group size.
    """
    n = 40
    rng = np.random.default_rng(8)
    lw = rng.normal(0.0, 2.0, n)
    lw[[0, 17, 39]] = -np.inf
    s = GroupedExpSampler(n, group_size=group_size)
    s.set_log_weights(lw)
    ours = np.bincount(s.draw(50_000, random_state=9), minlength=n)
    ref = np.bincount(reference_draw(lw, 50_000, np.random.default_rng(10)), minlength=n)
    assert ours[[0, 17, 39]].sum() == 0 and ref[[0, 17, 39]].sum() == 0
    keep = (ours + ref) > 0
    table = np.vstack([ours[keep], ref[keep]])
    assert stats.chi2_contingency(table).pvalue > ALPHA


def test_single_item():
    s = GroupedExpSampler(1)
    assert (s.group_size, s.n_groups) == (1, 1)
    s.set_log_weights([-3.5])
    np.testing.assert_array_equal(s.draw(20, random_state=0), 0)
    assert s.log_total_weight() == pytest.approx(-3.5, abs=1e-13)
    s.update_item(0, 800.0)
    assert s.log_total_weight() == pytest.approx(800.0, abs=1e-12)
    s.update_item(0, -np.inf)
    with pytest.raises(ValueError):
        s.draw(1, random_state=0)


@pytest.mark.parametrize("n, group_size, n_groups", [(10, None, 3), (16, None, 4), (17, None, 4),
                                                     (10, 1, 10), (10, 10, 1), (10, 3, 4)])
def test_group_layout(n, group_size, n_groups):
    s = GroupedExpSampler(n, group_size=group_size)
    assert s.n_groups == n_groups
    lw = np.arange(n, dtype=float)
    s.set_log_weights(lw)
    np.testing.assert_allclose(s.log_group_weights(), group_lse(lw, s.group_size), atol=1e-12)
    np.testing.assert_allclose(s.probabilities(), exact_probabilities(lw), rtol=1e-14)


def test_same_seed_same_draws_and_pickle():
    rng = np.random.default_rng(11)
    lw = rng.normal(size=300)
    s = GroupedExpSampler(300, group_size=17)
    s.set_log_weights(lw)
    a = s.draw(500, random_state=123)
    np.testing.assert_array_equal(a, s.draw(500, random_state=123))
    t = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(a, t.draw(500, random_state=123))
    assert (t.group_size, t.rel_tol) == (17, s.rel_tol)
    assert s.draw(0, random_state=0).shape == (0,)
    assert s.draw(3, random_state=0).dtype == np.int64


def test_pickle_keeps_the_whole_state():
    """A copy carries the maintained sums and reference as they are (not a rebuild
    from the log-weights, which would move them), so it draws and updates as the
    original, bit for bit: a worker continuing a sampler shipped to it."""
    rng = np.random.default_rng(5)
    s = GroupedExpSampler(1000, group_size=40)
    s.set_log_weights(rng.normal(size=1000))
    for _ in range(50):
        s.update_items_batched(np.sort(rng.choice(1000, 60, replace=False)),
                               rng.normal(size=60) * 5)
    t = pickle.loads(pickle.dumps(s))
    np.testing.assert_array_equal(t.log_group_weights(), s.log_group_weights())
    assert t.log_total_weight() == s.log_total_weight()
    assert (t.n_group_resums, t.n_rebuilds) == (s.n_group_resums, s.n_rebuilds)
    items, values = np.arange(0, 1000, 3), rng.normal(size=334)
    for x in (s, t):
        x.update_items_batched(items, values)
    np.testing.assert_array_equal(t.draw(300, random_state=1), s.draw(300, random_state=1))
    np.testing.assert_array_equal(t.log_group_weights(), s.log_group_weights())


def test_draw_from_uniforms_is_draw_with_those_uniforms():
    """``draw_from_uniforms`` fed ``Generator.random(n)`` draws what ``draw`` draws
    from that generator, consuming its doubles in order; a buffer that runs out
    mid-draw gives -1 and consumes nothing."""
    rng = np.random.default_rng(2)
    s = GroupedExpSampler(700, group_size=30)
    s.set_log_weights(rng.normal(size=700) * 4)
    want = s.draw(200, random_state=7)
    u = np.random.default_rng(7).random(450)
    pos, got = 0, []
    for _ in range(200):
        j, pos = s.draw_from_uniforms(u, pos)
        got.append(j)
    np.testing.assert_array_equal(got, want)
    assert pos == 400                     # two a draw (no rejection here)
    assert s.draw_from_uniforms(u, 449) == (-1, 449)
    assert s.draw_from_uniforms(u[:0], 0) == (-1, 0)
    with pytest.raises(ValueError, match="pos"):
        s.draw_from_uniforms(u, 451)
    with pytest.raises(ValueError, match="-inf"):
        GroupedExpSampler(3).draw_from_uniforms(u, 0)


def test_floating_point_bounds():
    s = GroupedExpSampler(2 ** 20)
    gamma, delta = s.floating_point_bounds()
    assert 2e-10 < gamma < 2.1e-10
    assert 0 < delta < 2e-12
    gamma2, _ = GroupedExpSampler(2 ** 20, rel_tol=1e-12).floating_point_bounds()
    assert gamma2 < gamma / 50


@pytest.mark.parametrize("n, group_size, rel_tol", [(2 ** 20, None, 1e-10), (1000, 7, 1e-12),
                                                     (1, None, 1e-2), (777, 777, 1e-13)])
def test_floating_point_bounds_from_sizes(n, group_size, rel_tol):
    """The module function gives the sampler's bounds without building one, and
    validates the sizes as the constructor does."""
    from dptoolkit.linear_model._frank_wolfe._grouped_sampler import floating_point_bounds
    s = GroupedExpSampler(n, group_size, rel_tol)
    assert floating_point_bounds(n, group_size, rel_tol) == s.floating_point_bounds()
    with pytest.raises(ValueError, match="group_size"):
        floating_point_bounds(n, n + 1)
    with pytest.raises(ValueError, match="rel_tol"):
        floating_point_bounds(n, group_size, 1.0)


def test_invalid_arguments():
    with pytest.raises(ValueError, match="n_items"):
        GroupedExpSampler(0)
    with pytest.raises(TypeError, match="n_items"):
        GroupedExpSampler(2.5)
    with pytest.raises(ValueError, match="group_size"):
        GroupedExpSampler(10, group_size=0)
    with pytest.raises(ValueError, match="group_size"):
        GroupedExpSampler(10, group_size=11)
    for bad in (0.0, 1e-20, 0.5, float("nan")):
        with pytest.raises(ValueError, match="rel_tol"):
            GroupedExpSampler(10, rel_tol=bad)
    s = GroupedExpSampler(4)
    with pytest.raises(ValueError, match="all -inf"):
        s.set_log_weights(np.full(4, -np.inf))
    with pytest.raises(ValueError, match="all log-weights are -inf"):
        s.draw(1, random_state=0)                 # never set
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        s.set_log_weights(np.zeros(5))
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        s.set_log_weights(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        s.set_log_weights([0.0, np.nan, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"\+inf"):
        s.set_log_weights([0.0, np.inf, 0.0, 0.0])
    with pytest.raises(TypeError, match="numeric"):
        s.set_log_weights(["a", "b", "c", "d"])
    s.set_log_weights(np.zeros(4))
    with pytest.raises(ValueError, match="item"):
        s.update_item(4, 0.0)
    with pytest.raises(ValueError, match="item"):
        s.update_item(-1, 0.0)
    with pytest.raises(TypeError, match="item"):
        s.update_item(1.0, 0.0)
    with pytest.raises(ValueError, match="log_weight"):
        s.update_item(0, np.nan)
    with pytest.raises(ValueError, match="log_weight"):
        s.update_item(0, np.inf)
    with pytest.raises(ValueError, match="same length"):
        s.update_items([0, 1], [0.0])
    with pytest.raises(TypeError, match="integer"):
        s.update_items([0.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match="items must be in"):
        s.update_items([0, 4], [0.0, 0.0])
    with pytest.raises(ValueError, match="NaN"):
        s.update_items([0, 1], [0.0, np.nan])
    with pytest.raises(ValueError, match="size"):
        s.draw(-1, random_state=0)
    with pytest.raises(TypeError, match="random_state"):
        s.draw(1, random_state="seed")
    # failed calls left the state untouched
    np.testing.assert_array_equal(s.log_weights(), np.zeros(4))
    assert s.log_total_weight() == pytest.approx(math.log(4.0), abs=1e-14)


# ----------------------------------------------------------------------
# 4. the paper's incremental log-sum update drifts; ours does not
# ----------------------------------------------------------------------
def test_paper_update_drifts():
    """Algorithm 4 of Raff et al. (2023): its log-sum update cancels.

    One group of 30 items; repeatedly an item becomes dominant (+25 to +45
    nats) and then shrinks back.  The paper's update of the group log-sum
    c <- c + log(1 - e^(v_old - c) + e^(v_new - c)) loses all accuracy;
    the maintained sums of GroupedExpSampler stay within 1e-9.
    """
    n = 30
    rng = np.random.default_rng(12)
    lw = rng.normal(0.0, 1.0, n)
    s = GroupedExpSampler(n, group_size=n)
    s.set_log_weights(lw)
    c = logsumexp(lw)                        # paper's group log-sum (one group)
    worst_paper, worst_ours = 0.0, 0.0
    for step in range(100):
        k = int(rng.integers(0, n))
        # item k jumps 25-45 nats above the rest, then shrinks back
        for v_new in (lw.max() + rng.uniform(25.0, 45.0), rng.normal(0.0, 1.0)):
            c = paper_log_sum_update(c, lw[k], v_new)
            lw[k] = v_new
            s.update_item(k, v_new)
            exact = logsumexp(lw)
            err_paper = abs(c - exact) if np.isfinite(c) else math.inf
            worst_paper = max(worst_paper, err_paper)
            worst_ours = max(worst_ours, abs(s.log_group_weights()[0] - exact),
                             abs(s.log_total_weight() - exact))
            if not np.isfinite(c):           # the paper's recursion cannot recover
                c = logsumexp(lw)
    assert worst_paper > 1e-6
    assert worst_ours <= 1e-9


def test_paper_update_single_step_example():
    """The smallest failing case: the dominant item of a group drops by 100 nats."""
    lw = np.full(30, -45.0)
    lw[0] = 0.0
    c = logsumexp(lw)                        # = 0.0 in double precision
    c = paper_log_sum_update(c, 0.0, -100.0)
    lw[0] = -100.0
    exact = logsumexp(lw)                    # about -41.6
    assert abs(c - exact) > 50.0             # the paper returns about -100
    s = GroupedExpSampler(30, group_size=30)
    lw0 = lw.copy()
    lw0[0] = 0.0
    s.set_log_weights(lw0)
    s.update_item(0, -100.0)
    assert abs(s.log_group_weights()[0] - exact) <= 1e-12


# ----------------------------------------------------------------------
# 4. batched updates (update_batch, used by the fast Frank-Wolfe step)
# ----------------------------------------------------------------------
@pytest.mark.parametrize("n, group_size", [(1024, None), (1000, None), (777, 16), (300, 7)])
def test_batched_updates_match_per_item(n, group_size):
    """update_items_batched vs update_items on twin samplers, chunk by chunk.

    Exact: the stored log-weights, the number of finite items, the group sums
    (bit for bit while neither sampler re-summed a group: the batch applies the
    per-item operations in the same order) and the draws of a fixed seed (the
    totals agree within the invariant, so a draw could only differ at a prefix-sum
    boundary: probability below 1e-9 over all draws here).  Always: every
    maintained sum within 1e-9 of a fresh logsumexp.  Powers of two use the
    shift for the group index, the other sizes the division.
    """
    rng = np.random.default_rng(11)
    lw = rng.normal(0.0, 3.0, n)
    one, batch = GroupedExpSampler(n, group_size), GroupedExpSampler(n, group_size)
    one.set_log_weights(lw)
    batch.set_log_weights(lw)
    m = one.group_size
    kinds = ["random", "spread", "dominant", "neginf", "random", "jump", "wipe", "random"]
    compared = 0
    for c in range(96):
        kind = kinds[c % len(kinds)]
        idx, vals = _update_chunk(kind, lw, m, rng, int(rng.integers(1, 3 * n)))
        counts = (one.n_group_resums, batch.n_group_resums, one.n_rebuilds, batch.n_rebuilds)
        one.update_items(idx, vals)
        batch.update_items_batched(idx, vals)
        for i, v in zip(idx.tolist(), vals.tolist()):
            lw[i] = v
        np.testing.assert_array_equal(batch.log_weights(), lw)
        np.testing.assert_array_equal(one.log_weights(), lw)
        assert batch.n_finite == one.n_finite == int(np.isfinite(lw).sum())
        if batch.n_finite == 0:
            continue
        _check_sums(batch, lw)
        no_rebuild = counts[2:] == (one.n_rebuilds, batch.n_rebuilds) and kind != "wipe"
        if no_rebuild:
            np.testing.assert_array_equal(batch.draw(200, random_state=c),
                                          one.draw(200, random_state=c))
        if no_rebuild and counts[:2] == (one.n_group_resums, batch.n_group_resums):
            np.testing.assert_array_equal(batch.log_group_weights(), one.log_group_weights())
            compared += 1
        else:  # a rebuild or re-sum at another point of the chunk: start both afresh
            one.set_log_weights(lw)
            batch.set_log_weights(lw)
    # the bitwise comparison ran, and the cancellation and rebuild paths of the
    # batch were exercised
    assert compared >= 6
    assert batch.n_group_resums > 0 and batch.n_rebuilds > 0


@pytest.mark.parametrize("n, group_size", [(1024, None), (777, 16), (300, 7)])
def test_resummed_batch_is_a_rebuild_at_the_same_reference(n, group_size):
    """update_items_resummed (reweight_batch, the Frank-Wolfe refresh's large batches).

    Deterministic checks: the stored log-weights are those of the per-item
    updates; the maintained sums are within 1e-9 of a fresh logsumexp after
    every chunk; and when the chunk leaves the maximum log-weight where it was
    (so a rebuild from scratch picks the same reference), the state equals that
    of ``set_log_weights`` bit for bit: the same log group weights, the same
    total and the same draws for a fixed seed.  The rebuild guards (overflow
    jump, empty state) are exercised.
    """
    rng = np.random.default_rng(21)
    lw = rng.normal(0.0, 3.0, n)
    lw[0] = 40.0                      # the maximum, kept by the "keep-max" chunks
    s = GroupedExpSampler(n, group_size)
    s.set_log_weights(lw)
    m = s.group_size
    kinds = ["keep-max", "random", "keep-max", "jump", "neginf", "keep-max", "wipe",
             "keep-max", "spread", "keep-max"]
    compared = 0
    for c in range(60):
        kind = kinds[c % len(kinds)]
        if kind == "keep-max":
            # the reference is set by the last rebuild: start from one whose
            # maximum is lw[0] = 40, as the fresh sampler below will be
            lw[0] = 40.0
            lw[1:] = np.minimum(lw[1:], 30.0)
            s.set_log_weights(lw)
            size = int(rng.integers(n // 4, 2 * n))
            idx = rng.integers(1, n, size)
            vals = np.where(rng.random(size) < 0.1, -np.inf, rng.normal(0.0, 3.0, size))
        else:
            idx, vals = _update_chunk(kind, lw, m, rng, int(rng.integers(1, 3 * n)))
        s.update_items_resummed(idx, vals)
        for i, v in zip(idx.tolist(), vals.tolist()):
            lw[i] = v
        np.testing.assert_array_equal(s.log_weights(), lw)
        assert s.n_finite == int(np.isfinite(lw).sum())
        if s.n_finite == 0:
            continue
        _check_sums(s, lw)
        if kind == "keep-max":
            fresh = GroupedExpSampler(n, group_size)
            fresh.set_log_weights(lw)
            np.testing.assert_array_equal(s.log_group_weights(), fresh.log_group_weights())
            assert s.log_total_weight() == fresh.log_total_weight()
            np.testing.assert_array_equal(s.draw(300, random_state=c),
                                          fresh.draw(300, random_state=c))
            compared += 1
    assert compared >= 10
    assert s.n_rebuilds > 0           # the overflow guard ended some batches


def test_batched_updates_sums_after_1e6_updates():
    """The 1e6-update invariant test, applied in batches (|err| <= 1e-9)."""
    n = 500
    rng = np.random.default_rng(8)
    lw = rng.normal(0.0, 5.0, n)
    s = GroupedExpSampler(n)
    s.set_log_weights(lw)
    kinds = ["random", "dominant", "jump", "neginf", "random", "spread", "dominant",
             "random", "wipe"]
    done = c = 0
    while done < 1_000_000:
        idx, vals = _update_chunk(kinds[c % len(kinds)], lw, s.group_size, rng, 10_000)
        c += 1
        s.update_items_batched(idx, vals)
        for i, v in zip(idx.tolist(), vals.tolist()):
            lw[i] = v
        done += idx.size
        np.testing.assert_array_equal(s.log_weights(), lw)
        if np.isfinite(lw).any():
            _check_sums(s, lw)
    assert s.n_group_resums > 100 and s.n_total_resums > 0 and s.n_rebuilds > 10


def test_batched_updates_leave_and_enter_empty_state():
    s = GroupedExpSampler(10, group_size=4)
    s.update_items_batched([3, 7], [1.0, 2.0])          # from the empty state
    np.testing.assert_allclose(s.probabilities()[[3, 7]], [1 / (1 + math.e), math.e / (1 + math.e)])
    assert set(s.draw(100, random_state=0)) <= {3, 7}
    s.update_items_batched([3, 7], [-np.inf, -np.inf])  # into the empty state
    assert s.n_finite == 0 and s.log_total_weight() == -np.inf
    s.update_items_batched(np.array([], dtype=np.int64), np.array([]))
    s.update_items_batched([9, 9], [5.0, 6.0])          # repeats: the last one wins
    assert s.log_weights()[9] == 6.0
    np.testing.assert_array_equal(s.draw(20, random_state=1), 9)


def test_batched_updates_invalid_arguments():
    s = GroupedExpSampler(5)
    with pytest.raises(ValueError, match="same length"):
        s.update_items_batched([0, 1], [0.0])
    with pytest.raises(TypeError, match="integer array"):
        s.update_items_batched([0.0, 1.0], [0.0, 0.0])
    with pytest.raises(ValueError, match=r"in \[0, 5\)"):
        s.update_items_batched([0, 5], [0.0, 0.0])
    with pytest.raises(ValueError, match="NaN"):
        s.update_items_batched([0, 1], [0.0, np.nan])
    with pytest.raises(ValueError, match=r"\+inf"):
        s.update_items_batched([0], [np.inf])


# ----------------------------------------------------------------------
# scaled weights (module docstring, *Scaled weights*)
# ----------------------------------------------------------------------
def test_kernel_scaled_weights_within_the_stated_error():
    """The fast solver's scaled weights (``log_weight_scaled_array``): the same
    log-weights as ``log_weight_array`` bit for bit, and each scaled weight within
    ``SCALED_REL_ERR`` of ``exp(logw - offset)`` for the stored ``logw``, checked in
    80-bit extended precision (its own error, 2**-64 relative, is 1/2048 of a
    double's u); -1 (not given) from x = 4 on.  Deterministic."""
    from dptoolkit.linear_model._frank_wolfe import _fw_fast
    from dptoolkit.linear_model._frank_wolfe._grouped_sampler import SCALED_REL_ERR

    if np.finfo(np.longdouble).nmant < 63:
        pytest.skip("needs an 80-bit long double to check a 16 u bound")
    rng = np.random.default_rng(5)
    a = np.concatenate([np.linspace(0.0, 6.0, 20001), rng.uniform(0, 0.012, 20000),
                        [0.00999999999, 0.01, 3.9999999, 4.0], -rng.uniform(0, 5, 5000)])
    logw, scaled = _fw_fast.log_weight_scaled_array(1.0, a)
    np.testing.assert_array_equal(logw, _fw_fast.log_weight_array(1.0, a))
    given = np.abs(a) < 4.0
    assert np.all(scaled[~given] == -1.0)
    assert np.all(scaled[given] >= 1.0)
    exact = np.exp(logw[given].astype(np.longdouble)
                   - np.longdouble(_fw_fast.SCALED_OFFSET))
    rel = np.abs(scaled[given].astype(np.longdouble) / exact - 1)
    assert float(rel.max()) <= SCALED_REL_ERR, float(rel.max()) / 2.0 ** -53
    # the log-weights themselves (series below x = 0.01, table from there to 4,
    # exp/log1p beyond): within 2 u of log(2 cosh x) relative, the scaled
    # weights within 2 u of cosh x (_fw_fast's comments)
    x = np.abs(a).astype(np.longdouble)
    true = np.log(np.longdouble(2.0)) + np.log(np.cosh(x))
    assert float(np.max(np.abs(logw.astype(np.longdouble) / true - 1))) <= 2.0 * 2.0 ** -53
    assert float(np.max(np.abs(scaled[given].astype(np.longdouble) / np.cosh(x[given])
                               - 1))) <= 2.0 * 2.0 ** -53


@pytest.mark.parametrize("n, group_size", [(1024, None), (300, 7)])
def test_scaled_batches_keep_the_law(n, group_size):
    """Batches with scaled weights (``scaled = cosh``, ``offset = log 2`` as the
    fast solver gives them) against twin samplers updated without: the same stored
    log-weights, every maintained sum within 1e-12 (relative) of the twin's and
    within 1e-9 of a fresh logsumexp, the same draws for a fixed seed (they could
    differ only when a uniform falls within a few ulps of a boundary: probability
    below 1e-9 over all draws here), and the draws follow the exact law (Pearson
    chi-square, false-failure rate ALPHA); a refresh-like batch (resummed) too,
    the first of which leaves the empty state with the scaled weights.
    Entries of scaled = -1 take the exp path in the same batch."""
    rng = np.random.default_rng(21)
    coef = 0.05
    alpha = rng.normal(0.0, 1.0, n) * rng.choice([0.01, 1.0, 100.0], n)

    def lw_sc(a):
        x = coef * np.abs(a)
        sc = np.where(x < 4.0, np.cosh(x), -1.0)
        return np.logaddexp(x, -x), sc

    plain, fast = GroupedExpSampler(n, group_size), GroupedExpSampler(n, group_size)
    lw, sc = lw_sc(alpha)
    plain.update_items_resummed(np.arange(n), lw)
    fast.update_items_resummed(np.arange(n), lw, sc, math.log(2.0))
    n_given = 0
    for c in range(40):
        idx = rng.choice(n, int(rng.integers(1, n // 2)), replace=False)
        alpha[idx] += rng.normal(0.0, 20.0, idx.size)
        lw_i, sc_i = lw_sc(alpha[idx])
        n_given += int((sc_i >= 0).sum())
        resum = c % 10 == 9
        (plain.update_items_resummed if resum else plain.update_items_batched)(idx, lw_i)
        (fast.update_items_resummed if resum else fast.update_items_batched)(
            idx, lw_i, sc_i, math.log(2.0))
        lw_all = lw_sc(alpha)[0]
        np.testing.assert_array_equal(fast.log_weights(), lw_all)
        np.testing.assert_allclose(fast.log_group_weights(), plain.log_group_weights(),
                                   rtol=0, atol=1e-12)
        _check_sums(fast, lw_all)
        np.testing.assert_array_equal(fast.draw(50, random_state=c),
                                      plain.draw(50, random_state=c))
    assert n_given > 1000 and fast.n_rebuilds == 0
    p = exact_probabilities(fast.log_weights())
    draws = fast.draw(200_000, random_state=3)
    stat, dof = chi2_cells(np.bincount(draws, minlength=n), p * draws.size)
    assert stats.chi2.sf(stat, dof) > ALPHA


def test_scaled_weights_are_used():
    """The sampler takes a given scaled weight as is (it does not recompute it
    from the log-weight): a scaled weight twice exp(logw - offset) doubles the
    item's weight in its group sum.  Deterministic."""
    s = GroupedExpSampler(8, 4)
    s.set_log_weights(np.zeros(8))
    s.update_items_batched([1], [0.25], [2.0 * math.exp(0.25 - 0.5)], 0.5)
    np.testing.assert_allclose(np.exp(s.log_group_weights()), [3.0 + 2.0 * math.exp(0.25), 4.0],
                               rtol=1e-14)
    s.update_items_batched([1], [1.0], [-1.0], 0.5)    # not given: exp(logw - ref)
    # (the exp path's argument logw - ref, about 150, is rounded: 1e-14 relative)
    np.testing.assert_allclose(np.exp(s.log_group_weights()), [3.0 + math.e, 4.0],
                               rtol=1e-12)
    # a re-weighting batch that leaves the empty state (the fast solver's first
    # refresh) stores the scaled weights too, at the reference a rebuild takes
    e = GroupedExpSampler(8, 4)
    lw = np.linspace(-1.0, 1.0, 8)
    e.update_items_resummed(np.arange(8), lw, 2.0 * np.exp(lw - 0.5), 0.5)
    np.testing.assert_allclose(np.exp(e.log_group_weights()),
                               2.0 * np.exp(lw).reshape(2, 4).sum(axis=1), rtol=1e-12)
    assert e.n_rebuilds == 0


@pytest.mark.parametrize("scaled, offset, match", [
    ([1.0], 0.0, "scaled"),
    ([1.0, np.inf], 0.0, "scaled"),
    ([1.0, np.nan], 0.0, "scaled"),
    ([1.0, 1.0], np.nan, "offset"),
    ([1.0, 1.0], np.inf, "offset"),
])
def test_scaled_weights_invalid_arguments(scaled, offset, match):
    s = GroupedExpSampler(4)
    s.set_log_weights(np.zeros(4))
    with pytest.raises(ValueError, match=match):
        s.update_items_batched([0, 1], [0.0, 0.0], scaled, offset)
