"""Study of Khanna, Lu and Raff, *Sparse Private LASSO Logistic Regression*: the Sparsifier.

Reproduces, with dptoolkit.linear_model:

``table1``
    Average non-zeros of private LASSO (Talwar et al.; FrankWolfeLassoClassifier,
    mechanism="laplace", epsilon = 1) and of the Sparsifier (epsilon_1 = 0.05,
    epsilon_2 = 0.95), their ratio to non-private Frank-Wolfe (50,000 iterations),
    lambda = 10, T = 1000, delta = 1/n_train, alpha = sqrt(p), beta = 2 sqrt(p)
    (widened to integers), rho = 1, ``--trials`` trials (paper: 50).  Test accuracy
    and AUC of every trial are kept for table 2.
``table2``
    Private LASSO run for fewer iterations, T chosen by bisection on 10 pilot runs
    so that its mean non-zeros match the Sparsifier's; accuracy and AUC against the
    Sparsifier's (trials of table 1), Wilcoxon signed-rank test on paired trials.
``figures``
    Figures 1-5: correct zeros, incorrect zeros, support F1 and test accuracy
    against epsilon for the Sparsifier, the two-stage method
    (dptoolkit.selection.TwoStageSelector, then private LASSO on the selected
    features) and DP-IGHT, on the synthetic data of Section 4.2 and on KDDCUP'99.
    lambda is chosen for the Sparsifier from 5 log-spaced values in [1, 50] by
    mean accuracy on a 20% validation split (``--lambda-trials`` runs each).
``multinomial``
    Multinomial private LASSO (Algorithm 3) and the Sparsifier on 20 Newsgroups
    (all 20 groups, hashed unigrams).

Data preprocessing uses public bounds only (scaling by the data's own maxima, as the
paper does, is not private): LIBSVM
binary sets as they are; splice's nucleotide codes 1-4 divided by 4; phishing's
constant stored value (1/sqrt(30)) mapped to 1; colon-cancer's z-scores divided by
the public bound 5 and clipped; the synthetic data scaled by the public bound 5;
KDDCUP'99 with the symbolic features one-hot encoded over the documented value
sets, numeric counts mapped by log1p(x)/log(1e9) (rates kept), and every row scaled
to unit L2 norm (a per-example operation, as in the paper's second step).

Outputs (CSV and PNG) go to ``--out`` (default ``docs/studies/sparse_lasso``).
Run from the repository root::

    python scripts/study_sparse_lasso.py all                  # full protocol
    python scripts/study_sparse_lasso.py table1 --trials 10   # reduced

Runtimes are appended to ``runtime.csv``.
"""
import os

# One BLAS thread: on a small shared machine multi-threaded BLAS makes the
# mat-vecs of DP-IGHT up to 20x slower (measured).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
import zlib  # noqa: E402
from pathlib import Path  # noqa: E402

import joblib  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from scipy import stats  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from dptoolkit.datasets import (  # noqa: E402
    clip_rows,
    get_data_path,
    load_libsvm,
    load_text_corpus,
    make_correlated_classification,
)
from dptoolkit.exceptions import DataClippedWarning  # noqa: E402
from dptoolkit.linear_model import (  # noqa: E402
    DPIGHTClassifier,
    FrankWolfeLassoClassifier,
    SparsifiedLassoClassifier,
)
from dptoolkit.linear_model import DEFAULT_REFRESH_TOL  # noqa: E402
from dptoolkit.selection import PrivateSelectThenFit, TwoStageSelector  # noqa: E402



def _nonprivate_coef(X, y, l1_bound, max_iter, refresh_tol):
    """Non-private Frank-Wolfe coefficients (module level so joblib can cache it), as
    the Sparsifier computes them for its count."""
    est = FrankWolfeLassoClassifier(l1_bound=l1_bound, max_iter=max_iter, solver="fast",
                                    refresh_tol=refresh_tol, epsilon=None)
    return est.fit(X, y).coef_


def check_count_bounds(bounds, n_coef):
    """The Sparsifier's "sqrt" count bounds (floor(sqrt p), ceil(2 sqrt p))."""
    assert bounds == "sqrt"
    root = math.sqrt(n_coef)
    return int(math.floor(root)), int(math.ceil(2.0 * root))


#: Khanna, Lu and Raff (2023), Table 1 (NZ and ratios) and Table 2 (NZ, accuracy, AUC), for the docs.
PAPER_TABLE1 = {
    "KDDCUP'99": (4, 106.90, 26.75, 16.10, 4.29), "splice": (52, 60.00, 1.15, 12.70, 0.24),
    "phishing": (2, 68.00, 34.00, 12.02, 6.16), "synthetic": (7, 100.00, 14.29, 15.08, 2.29),
    "mushrooms": (16, 111.98, 7.00, 16.02, 1.04), "a9a": (19, 122.90, 6.47, 18.06, 0.89),
    "w8a": (20, 285.64, 14.44, 25.60, 1.35), "colon-cancer": (58, 785.72, 13.56, 68.16, 1.12),
}
PAPER_TABLE2 = {
    "KDDCUP'99": (17, 53.71, 91.48, 14, 54.66, 86.57),
    "splice": (12, 71.34, 86.84, 14, 49.95, 50.13),
    "phishing": (12, 63.79, 77.23, 10, 64.26, 68.95),
    "synthetic": (16, 85.17, 93.28, 17, 56.41, 59.03),
    "mushrooms": (17, 77.89, 88.65, 17, 72.66, 83.23),
    "a9a": (17, 76.60, 67.64, 19, 71.57, 66.29),
    "w8a": (27, 97.15, 75.64, 26, 97.02, 76.36),
    "colon-cancer": (65, 83.67, 85.00, 69, 83.33, 86.61),
}

