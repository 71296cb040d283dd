"""Side-by-side speed of DPIGHTClassifier: now against an earlier commit's estimator.

Every ratio printed here comes from fits made one after the other in the same
process on the same data, so machine load affects both sides alike; each row
records the 1-minute load average (``load1``) at its end.

    python scripts/bench_ight.py speed --baseline 51e6e95
        IMDB train (25,000 reviews, 1-2-grams hashed to 2^20 binary features, as
        the main job loads it), epsilon = 1, delta = 1e-5, n_samples_public =
        25,000, the defaults otherwise (sparsity 1,000, 100 steps, screening to
        4,096 candidates); test accuracy on the IMDB test set.  Add
        ``--screening none`` for the steps on all 2^20 features.
    python scripts/bench_ight.py dense --baseline 51e6e95
        The same private fit on a 2,000 x 5,000 subsample (random rows, the 5,000
        most frequent columns), dense ndarray against CSR.

``--baseline REV`` loads ``dptoolkit/linear_model/_glm/_ight.py`` of commit ``REV``
(``git show``; its relative imports made absolute) next to the current
estimator; without it only the current estimator runs.  CPU seconds are the
process time of ``fit`` (best of ``--repeats``), wall seconds its elapsed time.
``--npz-cache DIR`` keeps the hashed IMDB matrices between runs.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from dptoolkit.datasets import get_data_path, load_text_corpus  # noqa: E402
from dptoolkit.linear_model import DPIGHTClassifier  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PRIVATE = dict(epsilon=1.0, delta=1e-5)


def load1():
    """1-minute load average (the machine may be shared)."""
    return round(os.getloadavg()[0], 2)


def baseline_class(rev):
    """``DPIGHTClassifier`` as commit ``rev`` defined it, imported from ``git show``."""
    src = subprocess.run(["git", "show", f"{rev}:dptoolkit/linear_model/_glm/_ight.py"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    src = re.sub(r"^from \.\.(\w*)",
                 lambda m: "from dptoolkit" + (f".{m.group(1)}" if m.group(1) else ""),
                 src, flags=re.M)
    src = re.sub(r"^from \.(\w+)", r"from dptoolkit.linear_model.\1", src, flags=re.M)
    module = types.ModuleType(f"dpight_at_{rev}")
    exec(compile(src, f"{rev}:dptoolkit/linear_model/_glm/_ight.py", "exec"), module.__dict__)
    return module.DPIGHTClassifier


def load_imdb(cache):
    """IMDB train/test, CSR float64 with {0, 1} labels (hashed once, then cached)."""
    if cache is not None:
        files = [Path(cache) / f"imdb_{p}.npz" for p in ("Xtr", "Xte")]
        yfile = Path(cache) / "imdb_y.npz"
        if all(f.exists() for f in files) and yfile.exists():
            ys = np.load(yfile)
            return (sp.csr_array(sp.load_npz(files[0])), ys["ytr"],
                    sp.csr_array(sp.load_npz(files[1])), ys["yte"])
    path = get_data_path("text/aclImdb-train-test.tar.xz")
    Xtr, ytr = load_text_corpus(path, "train")[:2]
    Xte, yte = load_text_corpus(path, "test")[:2]
    if cache is not None:
        Path(cache).mkdir(parents=True, exist_ok=True)
        sp.save_npz(files[0], sp.csr_matrix(Xtr))
        sp.save_npz(files[1], sp.csr_matrix(Xte))
        np.savez(yfile, ytr=ytr, yte=yte)
    return sp.csr_array(Xtr), ytr, sp.csr_array(Xte), yte


def timed_fit(cls, X, y, **params):
    est = cls(**params)
    t, c = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est, time.perf_counter() - t, time.process_time() - c


def models(args):
    out = [("now", DPIGHTClassifier)]
    if args.baseline:
        out.insert(0, (args.baseline, baseline_class(args.baseline)))
    return out


def speed(args):
    Xtr, ytr, Xte, yte = load_imdb(args.npz_cache)
    print(f"IMDB train {Xtr.shape}, nnz {Xtr.nnz}; test {Xte.shape}")
    extra = {} if args.screening == "auto" else {"k": None}
    for seed in args.seeds:
        for name, cls in models(args):
            best = None
            for _ in range(args.repeats):
                est, wall, cpu = timed_fit(cls, Xtr, ytr, n_samples_public=Xtr.shape[0],
                                           random_state=seed, **PRIVATE, **extra)
                best = (wall, cpu) if best is None or cpu < best[1] else best
            print(f"speed k={args.screening} seed={seed} {name:>8}: wall "
                  f"{best[0]:.2f} s, cpu {best[1]:.2f} s, test accuracy "
                  f"{est.score(Xte, yte):.4f}, non-zeros {np.count_nonzero(est.coef_)}, "
                  f"epsilon spent {est.privacy_spent_[0]:.6f}, load1 {load1()}", flush=True)


def dense(args):
    Xtr, ytr = load_imdb(args.npz_cache)[:2]
    rng = np.random.default_rng(0)
    rows = rng.choice(Xtr.shape[0], 2000, replace=False)
    cols = np.argsort(-np.bincount(Xtr.indices, minlength=Xtr.shape[1]), kind="stable")[:5000]
    Xs = sp.csr_array(Xtr[rows][:, cols])
    y = ytr[rows]
    Xd = Xs.toarray()
    print(f"subsample {Xs.shape}, nnz {Xs.nnz} (density {Xs.nnz / Xd.size:.3f})")
    for name, cls in models(args):
        for fmt, X in (("csr", Xs), ("dense", Xd)):
            cpu = []
            for _ in range(args.repeats):
                est, wall, c = timed_fit(cls, X, y, n_samples_public=2000, random_state=0,
                                         **PRIVATE)
                cpu.append(c)
            print(f"dense-vs-csr {name:>8} {fmt:>5}: cpu best {min(cpu):.3f} s, median "
                  f"{np.median(cpu):.3f} s, train accuracy {est.score(Xs, y):.3f}, "
                  f"load1 {load1()}", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("speed", "dense"))
    parser.add_argument("--baseline", default=None, help="commit to compare with")
    parser.add_argument("--screening", choices=("auto", "none"), default="auto")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--npz-cache", default=None)
    args = parser.parse_args(argv)
    print(f"load1 {load1()}, python {sys.version.split()[0]}")
    {"speed": speed, "dense": dense}[args.what](args)


if __name__ == "__main__":
    main()
