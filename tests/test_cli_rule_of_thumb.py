"""The command line's rule of thumb: N x epsilon against what the default model needs.

The note is printed before a private fit of the default model when the public
training size ``--n-samples-public`` is below
:meth:`DPNBLogisticClassifier.n_samples_needed`, a function of public quantities
only (epsilon, delta, the number of classes, the release's share).  Small data: the
first rows of a1a (123 features) written to LIBSVM files here.
"""
import bz2
import math

import numpy as np
import pytest

from dptoolkit import datasets
from dptoolkit.accounting import calibrate_parameter
from dptoolkit.accounting.events import GaussianEvent
from dptoolkit.linear_model import DPNBLogisticClassifier
from test_cli import _run   # main(argv) -> (status, stdout, stderr)

A1A = datasets.get_data_path("a1a.bz2")
A1A_T = datasets.get_data_path("a1a.t.bz2")
need_a1a = pytest.mark.skipif(not (A1A.exists() and A1A_T.exists()),
                              reason="a1a not available")
NOTE = "note: N x epsilon"


def _write(path, rows):
    path.write_text("".join(rows))
    return path


def _a1a_rows(n, path=A1A):
    with bz2.open(path, "rt") as f:
        return [next(f) for _ in range(n)]


def _train(data, test, n_public, epsilon, capsys, model="default", classes=None):
    argv = ["train", "--model", model, "--data", data, "--test", test, "--n-features",
            123, "--epsilon", epsilon, "--seed", 0]
    if n_public is not None:
        argv += ["--n-samples-public", n_public]
    if classes is not None:
        argv += ["--classes", *classes]
    status, out, err = _run(argv, capsys)
    assert status == 0, err
    return [line for line in err.splitlines() if line.startswith(NOTE)]


def test_n_samples_needed_is_the_documented_formula():
    """sqrt(2) K sigma_1 / gamma, sigma_1 the release noise the fit uses."""
    from dptoolkit.linear_model._glm._nb_logistic import TYPICAL_TEXT_MARGIN

    for epsilon, k, share in ((0.5, 2, 0.75), (1.0, 2, 0.75), (4.0, 20, 0.5)):
        sigma = calibrate_parameter(lambda s: GaussianEvent(s), target_epsilon=epsilon,
                                    delta=1e-5, low=1e-3, high=1e6, increasing=False,
                                    composition="rdp", rtol=1e-9)
        want = math.sqrt(2) * k * sigma / math.sqrt(share) / TYPICAL_TEXT_MARGIN
        got = DPNBLogisticClassifier(epsilon=epsilon).n_samples_needed(k)
        assert got == pytest.approx(want, rel=1e-6)
    # the sigma_1 of a fit at the same budget is the one the rule uses
    rng = np.random.default_rng(0)
    X = (rng.random((200, 30)) < 0.2).astype(float)
    y = np.arange(200) % 2
    clf = DPNBLogisticClassifier(epsilon=1.0, n_samples_public=200, classes=[0, 1],
                                 random_state=0).fit(X, y)
    assert DPNBLogisticClassifier(epsilon=1.0).n_samples_needed(2) == pytest.approx(
        math.sqrt(2) * 2 * clf.noise_multipliers_[0] / TYPICAL_TEXT_MARGIN)


def test_n_samples_needed_shrinks_with_epsilon_and_grows_with_classes():
    need = [DPNBLogisticClassifier(epsilon=e).n_samples_needed(2) for e in (0.25, 1, 4)]
    assert need[0] > need[1] > need[2]
    # N x epsilon is about constant (sigma_1 ~ c(delta) / epsilon)
    products = [n * e for n, e in zip(need, (0.25, 1, 4))]
    assert max(products) / min(products) < 1.6
    assert (DPNBLogisticClassifier(epsilon=1).n_samples_needed(20)
            > 10 * DPNBLogisticClassifier(epsilon=1).n_samples_needed(2))


@pytest.mark.parametrize("bad", [1, 0, -3, 2.5])
def test_n_samples_needed_refuses_bad_input(bad):
    with pytest.raises((ValueError, TypeError), match="n_classes"):
        DPNBLogisticClassifier(epsilon=1).n_samples_needed(bad)
    with pytest.raises(ValueError, match="epsilon"):
        DPNBLogisticClassifier(epsilon=None).n_samples_needed(2)


@need_a1a
def test_note_below_the_threshold_and_not_above(tmp_path, capsys):
    """a1a's 1,605 rows: below what epsilon 0.25 needs, above what epsilon 8 needs."""
    data = _write(tmp_path / "d.libsvm", _a1a_rows(1605))
    test = _write(tmp_path / "t.libsvm", _a1a_rows(400, A1A_T))
    low = DPNBLogisticClassifier(epsilon=0.25).n_samples_needed(2)
    high = DPNBLogisticClassifier(epsilon=8).n_samples_needed(2)
    assert high < 1605 < low      # the premise of the test
    notes = _train(data, test, 1605, 0.25, capsys)
    assert len(notes) == 1 and f"N = {low:,.0f} at epsilon 0.25" in notes[0]
    assert "2 classes" in notes[0] and "--epsilon" in notes[0]
    assert _train(data, test, 1605, 8, capsys) == []
    # at the threshold itself: no note just above it, a note just below it
    threshold = math.ceil(DPNBLogisticClassifier(epsilon=1).n_samples_needed(2))
    assert _train(data, test, threshold, 1, capsys) == []
    assert len(_train(data, test, threshold - 1, 1, capsys)) == 1
    # other models have no rule of thumb; nor has a non-private fit
    assert _train(data, test, 1605, 0.25, capsys, model="dp-sgd") == []


@need_a1a
def test_note_uses_public_quantities_only(tmp_path, capsys):
    """The same public quantities (declared N, epsilon, delta, classes) give the same
    note whatever the data: 300 rows of a1a, 1,200 other rows with the labels
    flipped; without --n-samples-public there is no public N and no note."""
    rows = _a1a_rows(1500)
    flipped = [("+1" if r.startswith("-1") else "-1") + r[2:] for r in rows[300:1500]]
    test = _write(tmp_path / "t.libsvm", _a1a_rows(400, A1A_T))
    notes = [_train(_write(tmp_path / f"{i}.libsvm", part), test, 1605, 0.25, capsys)
             for i, part in enumerate((rows[:300], flipped))]
    assert len(notes[0]) == 1 and notes[0] == notes[1]
    assert "1605 x 0.25" in notes[0][0]
    # the number of classes is public: declared, it sets the threshold
    three = _write(tmp_path / "3.libsvm", [f"{i % 3} 1:1 {2 + i % 7}:1\n"
                                           for i in range(300)])
    test3 = _write(tmp_path / "t3.libsvm", [f"{i % 3} 1:1\n" for i in range(30)])
    note3 = _train(three, test3, 1605, 0.25, capsys, classes=[0, 1, 2])
    k3 = DPNBLogisticClassifier(epsilon=0.25).n_samples_needed(3)
    assert len(note3) == 1 and f"N = {k3:,.0f}" in note3[0] and "3 classes" in note3[0]
    # without --n-samples-public: N comes from the data (the estimator warns), no note
    status, _, err = _run(["train", "--model", "default", "--data",
                           _write(tmp_path / "s.libsvm", rows[:300]), "--test", test,
                           "--n-features", 123, "--epsilon", 0.25], capsys)
    assert status == 0 and "n_samples_public is None" in err and NOTE not in err