LAMBDA = 10.0
T_PRIVATE = 1000
T_NONPRIVATE = 50_000
EPS1 = 0.05
#: The public label set of every binary data set here (load_dataset: LIBSVM files
#: mapped to {0, 1}, KDD normal=1 / DoS=0, synthetic {0, 1}), declared to the
#: private fits so that they do not read it from y.
CLASSES = [0, 1]


# ------------------------------------------------------------------------ data
_KDD_COLUMNS = [
    "duration", "protocol_type", "service", "flag", "src_bytes", "dst_bytes", "land",
    "wrong_fragment", "urgent", "hot", "num_failed_logins", "logged_in", "num_compromised",
    "root_shell", "su_attempted", "num_root", "num_file_creations", "num_shells",
    "num_access_files", "num_outbound_cmds", "is_host_login", "is_guest_login", "count",
    "srv_count", "serror_rate", "srv_serror_rate", "rerror_rate", "srv_rerror_rate",
    "same_srv_rate", "diff_srv_rate", "srv_diff_host_rate", "dst_host_count",
    "dst_host_srv_count", "dst_host_same_srv_rate", "dst_host_diff_srv_rate",
    "dst_host_same_src_port_rate", "dst_host_srv_diff_host_rate", "dst_host_serror_rate",
    "dst_host_srv_serror_rate", "dst_host_rerror_rate", "dst_host_srv_rerror_rate", "label"]
# Value sets of the symbolic features, from the KDD Cup 1999 task description
# (kddcup.names), i.e. public, not read from the data.
_KDD_PROTOCOLS = ["icmp", "tcp", "udp"]
_KDD_FLAGS = ["OTH", "REJ", "RSTO", "RSTOS0", "RSTR", "S0", "S1", "S2", "S3", "SF", "SH"]
_KDD_SERVICES = [
    "IRC", "X11", "Z39_50", "aol", "auth", "bgp", "courier", "csnet_ns", "ctf", "daytime",
    "discard", "domain", "domain_u", "echo", "eco_i", "ecr_i", "efs", "exec", "finger",
    "ftp", "ftp_data", "gopher", "harvest", "hostnames", "http", "http_2784", "http_443",
    "http_8001", "imap4", "iso_tsap", "klogin", "kshell", "ldap", "link", "login", "mtp",
    "name", "netbios_dgm", "netbios_ns", "netbios_ssn", "netstat", "nnsp", "nntp", "ntp_u",
    "other", "pm_dump", "pop_2", "pop_3", "printer", "private", "red_i", "remote_job",
    "rje", "shell", "smtp", "sql_net", "ssh", "sunrpc", "supdup", "systat", "telnet",
    "tftp_u", "tim_i", "time", "urh_i", "urp_i", "uucp", "uucp_path", "vmnet", "whois"]
_KDD_DOS = ["back.", "land.", "neptune.", "pod.", "smurf.", "teardrop."]


def kdd_features(df):
    """Public-bounds encoding of KDD rows: one-hot symbolic features, log1p(x)/log(1e9)
    for non-rate numerics (clipped to 1), rates as they are, then unit L2 rows."""
    blocks = []
    for col, values in (("protocol_type", _KDD_PROTOCOLS), ("service", _KDD_SERVICES),
                        ("flag", _KDD_FLAGS)):
        codes = pd.Categorical(df[col], categories=values).codes
        onehot = np.zeros((len(df), len(values)))
        ok = codes >= 0
        onehot[np.flatnonzero(ok), codes[ok]] = 1.0
        blocks.append(onehot)
    numeric = [c for c in _KDD_COLUMNS[:-1] if c not in ("protocol_type", "service", "flag")]
    vals = df[numeric].to_numpy(dtype=np.float64)
    rate = np.array([c.endswith("_rate") for c in numeric])
    vals[:, ~rate] = np.minimum(np.log1p(np.maximum(vals[:, ~rate], 0.0)) / math.log(1e9),
                                1.0)
    blocks.append(np.clip(vals, 0.0, 1.0))
    X = np.hstack(blocks)
    X, _ = clip_rows(X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300),
                     1.0, "l2")
    return sp.csr_array(X)


def load_kdd(seed=0, n_train=60_000, n_train_pos=38_420, n_test=20_000):
    """KDDCUP'99 10%: normal (1) vs denial of service (0), other attacks dropped;
    60,000 training rows with 38,420 normal as in the paper (Wang & Zhang), and a
    test set of n_test further rows with the same class ratio."""
    path = get_data_path("kddcup99/kddcup.data_10_percent.bz2")
    df = pd.read_csv(path, header=None, names=_KDD_COLUMNS)
    df = df[(df.label == "normal.") | df.label.isin(_KDD_DOS)].reset_index(drop=True)
    y = (df.label == "normal.").to_numpy().astype(np.float64)
    rng = np.random.default_rng(seed)
    pos, neg = rng.permutation(np.flatnonzero(y == 1)), rng.permutation(np.flatnonzero(y == 0))
    n_test_pos = round(n_test * n_train_pos / n_train)
    tr = np.r_[pos[:n_train_pos], neg[:n_train - n_train_pos]]
    te = np.r_[pos[n_train_pos:n_train_pos + n_test_pos],
               neg[n_train - n_train_pos:n_train - n_train_pos + n_test - n_test_pos]]
    tr, te = rng.permutation(tr), rng.permutation(te)
    X = kdd_features(df)
    return X[tr], y[tr], X[te], y[te]


