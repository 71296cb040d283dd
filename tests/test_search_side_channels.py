"""What a private hyperparameter search shows besides its release: nothing about K.

Papernot and Steinke's (2022) guarantee for the search releases the best run
only; the number of runs K, the other runs' hyperparameters and what they did
stay hidden.  These tests check every channel a search has besides its
attributes: stderr (progress bars, prints), warnings, errors and the ledger, in
Python and on the command line.
"""
import collections
import math
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dptoolkit._private import DATA_DEPENDENT_NOTE, fixed_noise_warning_scope
from dptoolkit.accounting import BudgetAccountant
from dptoolkit.cli import main
from dptoolkit.linear_model import DPIGHTClassifier, FrankWolfeLassoClassifier
from dptoolkit.model_selection import PrivateHyperparameterSearch


def _problem(n=200, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.csr_array((rng.random((n, d)) < 0.3).astype(float))
    y = (X[:, [0]].toarray().ravel() + 0.5 * rng.random(n) > 0.6).astype(int)
    return X, y


def _force_k(monkeypatch, k):
    """The search draws K = k runs (its law replaced; the rest unchanged)."""
    monkeypatch.setattr(PrivateHyperparameterSearch, "_draw_k", lambda self, p, rng: k)


def _observe(search, X, y, capsys):
    """``(released params, stderr, warnings)`` of one fit of ``search`` (without the
    search's own warning that its seed fixes the noise, which names the seed)."""
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as record, fixed_noise_warning_scope():
        warnings.simplefilter("always")
        search.fit(X, y)
    shown = tuple((w.category.__name__, str(w.message)) for w in record
                  if "fixes the noise" not in str(w.message))
    return tuple(sorted(search.best_params_.items())), capsys.readouterr().err, shown


_CASES = {
    # a tqdm bar per run (each showing that run's max_iter) before the fix
    "frank-wolfe bars": (
        FrankWolfeLassoClassifier(max_iter=8, verbose=1, classes=[0, 1]),
        {"l1_bound": [1.0, 20.0]}),
    # the clipping warning names the run's data_norm (rows above 0.2 are
    # clipped, none above 5.0): the other runs' bounds before the fix
    "dp-ight clipping": (
        DPIGHTClassifier(max_iter=10, sparsity=3),
        {"data_norm": [0.2, 5.0]}),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_stderr_and_warnings_are_the_same_for_k_1_and_k_12(case, monkeypatch, capsys):
    """With the same released run, a search with K = 1 and one with K = 12 show the
    same stderr and the same warnings (deterministic: no false failures)."""
    estimator, grid = _CASES[case]
    X, y = _problem()
    seen = collections.defaultdict(dict)
    for k in (1, 12):
        _force_k(monkeypatch, k)
        for seed in range(3):
            search = PrivateHyperparameterSearch(
                estimator, grid, epsilon=1.0, delta=1e-5, n_samples_public=200,
                classes=[0, 1], random_state=seed)
            released, err, shown = _observe(search, X, y, capsys)
            seen[released].setdefault(k, set()).add((err, shown))
            assert "Frank-Wolfe" not in err and "it/s" not in err
    both = [r for r, by_k in seen.items() if set(by_k) == {1, 12}]
    assert both, seen           # some release reached with either K: a test that can fail
    for released in both:
        observed = seen[released][1] | seen[released][12]
        assert len(observed) == 1, (released, observed)


def test_released_runs_warnings_only_and_marked_outside(monkeypatch, capsys):
    """The released run's warnings are passed on, marked outside the guarantee (the
    data chose that run); the other runs' warnings (which name their bound) are not."""
    X, y = _problem()
    _force_k(monkeypatch, 12)
    for seed in range(6):
        search = PrivateHyperparameterSearch(
            DPIGHTClassifier(max_iter=10, sparsity=3), {"data_norm": [0.2, 5.0]},
            epsilon=1.0, n_samples_public=200, classes=[0, 1], random_state=seed)
        released, err, shown = _observe(search, X, y, capsys)
        bound = dict(released)["data_norm"]
        clipping = [m for _, m in shown if "clipped" in m]
        assert err == ""
        if bound == 5.0:        # no row above 5: the 0.2 runs' warnings are dropped
            assert clipping == []
        else:
            assert len(clipping) == 1 and "0.2" in clipping[0]
            assert clipping[0].count(DATA_DEPENDENT_NOTE) == 1


def test_cli_search_with_verbose_shows_one_line_whatever_k(monkeypatch, capsys):
    """``train --model search --verbose 1``: no per-run bar, one fixed line for the
    search; stderr identical with K = 1 and K = 12."""
    argv = ["train", "--model", "search", "--search-model", "frank-wolfe", "--grid",
            "max_iter=5,12", "--synthetic-samples", 300, "--synthetic-features", 30,
            "--epsilon", 1, "--seed", 0, "--verbose", 1]
    errs = []
    for k in (1, 12):
        _force_k(monkeypatch, k)
        capsys.readouterr()
        assert main([str(a) for a in argv]) == 0
        errs.append(capsys.readouterr().err)
    assert errs[0] == errs[1]
    assert errs[0].count("fitting PrivateHyperparameterSearch") == 1
    assert "Frank-Wolfe" not in errs[0] and "it/s" not in errs[0]
    assert "elapsed" not in errs[0]             # an elapsed time grows with K
    # the search has a delta (1e-5 by default): no note that it is pure epsilon-DP
    assert "pure epsilon-DP" not in errs[0]


def _failing_fit(monkeypatch, *, when, before_noise=False):
    """FrankWolfeLassoClassifier.fit raises, naming the run, when ``when(est)``:
    after its noise ran, or before (``before_noise``)."""
    orig = FrankWolfeLassoClassifier.fit

    def fit(self, X, y):
        if when(self) and before_noise:
            raise ValueError(f"a run with l1_bound={self.l1_bound} failed")
        out = orig(self, X, y)
        if when(self):
            print(f"run l1_bound={self.l1_bound} failing", file=sys.stderr)
            raise ValueError(f"a run with l1_bound={self.l1_bound} failed")
        return out

    monkeypatch.setattr(FrankWolfeLassoClassifier, "fit", fit)


def _fw_search(accountant, grid, **kw):
    return PrivateHyperparameterSearch(
        FrankWolfeLassoClassifier(max_iter=10), grid, epsilon=1.0, delta=1e-5,
        n_samples_public=200, classes=[0, 1], accountant=accountant, **kw)


def test_every_run_failing_is_charged_and_the_error_names_no_run(monkeypatch, capsys):
    """Every run's fit raises after its noise ran: the search's whole event is
    charged, nothing stays on the search, and its error names no run, value or
    count (and chains nothing)."""
    X, y = _problem()
    _force_k(monkeypatch, 5)
    _failing_fit(monkeypatch, when=lambda est: True)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    search = _fw_search(acc, {"l1_bound": [3.0, 7.0]}, random_state=0)
    capsys.readouterr()
    with pytest.raises(ValueError) as info:
        search.fit(X, y)
    text = str(info.value)
    assert DATA_DEPENDENT_NOTE in text and "charged" in text
    assert "3.0" not in text and "7.0" not in text and "5" not in text
    assert info.value.__cause__ is None and info.value.__context__ is None
    assert capsys.readouterr().err == ""
    assert len(acc.spends) == 1
    planned = _fw_search(None, {"l1_bound": [3.0, 7.0]})
    from dptoolkit._private import plan_spend

    assert acc.spends[0][0] == pytest.approx(
        plan_spend(planned, n_samples=200, n_features=20, classes=[0, 1])[1][0])
    assert not any(hasattr(search, a) for a in ("best_estimator_", "best_params_",
                                                "privacy_spent_", "privacy_event_"))


def test_runs_failing_before_their_noise_charge_nothing(monkeypatch):
    X, y = _problem()
    _force_k(monkeypatch, 3)
    _failing_fit(monkeypatch, when=lambda est: True, before_noise=True)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(ValueError, match="no run of the search") as info:
        _fw_search(acc, {"l1_bound": [3.0]}, random_state=0).fit(X, y)
    assert "charged" not in str(info.value) and acc.spends == []


def test_a_failing_run_is_skipped_silently(monkeypatch, capsys):
    """Some runs fail (those with l1_bound=7.0): the search goes on, releases one of
    the others, is charged once, and shows nothing of the failures."""
    X, y = _problem()
    _force_k(monkeypatch, 12)
    _failing_fit(monkeypatch, when=lambda est: est.l1_bound == 7.0)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    search = _fw_search(acc, {"l1_bound": [3.0, 7.0]}, random_state=1)
    released, err, shown = _observe(search, X, y, capsys)
    assert released == (("l1_bound", 3.0),)
    assert err == "" and not any("7.0" in m or "fail" in m for _, m in shown)
    assert len(acc.spends) == 1


def test_an_interrupted_search_is_charged(monkeypatch):
    """A search interrupted after a run's noise ran is charged (and re-raises)."""
    X, y = _problem()
    _force_k(monkeypatch, 4)
    orig = FrankWolfeLassoClassifier.fit
    calls = []

    def fit(self, X, y):
        calls.append(1)
        out = orig(self, X, y)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return out

    monkeypatch.setattr(FrankWolfeLassoClassifier, "fit", fit)
    acc = BudgetAccountant(epsilon=10.0, delta=1e-3)
    with pytest.raises(KeyboardInterrupt):
        _fw_search(acc, {"l1_bound": [3.0]}, random_state=0).fit(X, y)
    assert len(acc.spends) == 1


def test_empirical_k_leak_on_neighbouring_data(monkeypatch, capsys):
    """On D and its neighbour D - {x}, R searches each with their own (random) K:
    given the release, what the search shows (stderr, warnings) must not depend
    on K, and the (release, what it shows) pairs must meet the DP inequality.

    Each run prints a line to stderr (a stand-in for a progress bar) and
    DP-IGHT's runs at data_norm=0.2 warn that rows were clipped (naming
    0.2): before the runs were silenced, stderr grew with K and the 0.2 warning
    came with releases of 5.0.  Independence: for each dataset and released
    value, Fisher's exact test of "what was shown is the most common sight"
    against "K = 1"; 4 tests at level 2.5e-4 each, so a search that hides K
    fails falsely with probability below 1e-3 (it never does here: what it shows
    is then a function of the release).  DP: one-sided Clopper-Pearson bounds at
    level 1e-4 per (outcome, direction) (at most 16 comparisons: false-failure
    rate below 2e-3 for an (epsilon, delta)-DP search).
    """
    rng = np.random.default_rng(7)
    n, d = 24, 6
    X = sp.csr_array((rng.random((n, d)) < 0.5).astype(float))
    y = np.arange(n) % 2
    data = {"D": (X, y), "D'": (X[1:], y[1:])}
    orig = DPIGHTClassifier.fit

    def fit(self, X, y):
        print(f"run with data_norm={self.data_norm}", file=sys.stderr)
        return orig(self, X, y)

    monkeypatch.setattr(DPIGHTClassifier, "fit", fit)
    ks = []
    draw_k = PrivateHyperparameterSearch._draw_k
    monkeypatch.setattr(PrivateHyperparameterSearch, "_draw_k",
                        lambda self, p, rng: ks.append(draw_k(self, p, rng)) or ks[-1])
    est = DPIGHTClassifier(max_iter=5, sparsity=2)
    R, eps = 60, 1.0
    observed = {}
    for name, (XX, yy) in data.items():
        rows = []
        for r in range(R):
            search = PrivateHyperparameterSearch(
                est, {"data_norm": [0.2, 5.0]}, epsilon=eps, delta=1e-5, n_runs=2.0,
                n_samples_public=24, classes=[0, 1], random_state=1000 * len(name) + r)
            released, err, shown = _observe(search, XX, yy, capsys)
            sight = (len(err), sum("clipped" in m for _, m in shown))
            rows.append((released, sight, ks[-1]))
        observed[name] = rows
    assert {k for rows in observed.values() for *_, k in rows} != {1}   # K varied
    for name, rows in observed.items():
        for released in {r for r, _, _ in rows}:
            group = [(s, k) for r, s, k in rows if r == released]
            common = collections.Counter(s for s, _ in group).most_common(1)[0][0]
            table = [[sum(s == common and k == 1 for s, k in group),
                      sum(s != common and k == 1 for s, k in group)],
                     [sum(s == common and k > 1 for s, k in group),
                      sum(s != common and k > 1 for s, k in group)]]
            assert stats.fisher_exact(table)[1] > 2.5e-4, (name, released, table)
    counts = {name: collections.Counter((r, s) for r, s, _ in rows)
              for name, rows in observed.items()}
    alpha = 1e-4
    for a, b in (("D", "D'"), ("D'", "D")):
        for outcome in set(counts[a]) | set(counts[b]):
            ka, kb = counts[a][outcome], counts[b][outcome]
            p_a_low = stats.beta.ppf(alpha, ka, R - ka + 1) if ka > 0 else 0.0
            p_b_high = stats.beta.ppf(1 - alpha, kb + 1, R - kb) if kb < R else 1.0
            assert p_a_low <= math.exp(eps) * p_b_high + 1e-5, (a, b, outcome, counts)
