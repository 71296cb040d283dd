"""The timing side channel of private Frank-Wolfe: fit time on D and on D plus one
dense row within the public bound (||x_i||_inf <= 1).

The running time of a fit is not covered by the differential-privacy guarantee
(docs/architecture.rst, "Side channels"); this measures how much one example
moves it.  D: 200 synthetic sparse binary rows by 100,000 features (density
0.001, seed 0); D': D plus a row of ones.  For each solver and screening
setting the two fits alternate, ``--repeats`` times each, after one warm-up
fit, in one process, so machine load affects both alike; the medians, their
ratio and the 1-minute load average are printed.

    python scripts/study_timing_side_channel.py [--repeats 7]
"""
import argparse
import os
import time
import warnings

import numpy as np
import scipy.sparse as sp

from dptoolkit.linear_model import FrankWolfeLassoClassifier


def neighbours(n=200, d=100_000, density=0.001, seed=0):
    """(X, y) and (X', y'): X' is X plus one dense row of ones (label 1)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=np.ones)
    y = rng.integers(0, 2, n)
    Xp = sp.vstack([X, sp.csr_array(np.ones((1, d)))], format="csr")
    return (X, y), (Xp, np.append(y, 1))


def fit_time(data, solver, screening, n_public):
    est = FrankWolfeLassoClassifier(epsilon=1.0, delta=1e-5, n_samples_public=n_public,
                                    classes=[0, 1], solver=solver, k=screening,
                                    random_state=0)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(*data)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    D, D_prime = neighbours()
    n_public = D[0].shape[0]
    print("solver    screening  median_D_s  median_D'_s  ratio  load1")
    for solver in ("fast", "standard"):
        for screening in ("auto", None):
            fit_time(D, solver, screening, n_public)          # warm-up
            t0, t1 = [], []
            for _ in range(args.repeats):
                t0.append(fit_time(D, solver, screening, n_public))
                t1.append(fit_time(D_prime, solver, screening, n_public))
            m0, m1 = np.median(t0), np.median(t1)
            print(f"{solver:9s} {str(screening):9s}  {m0:10.3f}  {m1:11.3f}  "
                  f"{m1 / m0:5.1f}  {os.getloadavg()[0]:5.2f}")


if __name__ == "__main__":
    main()