def _split(X, y, test_size, seed):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(X.shape[0])
    n_test = int(round(test_size * X.shape[0]))
    return X[idx[n_test:]], y[idx[n_test:]], X[idx[:n_test]], y[idx[:n_test]]


def load_dataset(name, seed=0):
    """(X_train, y_train, X_test, y_test), CSR, entries in [-1, 1] (public bounds)."""
    if name == "KDDCUP'99":
        return load_kdd(seed)
    if name == "synthetic":
        X, y, _ = make_correlated_classification(random_state=seed)
        Xt, yt, _ = make_correlated_classification(random_state=seed + 1000)
        return sp.csr_array(X), y, sp.csr_array(Xt), yt
    d = {"splice": 60, "phishing": 68, "mushrooms": 112, "a9a": 123, "w8a": 300,
         "colon-cancer": 2000}[name]
    X, y = load_libsvm(get_data_path(f"{name}.bz2"), n_features=d)
    test_file = {"splice": "splice.t.bz2", "a9a": "a9a.t.bz2"}.get(name)
    if test_file:
        Xt, yt = load_libsvm(get_data_path(test_file), n_features=d)
    else:
        X, y, Xt, yt = _split(X, y, 0.2, seed)
    out = []
    for M in (X, Xt):
        M = sp.csr_array(M, dtype=np.float64)
        if name == "splice":
            M = M / 4.0                       # nucleotide codes 1..4
        elif name == "phishing":
            M = M.copy()
            M.data[:] = 1.0                   # indicator of the stored value
        elif name == "colon-cancer":
            M, _ = clip_rows(M / 5.0, 1.0, "inf")   # z-scores, public bound 5
        out.append(sp.csr_array(M))
    return out[0], y, out[1], yt


# ------------------------------------------------------------------- helpers
def _metrics(est, X, y):
    scores = est.decision_function(X)
    acc = float(np.mean((scores > 0) == (y == 1)))
    auc = float(roc_auc_score(y, scores)) if np.ptp(scores) > 0 else 0.5
    return acc, auc


def _seeds(name, trials, salt):
    base = np.random.SeedSequence([zlib.crc32(name.encode()), salt])
    return [np.random.default_rng(s) for s in base.spawn(trials)]


def _log_runtime(out, stage, seconds, note=""):
    path = out / "runtime.csv"
    row = pd.DataFrame([dict(stage=stage, seconds=round(seconds, 1), note=note,
                             date=time.strftime("%Y-%m-%d %H:%M"))])
    row.to_csv(path, mode="a", header=not path.exists(), index=False)
    print(f"[{stage}] {seconds:.1f} s {note}", flush=True)


TABLE_DATASETS = ["KDDCUP'99", "phishing", "splice", "synthetic", "mushrooms", "a9a", "w8a",
                  "colon-cancer"]


# -------------------------------------------------------------------- table 1
def table1(out, trials, memory, datasets=TABLE_DATASETS):
    rows, trial_rows = [], []
    t_all = time.perf_counter()
    for name in datasets:
        t0 = time.perf_counter()
        X, y, Xt, yt = load_dataset(name)
        n, p = X.shape
        delta = 1.0 / n
        t1 = time.perf_counter()
        # the Sparsifier's own cached non-private fit (same arguments, so its trials
        # reuse it)
        nonpriv = memory.cache(_nonprivate_coef)(sp.csr_array(X, dtype=np.float64), y,
                                                 LAMBDA, T_NONPRIVATE, DEFAULT_REFRESH_TOL)
        t_np = time.perf_counter() - t1
        nz_np = int(np.count_nonzero(nonpriv))
        t2 = time.perf_counter()
        for trial, rng in enumerate(_seeds(name, trials, 1)):
            pl = FrankWolfeLassoClassifier(l1_bound=LAMBDA, max_iter=T_PRIVATE, epsilon=1.0,
                                           delta=delta, mechanism="laplace", classes=CLASSES,
                                           random_state=rng).fit(X, y)
            acc, auc = _metrics(pl, Xt, yt)
            trial_rows.append(dict(dataset=name, trial=trial, method="private LASSO",
                                   T=T_PRIVATE, nz=int(np.count_nonzero(pl.coef_)),
                                   accuracy=acc, auc=auc))
            spf = SparsifiedLassoClassifier(
                l1_bound=LAMBDA, max_iter=T_PRIVATE, epsilon_count=EPS1, epsilon=1.0,
                delta=delta, nonprivate_solver="frank_wolfe",
                nonprivate_max_iter=T_NONPRIVATE, memory=memory, classes=CLASSES,
                random_state=rng).fit(X, y)
            acc, auc = _metrics(spf, Xt, yt)
            trial_rows.append(dict(dataset=name, trial=trial, method="Sparsifier",
                                   T=T_PRIVATE, nz=int(np.count_nonzero(spf.coef_)),
                                   count=spf.n_nonzero_, accuracy=acc, auc=auc))
        t_priv = time.perf_counter() - t2
        tr = pd.DataFrame([r for r in trial_rows if r["dataset"] == name])
        pl_nz = tr[tr.method == "private LASSO"].nz.mean()
        sp_nz = tr[tr.method == "Sparsifier"].nz.mean()
        alpha, beta = check_count_bounds("sqrt", p)
        paper = PAPER_TABLE1.get(name, (np.nan,) * 5)
        rows.append(dict(
            dataset=name, n_train=n, n_test=Xt.shape[0], p=p, alpha=alpha, beta=beta,
            nonprivate_nz=nz_np, private_lasso_nz=round(pl_nz, 2),
            private_lasso_ratio=round(pl_nz / max(nz_np, 1), 2),
            sparsifier_nz=round(sp_nz, 2), sparsifier_ratio=round(sp_nz / max(nz_np, 1), 2),
            paper_nonprivate_nz=paper[0], paper_private_lasso_nz=paper[1],
            paper_private_lasso_ratio=paper[2], paper_sparsifier_nz=paper[3],
            paper_sparsifier_ratio=paper[4],
            private_lasso_acc=round(100 * tr[tr.method == "private LASSO"].accuracy.mean(), 2),
            sparsifier_acc=round(100 * tr[tr.method == "Sparsifier"].accuracy.mean(), 2),
            seconds_nonprivate=round(t_np, 1), seconds_trials=round(t_priv, 1)))
        print(rows[-1], flush=True)
        _log_runtime(out, f"table1 {name}", time.perf_counter() - t0,
                     f"{trials} trials; non-private {t_np:.1f} s (0 if cached)")
    pd.DataFrame(rows).to_csv(out / "table1.csv", index=False)
    pd.DataFrame(trial_rows).to_csv(out / "table1_trials.csv", index=False)
    _log_runtime(out, "table1 total", time.perf_counter() - t_all, f"{trials} trials")


# -------------------------------------------------------------------- table 2
def _mean_nz(X, y, T, delta, rngs):
    return np.mean([np.count_nonzero(FrankWolfeLassoClassifier(
        l1_bound=LAMBDA, max_iter=T, epsilon=1.0, delta=delta, mechanism="laplace",
        classes=CLASSES, random_state=r).fit(X, y).coef_) for r in rngs])


def table2(out, trials, datasets=TABLE_DATASETS, pilot=10):
    tr1 = pd.read_csv(out / "table1_trials.csv")
    rows, trial_rows = [], []
    t_all = time.perf_counter()
    for name in datasets:
        t0 = time.perf_counter()
        X, y, Xt, yt = load_dataset(name)
        delta = 1.0 / X.shape[0]
        spf = tr1[(tr1.dataset == name) & (tr1.method == "Sparsifier")].sort_values("trial")
        target = spf.nz.mean()
        # bisection on T (non-zeros grow with T): smallest T whose pilot mean >= target,
        # then the closer of T-1 and T
        pilot_rngs = _seeds(name, pilot, 2)
        lo, hi = 1, T_PRIVATE
        cache = {}

        def nz_of(T):
            if T not in cache:
                cache[T] = _mean_nz(X, y, T, delta, pilot_rngs)
            return cache[T]

        while hi - lo > 1:
            mid = (lo + hi) // 2
            if nz_of(mid) >= target:
                hi = mid
            else:
                lo = mid
        T = min((lo, hi), key=lambda t: abs(nz_of(t) - target))
        accs, aucs, nzs = [], [], []
        for trial, rng in enumerate(_seeds(name, trials, 3)):
            pl = FrankWolfeLassoClassifier(l1_bound=LAMBDA, max_iter=T, epsilon=1.0,
                                           delta=delta, mechanism="laplace", classes=CLASSES,
                                           random_state=rng).fit(X, y)
            acc, auc = _metrics(pl, Xt, yt)
            accs.append(acc)
            aucs.append(auc)
            nzs.append(int(np.count_nonzero(pl.coef_)))
            trial_rows.append(dict(dataset=name, trial=trial, T=T, nz=nzs[-1], accuracy=acc,
                                   auc=auc))
        m = min(len(spf), trials)
        sa, su = spf.accuracy.to_numpy()[:m], spf.auc.to_numpy()[:m]
        pa, pu = np.array(accs[:m]), np.array(aucs[:m])

        def wilcoxon(a, b):
            if np.allclose(a, b):
                return 1.0
            return float(stats.wilcoxon(a, b).pvalue)

        paper = PAPER_TABLE2.get(name, (np.nan,) * 6)
        rows.append(dict(
            dataset=name, sparsifier_nz=round(spf.nz.mean(), 2),
            sparsifier_acc=round(100 * sa.mean(), 2), sparsifier_auc=round(100 * su.mean(), 2),
            private_lasso_T=T, private_lasso_nz=round(float(np.mean(nzs)), 2),
            private_lasso_acc=round(100 * pa.mean(), 2),
            private_lasso_auc=round(100 * pu.mean(), 2),
            p_acc=wilcoxon(sa, pa), p_auc=wilcoxon(su, pu),
            paper_sparsifier_nz=paper[0], paper_sparsifier_acc=paper[1],
            paper_sparsifier_auc=paper[2], paper_private_lasso_nz=paper[3],
            paper_private_lasso_acc=paper[4], paper_private_lasso_auc=paper[5]))
        print(rows[-1], flush=True)
        _log_runtime(out, f"table2 {name}", time.perf_counter() - t0,
                     f"{trials} trials, T={T}")
    pd.DataFrame(rows).to_csv(out / "table2.csv", index=False)
    pd.DataFrame(trial_rows).to_csv(out / "table2_trials.csv", index=False)
    _log_runtime(out, "table2 total", time.perf_counter() - t_all, f"{trials} trials")


# -------------------------------------------------------------------- figures
EPSILONS = [0.25, 0.5, 1.0, 2.0, 4.0]
LAMBDAS = np.geomspace(1.0, 50.0, 5)


def _support_metrics(coef, w_true):
    nz, true = coef != 0, w_true != 0
    correct_zeros = int(np.sum(~nz & ~true))
    incorrect_zeros = int(np.sum(~nz & true))
    tp, fp, fn = int(np.sum(nz & true)), int(np.sum(nz & ~true)), incorrect_zeros
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return correct_zeros, incorrect_zeros, f1


def _figure_data(name, seed=0):
    """Train (80%), validation (20%) and test sets, plus w* (synthetic only)."""
    if name == "synthetic":
        X, y, w = make_correlated_classification(random_state=seed)
        Xt, yt, _ = make_correlated_classification(random_state=seed + 1000)
        Xtr, ytr, Xva, yva = _split(X, y, 0.2, seed)
        return sp.csr_array(Xtr), ytr, sp.csr_array(Xva), yva, sp.csr_array(Xt), yt, w
    X, y, Xt, yt = load_kdd(seed)
    Xtr, ytr, Xva, yva = _split(X, y, 0.2, seed)
    return Xtr, ytr, Xva, yva, Xt, yt, None


def figures(out, trials, lambda_trials, memory, k=10):
    rows, lam_rows = [], []
    t_all = time.perf_counter()
    for name in ["synthetic", "KDDCUP'99"]:
        Xtr, ytr, Xva, yva, Xt, yt, w_true = _figure_data(name)
        n, p = Xtr.shape
        delta = 1.0 / n
        n_blocks = max(1, math.isqrt(n))          # n_train treated as public (delta = 1/n)
        for eps in EPSILONS:
            t0 = time.perf_counter()

            def sparsifier(lam, rng):
                return SparsifiedLassoClassifier(
                    l1_bound=lam, max_iter=T_PRIVATE, epsilon_count=EPS1, epsilon=eps,
                    delta=delta, nonprivate_solver="frank_wolfe",
                    nonprivate_max_iter=T_NONPRIVATE, memory=memory, classes=CLASSES,
                    random_state=rng)

            val = []
            for lam in LAMBDAS:
                accs = [_metrics(sparsifier(lam, r).fit(Xtr, ytr), Xva, yva)[0]
                        for r in _seeds(f"{name}{eps}{lam}", lambda_trials, 4)]
                val.append(np.mean(accs))
                lam_rows.append(dict(dataset=name, epsilon=eps, l1_bound=lam,
                                     val_accuracy=np.mean(accs)))
            lam = float(LAMBDAS[int(np.argmax(val))])
            for trial, rng in enumerate(_seeds(f"{name}{eps}", trials, 5)):
                models = {
                    "Sparsifier": sparsifier(lam, rng),
                    "two-stage": PrivateSelectThenFit(
                        TwoStageSelector(k, epsilon=eps / 2, n_blocks=n_blocks,
                                         neighbouring="add_remove", random_state=rng),
                        FrankWolfeLassoClassifier(l1_bound=lam, max_iter=T_PRIVATE,
                                                  epsilon=eps / 2, delta=delta,
                                                  mechanism="laplace", classes=CLASSES,
                                                  random_state=rng), epsilon=None),
                    "private IGHT": DPIGHTClassifier(sparsity=k, max_iter=T_PRIVATE,
                                                     learning_rate=4.0, epsilon=eps,
                                                     delta=delta, n_samples_public=n,
                                                     classes=CLASSES, random_state=rng),
                }
                for method, model in models.items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", DataClippedWarning)
                        model.fit(Xtr, ytr)
                    if method == "two-stage":
                        coef = np.zeros(p)
                        coef[model.support_] = model.estimator_.coef_[0]
                        acc = float(np.mean(model.predict(Xt) == yt))
                    else:
                        coef = model.coef_[0]
                        acc = float(np.mean(model.predict(Xt) == yt))
                    row = dict(dataset=name, epsilon=eps, l1_bound=lam, method=method,
                               trial=trial, accuracy=acc, nz=int(np.count_nonzero(coef)),
                               spent=model.privacy_spent_[0])
                    if w_true is not None:
                        cz, iz, f1 = _support_metrics(coef, w_true)
                        row.update(correct_zeros=cz, incorrect_zeros=iz, f1=f1)
                    rows.append(row)
            _log_runtime(out, f"figures {name} eps={eps}", time.perf_counter() - t0,
                         f"lambda={lam:g}; {trials} trials, {lambda_trials} lambda trials")
            pd.DataFrame(rows).to_csv(out / "figures_trials.csv", index=False)
            pd.DataFrame(lam_rows).to_csv(out / "figures_lambda.csv", index=False)
    _log_runtime(out, "figures total", time.perf_counter() - t_all,
                 f"{trials} trials, {lambda_trials} lambda trials")
    plot_figures(out)


def figures_two_stage(out, trials, alpha=0.01, k=10):
    """The two-stage method again with block-LASSO penalty ``alpha`` (the default 0.1
    leaves every block's support empty at this feature scale), with the lambda the
    figures stage chose for each epsilon.  Written to ``figures_two_stage.csv``."""
    lam_df = pd.read_csv(out / "figures_lambda.csv")
    rows = []
    t_all = time.perf_counter()
    for name in ["synthetic", "KDDCUP'99"]:
        Xtr, ytr, Xva, yva, Xt, yt, w_true = _figure_data(name)
        n, p = Xtr.shape
        delta = 1.0 / n
        n_blocks = max(1, math.isqrt(n))
        for eps in EPSILONS:
            sub = lam_df[(lam_df.dataset == name) & (lam_df.epsilon == eps)]
            if sub.empty:
                continue
            lam = float(sub.l1_bound.to_numpy()[int(np.argmax(sub.val_accuracy.to_numpy()))])
            for trial, rng in enumerate(_seeds(f"{name}{eps}ts", trials, 7)):
                model = PrivateSelectThenFit(
                    TwoStageSelector(k, epsilon=eps / 2, alpha=alpha, n_blocks=n_blocks,
                                     neighbouring="add_remove", random_state=rng),
                    FrankWolfeLassoClassifier(l1_bound=lam, max_iter=T_PRIVATE,
                                              epsilon=eps / 2, delta=delta,
                                              mechanism="laplace", classes=CLASSES,
                                              random_state=rng), epsilon=None)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model.fit(Xtr, ytr)
                coef = np.zeros(p)
                coef[model.support_] = model.estimator_.coef_[0]
                row = dict(dataset=name, epsilon=eps, l1_bound=lam,
                           method=f"two-stage (alpha={alpha:g})", trial=trial,
                           accuracy=float(np.mean(model.predict(Xt) == yt)),
                           nz=int(np.count_nonzero(coef)), spent=model.privacy_spent_[0])
                if w_true is not None:
                    cz, iz, f1 = _support_metrics(coef, w_true)
                    row.update(correct_zeros=cz, incorrect_zeros=iz, f1=f1)
                rows.append(row)
    pd.DataFrame(rows).to_csv(out / "figures_two_stage.csv", index=False)
    _log_runtime(out, "figures two-stage alpha", time.perf_counter() - t_all,
                 f"alpha={alpha:g}, {trials} trials")
    plot_figures(out)


def plot_figures(out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = pd.read_csv(out / "figures_trials.csv")
    if (out / "figures_two_stage.csv").exists():
        df = pd.concat([df, pd.read_csv(out / "figures_two_stage.csv")], ignore_index=True)
    specs = [("fig1_correct_zeros", "synthetic", "correct_zeros", "correct zeros", 92),
             ("fig2_incorrect_zeros", "synthetic", "incorrect_zeros", "incorrect zeros", 8),
             ("fig3_f1", "synthetic", "f1", "support F1", None),
             ("fig4_accuracy_synthetic", "synthetic", "accuracy", "test accuracy", None),
             ("fig5_accuracy_kdd", "KDDCUP'99", "accuracy", "test accuracy", None)]
    summary = []
    for fname, data, col, label, line in specs:
        sub = df[df.dataset == data]
        if sub.empty or col not in sub:
            continue
        fig, ax = plt.subplots(figsize=(4.6, 3.4))
        for method, g in sub.groupby("method"):
            s = g.groupby("epsilon")[col].agg(["mean", "std"])
            ax.errorbar(s.index, s["mean"], yerr=s["std"], marker="o", capsize=3,
                        label=method)
            for eps, r in s.iterrows():
                summary.append(dict(figure=fname, dataset=data, method=method, epsilon=eps,
                                    metric=col, mean=round(r["mean"], 4),
                                    sd=round(r["std"], 4)))
        if line is not None:
            ax.axhline(line, color="k", lw=1)
        ax.set_xscale("log")
        ax.set_xticks(EPSILONS)
        ax.set_xticklabels([f"{e:g}" for e in EPSILONS])
        ax.minorticks_off()
        ax.set_xlabel("epsilon (total)")
        ax.set_ylabel(label)
        ax.set_title(f"{data}: {label}")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / f"{fname}.png", dpi=110)
        plt.close(fig)
    pd.DataFrame(summary).to_csv(out / "figures.csv", index=False)


# ---------------------------------------------------------------- multinomial
def multinomial(out, memory, n_features=2**14, l1_bound=20.0, T=500, nonprivate_T=1000):
    t0 = time.perf_counter()
    path = get_data_path("text/20news-bydate.tar.xz")
    X, y, names = load_text_corpus(path, subset="train", n_features=n_features,
                                   ngram_range=(1, 1))
    Xt, yt, _ = load_text_corpus(path, subset="test", n_features=n_features,
                                 ngram_range=(1, 1))
    t_load = time.perf_counter() - t0
    delta = 1.0 / X.shape[0]
    # the public label set: 0 .. 19, one label per class folder (names)
    classes = list(range(len(names)))
    rows = []

    def record(label, coef, secs, privacy):
        pred = np.argmax(np.asarray(Xt @ coef.T), axis=1)
        rows.append(dict(model=label, n_classes=len(names), n_train=X.shape[0],
                         n_test=Xt.shape[0], n_features=n_features, l1_bound=l1_bound,
                         nz=int(np.count_nonzero(coef)),
                         features_used=int(np.count_nonzero(np.any(coef != 0, axis=0))),
                         test_accuracy=round(float(np.mean(pred == yt)), 4),
                         privacy=privacy, seconds=round(secs, 1)))
        print(rows[-1], flush=True)

    # the Sparsifier's own cached non-private fit (computed once, reused below)
    t1 = time.perf_counter()
    coef = memory.cache(_nonprivate_coef)(sp.csr_array(X, dtype=np.float64), y, l1_bound,
                                          nonprivate_T, DEFAULT_REFRESH_TOL)
    record(f"non-private FW (T={nonprivate_T})", coef, time.perf_counter() - t1, None)
    for eps in (1.0, 10.0):
        t1 = time.perf_counter()
        est = FrankWolfeLassoClassifier(l1_bound=l1_bound, max_iter=T, epsilon=eps,
                                        delta=delta, mechanism="exponential",
                                        classes=classes, random_state=0).fit(X, y)
        record(f"private LASSO eps={eps:g}", est.coef_, time.perf_counter() - t1,
               tuple(round(v, 6) for v in est.privacy_spent_))
        t1 = time.perf_counter()
        est = SparsifiedLassoClassifier(l1_bound=l1_bound, max_iter=T, epsilon_count=EPS1,
                                        epsilon=eps, delta=delta,
                                        mechanism="exponential",
                                        nonprivate_solver="frank_wolfe",
                                        nonprivate_max_iter=nonprivate_T, memory=memory,
                                        classes=classes, random_state=0).fit(X, y)
        record(f"Sparsifier eps={eps:g}", est.coef_, time.perf_counter() - t1,
               tuple(round(v, 6) for v in est.privacy_spent_))
    pd.DataFrame(rows).to_csv(out / "multinomial_20news.csv", index=False)
    _log_runtime(out, "multinomial 20news", time.perf_counter() - t0,
                 f"load {t_load:.1f} s; T={T}, non-private T={nonprivate_T}")


# ------------------------------------------------------------- Appendix B code
def _appendix_b_lasso(X, y, iterations, l1_bound, epsilon=None, delta=None, rng=None):
    """Khanna, Lu and Raff (2023), Appendix B, nonprivate_lasso / private_lasso, transcribed (numpy,
    Generator instead of the global RNG).  The private version keeps line 43's
    ``argmax`` (the ASCENT vertex) on purpose: this is the paper's code, for
    comparison only."""
    n, d = X.shape
    w = np.zeros(d)
    scale = None if epsilon is None else (
        l1_bound * np.sqrt(8 * iterations * np.log(1 / delta)) / (n * epsilon))
    for t in range(1, iterations + 1):
        grad = (X.T @ (1 / (1 + np.exp(-(X @ w))) - y)) / n
        dd = l1_bound * np.concatenate([grad, -grad])      # constraint @ grad
        if scale is None:
            k = int(np.argmin(dd))
        else:
            k = int(np.argmax(dd + rng.laplace(scale=scale, size=2 * d)))
        w_tilde = np.zeros(d)
        w_tilde[k % d] = l1_bound * (1.0 if k < d else -1.0)
        w = w + (2 / (t + 2)) * (w_tilde - w)
    return w


def appendix_b(out, trials, datasets=("synthetic", "KDDCUP'99", "splice")):
    """Accuracy of the paper's own Appendix B code (ascent vertex, true count) for
    the settings of Tables 1-2, to explain the differences with the paper."""
    t2 = pd.read_csv(out / "table2.csv").set_index("dataset")
    rows = []
    t0 = time.perf_counter()
    for name in datasets:
        X, y, Xt, yt = load_dataset(name)
        X, Xt = X.toarray(), Xt.toarray()
        n, p = X.shape
        delta = 1.0 / n
        alpha, beta = math.sqrt(p), 2 * math.sqrt(p)
        w_np = _appendix_b_lasso(X, y, 5000, LAMBDA)   # (50,000 in the paper)
        c = int(np.clip(np.count_nonzero(w_np), alpha, beta))   # line 58: true count
        T_match = int(t2.loc[name, "private_lasso_T"])
        for trial, rng in enumerate(_seeds(f"appB{name}", trials, 6)):
            for method, T, keep in (("Appendix B private_lasso (T=1000)", T_PRIVATE, None),
                                    ("Appendix B sparsifier", T_PRIVATE, c),
                                    ("Appendix B private_lasso (T matched)", T_match, None)):
                eps = 1.0 - EPS1 if keep else 1.0
                w = _appendix_b_lasso(X, y, T, LAMBDA, eps, delta, rng)
                if keep is not None:
                    idx = np.argsort(-np.abs(w), kind="stable")[:keep]
                    w2 = np.zeros_like(w)
                    w2[idx] = w[idx]
                    w = w2
                s = Xt @ w
                rows.append(dict(dataset=name, method=method, trial=trial, T=T,
                                 nz=int(np.count_nonzero(w)),
                                 accuracy=float(np.mean((s > 0) == (yt == 1))),
                                 auc=float(roc_auc_score(yt, s)) if np.ptp(s) > 0 else 0.5))
    df = pd.DataFrame(rows)
    summary = df.groupby(["dataset", "method"]).agg(
        T=("T", "first"), nz=("nz", "mean"), accuracy=("accuracy", "mean"),
        auc=("auc", "mean")).reset_index()
    summary["accuracy"] = (100 * summary.accuracy).round(2)
    summary["auc"] = (100 * summary.auc).round(2)
    summary["nz"] = summary.nz.round(2)
    summary.to_csv(out / "appendix_b.csv", index=False)
    print(summary, flush=True)
    _log_runtime(out, "appendix_b", time.perf_counter() - t0, f"{trials} trials")


# ------------------------------------------------------------------ summaries
def nonprivate_accuracy(out, memory, datasets=TABLE_DATASETS):
    """Test accuracy of the (cached) non-private fits of table 1."""
    rows = []
    for name in datasets:
        X, y, Xt, yt = load_dataset(name)
        coef = memory.cache(_nonprivate_coef)(sp.csr_array(X, dtype=np.float64), y, LAMBDA,
                                              T_NONPRIVATE, DEFAULT_REFRESH_TOL)
        s = np.asarray(Xt @ coef[0]).ravel()
        rows.append(dict(dataset=name, nonprivate_nz=int(np.count_nonzero(coef)),
                         nonprivate_acc=round(100 * float(np.mean((s > 0) == (yt == 1))), 2),
                         nonprivate_auc=round(100 * float(roc_auc_score(yt, s)), 2)))
    pd.DataFrame(rows).to_csv(out / "nonprivate.csv", index=False)


def summarise(out):
    """Compact tables for the docs: ours next to the paper's."""
    t1 = pd.read_csv(out / "table1.csv")
    pd.DataFrame({
        "dataset": t1.dataset, "p": t1.p, "[alpha, beta]": [
            f"[{a}, {b}]" for a, b in zip(t1.alpha, t1.beta)],
        "non-private NZ": t1.nonprivate_nz,
        "(paper)": t1.paper_nonprivate_nz,
        "private LASSO NZ": t1.private_lasso_nz, "ratio": t1.private_lasso_ratio,
        "(paper NZ, ratio)": [f"{a:g}, {b:g}" for a, b in
                              zip(t1.paper_private_lasso_nz, t1.paper_private_lasso_ratio)],
        "Sparsifier NZ": t1.sparsifier_nz, "ratio ": t1.sparsifier_ratio,
        "(paper NZ, ratio) ": [f"{a:g}, {b:g}" for a, b in
                               zip(t1.paper_sparsifier_nz, t1.paper_sparsifier_ratio)],
    }).to_csv(out / "table1_summary.csv", index=False)
    if (out / "table2.csv").exists():
        t2 = pd.read_csv(out / "table2.csv")

        def mark(v, p, other):
            return f"**{v:.2f}**" if p < 0.05 and v > other else f"{v:.2f}"

        pd.DataFrame({
            "dataset": t2.dataset,
            "Sparsifier NZ": t2.sparsifier_nz,
            "Acc": [mark(a, p, b) for a, p, b in zip(t2.sparsifier_acc, t2.p_acc,
                                                     t2.private_lasso_acc)],
            "AUC": [mark(a, p, b) for a, p, b in zip(t2.sparsifier_auc, t2.p_auc,
                                                     t2.private_lasso_auc)],
            "private LASSO T": t2.private_lasso_T, "NZ": t2.private_lasso_nz,
            "Acc ": [mark(b, p, a) for a, p, b in zip(t2.sparsifier_acc, t2.p_acc,
                                                      t2.private_lasso_acc)],
            "AUC ": [mark(b, p, a) for a, p, b in zip(t2.sparsifier_auc, t2.p_auc,
                                                      t2.private_lasso_auc)],
            "p (Acc, AUC)": [f"{a:.2g}, {b:.2g}" for a, b in zip(t2.p_acc, t2.p_auc)],
            "(paper: Sparsifier NZ/Acc/AUC)": [
                f"{a:g} / {b:g} / {c:g}" for a, b, c in zip(
                    t2.paper_sparsifier_nz, t2.paper_sparsifier_acc, t2.paper_sparsifier_auc)],
            "(paper: private LASSO NZ/Acc/AUC)": [
                f"{a:g} / {b:g} / {c:g}" for a, b, c in zip(
                    t2.paper_private_lasso_nz, t2.paper_private_lasso_acc,
                    t2.paper_private_lasso_auc)],
        }).to_csv(out / "table2_summary.csv", index=False)


# ----------------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stage", choices=["table1", "table2", "figures", "plot", "multinomial",
                                      "summarise", "appendix_b", "nonprivate",
                                      "two_stage_alpha", "all"])
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--fig-trials", type=int, default=50)
    ap.add_argument("--lambda-trials", type=int, default=50)
    ap.add_argument("--datasets", nargs="*", default=TABLE_DATASETS)
    ap.add_argument("--out", type=Path, default=Path("docs/studies/sparse_lasso"))
    ap.add_argument("--cache", type=Path,
                    default=Path.home() / ".cache" / "dptoolkit" / "study_sparse_lasso")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    memory = joblib.Memory(str(args.cache), verbose=0)
    if args.stage in ("table1", "all"):
        table1(args.out, args.trials, memory, args.datasets)
    if args.stage in ("table2", "all"):
        table2(args.out, args.trials, args.datasets)
    if args.stage in ("figures", "all"):
        figures(args.out, args.fig_trials, args.lambda_trials, memory)
    if args.stage == "plot":
        plot_figures(args.out)
    if args.stage in ("multinomial", "all"):
        multinomial(args.out, memory)
    if args.stage == "two_stage_alpha":
        figures_two_stage(args.out, args.fig_trials)
    if args.stage == "nonprivate":
        nonprivate_accuracy(args.out, memory, args.datasets)
    if args.stage == "appendix_b":
        appendix_b(args.out, min(args.trials, 20))
    if args.stage in ("summarise", "all"):
        summarise(args.out)


if __name__ == "__main__":
    main()
