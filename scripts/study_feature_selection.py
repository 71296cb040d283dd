"""Study of Swope et al. (AISec 2024): DP-SIS against the two-stage method.

Reproduces, with dptoolkit.selection:

1. Section 3 (Figure 1): selection frequency of each feature by non-private SIS
   and the non-private first stage of the two-stage method, experiments W1 and
   W1/W2, 1000 repetitions each.
2. Section 5 (Figures 2-8): top-k accuracy of DP-SIS and of the private
   two-stage method against a reference top-k, on the synthetic design of
   Section 5 and on the microarray sets of ``$DPTOOLKIT_DATA/microarray``, for
   k in {5, floor(log d)} (synthetic: {5, 8}) and epsilon in
   {0.1, 0.5, 1, 2, 5, 10, 20}, 100 trials per cell; heatmaps of the accuracy
   difference; TOP / GREAT / GOOD rates of DP-SIS.
3. The speed of the canonical Lipschitz mechanism at d = 10^6, k = 14.

Two preprocessing variants are run for every real data set:

``paper``
    The paper's: columns centred by their means and scaled to max-abs 1, the
    target likewise (Algorithm 1, steps 1-2).  Data-derived, so **not private**
    (the sensitivity-1 claim needs data-independent scaling); kept to compare with
    the paper.
``private``
    Per-example (local) operations only: x -> sign(x) log(1 + |x|) elementwise,
    then each example centred by its own mean and divided by its own max-abs, so
    entries lie in [-1, 1] with public bounds; the target is the public coding of
    the class labels mapped onto [-1, 1].  DP-SIS and the two-stage method are
    then epsilon-DP under add/remove neighbouring (sensitivity 1).

Outputs (small CSV summaries and PNG figures) go to ``--out`` (default
``docs/studies/feature_selection``); the docs page shows them.  Run from the
repository root::

    python scripts/study_feature_selection.py            # full protocol
    python scripts/study_feature_selection.py --trials 20 --reps 200   # reduced

The runtime of each stage is written to ``runtime.csv``.
"""
import argparse
import math
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso

from dptoolkit.datasets import get_data_path
from dptoolkit.selection import (
    SIS,
    block_support_counts,
    canonical_lipschitz_top_k,
    dpsis_scores,
    peeling_top_k,
    top_great_good,
    top_k_accuracy,
)

MICROARRAY = ["alon", "borovecki", "chowdary", "christensen", "golub", "gordon", "gravier",
              "khan", "shipp", "singh", "sorlie", "su", "subramanian", "west"]
# R^2 of the non-private LASSO (lambda = 0.1) in Table 1 of the paper.
PAPER_R2 = dict(alon=0.4822, borovecki=0.9011, chowdary=0.8338, christensen=0.7870,
                golub=0.6819, gordon=0.2432, gravier=0.0689, khan=0.6961, shipp=0.4204,
                singh=0.6449, sorlie=0.9300, su=0.9602, subramanian=0.5340, west=0.7044)
EPSILONS = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0]
LASSO_ALPHA = 0.1


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------

def load_microarray(name):
    """Load ``microarray/<name>.csv.{bz2,xz}``: X (float64), label codes, label names.

    Labels that all parse as numbers keep their numeric value (sorlie, su);
    other labels are coded 0, 1, ... in sorted (alphabetical) order.
    """
    for ext in ("bz2", "xz"):
        path = get_data_path(f"microarray/{name}.csv.{ext}")
        if path.exists():
            break
    else:
        raise FileNotFoundError(f"microarray/{name}.csv.(bz2|xz) not found under "
                                f"{get_data_path('microarray')}")
    df = pd.read_csv(path)
    labels = df.pop("y").astype(str)
    try:
        y = labels.astype(float).to_numpy()
        names = sorted(set(labels), key=float)
    except ValueError:
        cat = pd.Categorical(labels)
        y = cat.codes.astype(np.float64)
        names = list(cat.categories)
    return df.to_numpy(dtype=np.float64), y, names


def paper_preprocess(X, y):
    """Columns and target centred and scaled to max-abs 1 (data-derived)."""
    Xc = X - X.mean(axis=0)
    m = np.abs(Xc).max(axis=0)
    Xc /= np.where(m > 0, m, 1.0)
    yc = y - y.mean()
    return Xc, yc / np.abs(yc).max()


def private_preprocess(X, y):
    """Per-example operations only; target mapped from its public label range."""
    Z = np.sign(X) * np.log1p(np.abs(X))
    Z -= Z.mean(axis=1, keepdims=True)
    m = np.abs(Z).max(axis=1, keepdims=True)
    Z /= np.where(m > 0, m, 1.0)
    lo, hi = y.min(), y.max()          # the label set is public (class names)
    return Z, 2.0 * (y - lo) / (hi - lo) - 1.0


def reference_top_k(X, y, k):
    """Top-k |coef| of a non-private LASSO with alpha = 0.1; if it keeps fewer than
    k features, alpha is divided by 2^(1/4) until it keeps at least k."""
    alpha = LASSO_ALPHA
    first = None
    while True:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = Lasso(alpha=alpha, max_iter=20_000, tol=1e-6).fit(X, y)
        if first is None:
            first = (model.score(X, y), int(np.count_nonzero(model.coef_)))
        if np.count_nonzero(model.coef_) >= k or alpha < 1e-6:
            break
        alpha /= 2 ** 0.25
    order = np.argsort(-np.abs(model.coef_), kind="stable")
    return np.sort(order[:k]), alpha, first


def synthetic_section5(rng, n=100, d=2000, n_nonzero=8):
    """Section 5 design (Eq. 5-6): X ~ N(0, I), noise N(0, 1.5) (variance 1.5),
    w_i = (-1)^u (a + |z|), u ~ Bernoulli(0.4), z ~ N(0, 1), a = 4 log(n) / sqrt(n)."""
    X = rng.normal(size=(n, d))
    w = np.zeros(d)
    support = rng.choice(d, size=n_nonzero, replace=False)
    a = 4 * np.log(n) / np.sqrt(n)
    w[support] = (-1.0) ** rng.binomial(1, 0.4, size=n_nonzero) * (
        a + np.abs(rng.normal(size=n_nonzero)))
    y = X @ w + np.sqrt(1.5) * rng.normal(size=n)
    return X, y, w


# ---------------------------------------------------------------------------
# Section 3
# ---------------------------------------------------------------------------

def top_k_random_ties(counts, k, rng):
    keys = rng.random(counts.size)
    return np.sort(np.lexsort((keys, -counts))[:k])


def section3(reps, rng, out):
    """W1 and W1/W2 experiments (N = 100, d = 100, 10 unshuffled blocks of 10)."""
    n, d, k = 100, 100, 5
    w1 = np.zeros(d)
    w1[:5] = 1.0
    w2 = np.zeros(d)
    w2[-5:] = 1.0
    outlier = np.zeros(n, dtype=bool)
    outlier[9::10] = True   # one per block
    freq = {key: np.zeros(d, dtype=np.int64)
            for key in ("W1_SIS", "W1_two_stage", "W1W2_SIS", "W1W2_two_stage")}
    for _ in range(reps):
        for exp in ("W1", "W1W2"):
            X = rng.normal(size=(n, d))
            noise = np.sqrt(0.1) * rng.normal(size=n)
            y = X @ w1 + noise
            if exp == "W1W2":
                y[outlier] = X[outlier] @ w2 + noise[outlier]
            freq[f"{exp}_SIS"][SIS(k=k).fit(X, y).selected_features_] += 1
            counts = block_support_counts(X, y, n_blocks=10, alpha=LASSO_ALPHA,
                                          shuffle=False, random_state=rng)
            freq[f"{exp}_two_stage"][top_k_random_ties(counts, k, rng)] += 1
    df = pd.DataFrame({"feature": np.arange(1, d + 1), **freq})
    df.to_csv(out / "section3_frequencies.csv", index=False)
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 2, figsize=(10, 6), sharex=True, sharey=True)
    for ax, key in zip(axes.ravel(), freq):
        ax.bar(df["feature"], df[key], width=1.0, color="C0" if "SIS" in key else "C1")
        ax.set_title(f"{key.split('_', 1)[0].replace('W1W2', 'W1/W2')}: "
                     f"{'SIS' if 'SIS' in key else 'two-stage'}")
        ax.set_ylim(0, reps)
    for ax in axes[1]:
        ax.set_xlabel("feature")
    for ax in axes[:, 0]:
        ax.set_ylabel(f"times selected (of {reps})")
    fig.tight_layout()
    fig.savefig(out / "section3_frequencies.png", dpi=110)
    plt.close(fig)
    return df


# ---------------------------------------------------------------------------
# Section 5
# ---------------------------------------------------------------------------

def run_dataset(name, X, y, refs, k_values, variant, trials, rng, sensitivity=1.0):
    """All (method, k, epsilon) cells of one data set and preprocessing variant."""
    rows = []
    n = X.shape[0]
    # X and y are already in [-1, 1] (public bounds, centre 0): scores |X^T y|.
    scores = dpsis_scores(X, y, bounds=(-1.0, 1.0), y_bounds=(-1.0, 1.0))
    n_blocks = max(1, math.isqrt(n))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        counts = [block_support_counts(X, y, n_blocks=n_blocks, alpha=LASSO_ALPHA,
                                       random_state=rng) for _ in range(trials)]
    t_blocks = time.perf_counter() - t0
    for k in k_values:
        ref = refs[k]
        for eps in EPSILONS:
            sel = canonical_lipschitz_top_k(scores, k, epsilon=eps, sensitivity=sensitivity,
                                            random_state=rng, size=trials)
            acc = top_k_accuracy(sel, ref)
            tgg = top_great_good(sel, scores)
            rows.append(dict(dataset=name, variant=variant, method="DP-SIS", k=k, epsilon=eps,
                             mean=acc.mean(), std=acc.std(ddof=1), trials=trials,
                             top=tgg["top"].mean(), great=tgg["great"].mean(),
                             good=tgg["good"].mean(), accs=acc))
            sel = peeling_top_k(scores, k, epsilon=eps, sensitivity=sensitivity,
                                random_state=rng, size=trials)
            acc = top_k_accuracy(sel, ref)
            tgg = top_great_good(sel, scores)
            rows.append(dict(dataset=name, variant=variant, method="DP-SIS (peeling)", k=k,
                             epsilon=eps, mean=acc.mean(), std=acc.std(ddof=1), trials=trials,
                             top=tgg["top"].mean(), great=tgg["great"].mean(),
                             good=tgg["good"].mean(), accs=acc))
            acc = np.array([top_k_accuracy(canonical_lipschitz_top_k(
                c, k, epsilon=eps, sensitivity=1.0, random_state=rng), ref) for c in counts])
            rows.append(dict(dataset=name, variant=variant, method="two-stage", k=k,
                             epsilon=eps, mean=acc.mean(), std=acc.std(ddof=1), trials=trials,
                             top=np.nan, great=np.nan, good=np.nan, accs=acc))
    return rows, t_blocks


def significance(a, b):
    """Welch t-test p-value of mean(a) != mean(b) (nan when both are constant)."""
    if np.std(a) == 0 and np.std(b) == 0:
        return 0.0 if np.mean(a) != np.mean(b) else 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # near-constant samples
        return stats.ttest_ind(a, b, equal_var=False).pvalue


def heatmaps(res, k_label, out, variant):
    import matplotlib.pyplot as plt
    sub = res[(res.variant.isin([variant, "synthetic"])) & (res.k_kind == k_label)]
    datasets = list(dict.fromkeys(sub.dataset))
    diff = np.full((len(datasets), len(EPSILONS)), np.nan)
    sig = np.zeros_like(diff, dtype=bool)
    for i, ds in enumerate(datasets):
        for j, eps in enumerate(EPSILONS):
            a = sub[(sub.dataset == ds) & (sub.epsilon == eps) & (sub.method == "DP-SIS")]
            b = sub[(sub.dataset == ds) & (sub.epsilon == eps) & (sub.method == "two-stage")]
            if len(a) and len(b):
                diff[i, j] = a["mean"].iloc[0] - b["mean"].iloc[0]
                sig[i, j] = significance(a.accs.iloc[0], b.accs.iloc[0]) < 0.05
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(datasets) + 1.6))
    im = ax.imshow(diff, cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
    for i in range(len(datasets)):
        for j in range(len(EPSILONS)):
            if np.isfinite(diff[i, j]):
                ax.text(j, i, f"{diff[i, j]:+.2f}{'*' if sig[i, j] else ''}", ha="center",
                        va="center", fontsize=7,
                        color="white" if abs(diff[i, j]) > 0.6 else "black")
    ax.set_xticks(range(len(EPSILONS)), [str(e) for e in EPSILONS])
    ax.set_yticks(range(len(datasets)), datasets)
    ax.set_xlabel("epsilon")
    kname = "k = 5" if k_label == "5" else "k = floor(log d)  (synthetic: 8)"
    ax.set_title(f"top-k accuracy, DP-SIS minus two-stage ({kname}; {variant} preprocessing)\n"
                 "* Welch t-test p < 0.05", fontsize=9)
    fig.colorbar(im, ax=ax, fraction=0.04)
    fig.tight_layout()
    fname = f"heatmap_k{'5' if k_label == '5' else 'log'}_{variant}.png"
    fig.savefig(out / fname, dpi=110)
    plt.close(fig)
    return diff, sig, datasets


def accuracy_curves(res, out, panels):
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.4), sharey=True)
    for ax, (ds, variant, k) in zip(np.atleast_1d(axes), panels):
        for method, style in [("DP-SIS", "-o"), ("two-stage", "-s"),
                              ("DP-SIS (peeling)", ":^")]:
            sub = res[(res.dataset == ds) & (res.variant == variant) & (res.k == k)
                      & (res.method == method)].sort_values("epsilon")
            se = sub["std"] / np.sqrt(sub.trials)
            ax.errorbar(sub.epsilon, sub["mean"], yerr=1.96 * se, fmt=style, ms=4,
                        label=method, capsize=2)
        ax.set_xscale("log")
        ax.set_title(f"{ds} (k = {k}, {variant})", fontsize=9)
        ax.set_xlabel("epsilon")
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel("top-k accuracy (95% CI)")
    np.atleast_1d(axes)[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "accuracy_curves.png", dpi=110)
    plt.close(fig)


def tgg_figure(res, out, ds, k, variant="paper"):
    import matplotlib.pyplot as plt
    sub = res[(res.dataset == ds) & (res.variant == variant) & (res.k == k)]
    dp = sub[sub.method == "DP-SIS"].sort_values("epsilon")
    fig, ax = plt.subplots(figsize=(5, 3.4))
    for col, style in [("top", "-o"), ("great", "-s"), ("good", "-^")]:
        ax.plot(dp.epsilon, dp[col], style, label=col.upper())
    ax.plot(dp.epsilon, dp["mean"], "k--", label="top-k accuracy vs LASSO")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("epsilon")
    ax.set_ylabel("fraction of 100 trials")
    ax.set_title(f"DP-SIS order statistics on {ds} (k = {k}, {variant})", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "top_great_good.png", dpi=110)
    plt.close(fig)


def speed(out, repeats=5):
    """Time and peak traced memory of the canonical Lipschitz mechanism, d = 1e6."""
    x = np.random.default_rng(0).normal(size=10**6) * 10
    rows = []
    for k in (14,):
        times = []
        for r in range(repeats):
            t = time.perf_counter()
            canonical_lipschitz_top_k(x, k, epsilon=1.0, random_state=r)
            times.append(time.perf_counter() - t)
        tracemalloc.start()
        canonical_lipschitz_top_k(x, k, epsilon=1.0, random_state=0)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        pt = []
        for r in range(repeats):
            t = time.perf_counter()
            peeling_top_k(x, k, epsilon=1.0, random_state=r)
            pt.append(time.perf_counter() - t)
        rows.append(dict(d=x.size, k=k, canonical_lipschitz_median_s=np.median(times),
                         canonical_lipschitz_max_s=np.max(times),
                         peak_traced_MB=peak / 1e6, peak_over_8d=peak / (8 * x.size),
                         peeling_median_s=np.median(pt)))
    df = pd.DataFrame(rows)
    df.to_csv(out / "speed.csv", index=False, float_format="%.4g")
    print(df.to_string(index=False), flush=True)
    return df


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="docs/studies/feature_selection")
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--datasets", nargs="*", default=MICROARRAY)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--skip-section3", action="store_true")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = np.random.SeedSequence(args.seed)
    s3_seed, syn_seed, *ds_seeds = seeds.spawn(2 + len(args.datasets))
    runtime = []
    t_all = time.perf_counter()

    t = time.perf_counter()
    speed(out)
    runtime.append(("speed (d = 1e6, k = 14)", time.perf_counter() - t))

    if not args.skip_section3:
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            df3 = section3(args.reps, np.random.default_rng(s3_seed), out)
        runtime.append((f"section 3 ({args.reps} reps x 2 experiments)",
                        time.perf_counter() - t))
        for key in df3.columns[1:]:
            print(f"{key}: true features 1-5 chosen {df3[key][:5].mean():.1f} of {args.reps} "
                  f"times on average", flush=True)

    rows, info = [], []
    # synthetic data set of Section 5 (reference: true top-k of |w|)
    t = time.perf_counter()
    rng = np.random.default_rng(syn_seed)
    X, y, w = synthetic_section5(rng)
    Xp, yp = paper_preprocess(X, y)
    refs = {k: np.sort(np.argsort(-np.abs(w), kind="stable")[:k]) for k in (5, 8)}
    r, tb = run_dataset("synthetic", Xp, yp, refs, (5, 8), "synthetic", args.trials, rng)
    rows += r
    info.append(dict(dataset="synthetic", n=X.shape[0], d=X.shape[1], classes="-",
                     k_log=8, r2_lasso_0_1=np.nan, nnz_lasso_0_1=np.nan, ref_alpha_k5=np.nan,
                     ref_alpha_klog=np.nan, paper_r2=np.nan))
    runtime.append(("synthetic (all cells)", time.perf_counter() - t))
    print(f"synthetic done in {time.perf_counter() - t:.1f} s", flush=True)

    for name, sd in zip(args.datasets, ds_seeds):
        t = time.perf_counter()
        rng = np.random.default_rng(sd)
        X, y, names = load_microarray(name)
        n, d = X.shape
        k_log = int(math.floor(math.log(d)))
        Xp, yp = paper_preprocess(X, y)
        refs, alphas = {}, {}
        for k in (5, k_log):
            refs[k], alphas[k], first = reference_top_k(Xp, yp, k)
        for variant, (XX, yy) in (("paper", (Xp, yp)), ("private", private_preprocess(X, y))):
            r, tb = run_dataset(name, XX, yy, refs, (5, k_log), variant, args.trials, rng)
            rows += r
            runtime.append((f"{name} {variant}: block LASSO supports", tb))
        coding = ", ".join(f"{lab}={v:g}" for lab, v in zip(
            names, sorted(set(y))))
        info.append(dict(dataset=name, n=n, d=d, classes=coding, k_log=k_log,
                         r2_lasso_0_1=first[0], nnz_lasso_0_1=first[1],
                         ref_alpha_k5=alphas[5], ref_alpha_klog=alphas[k_log],
                         paper_r2=PAPER_R2.get(name, np.nan)))
        runtime.append((f"{name} (all cells)", time.perf_counter() - t))
        print(f"{name} ({n} x {d}) done in {time.perf_counter() - t:.1f} s", flush=True)

    res = pd.DataFrame(rows)
    res["k_kind"] = np.where(res.k == 5, "5", "log")
    res.drop(columns=["accs"]).to_csv(out / "results.csv", index=False, float_format="%.4f")
    pd.DataFrame(info).to_csv(out / "datasets.csv", index=False, float_format="%.4f")

    summary = []
    for variant in ("paper", "private"):
        for k_label in ("5", "log"):
            diff, sig, dsets = heatmaps(res, k_label, out, variant)
            for i, ds in enumerate(dsets):
                for j, eps in enumerate(EPSILONS):
                    summary.append(dict(variant=variant if ds != "synthetic" else "synthetic",
                                        k=k_label, dataset=ds, epsilon=eps,
                                        dpsis_minus_two_stage=diff[i, j],
                                        significant=bool(sig[i, j])))
    summ = pd.DataFrame(summary).drop_duplicates(["variant", "k", "dataset", "epsilon"])
    summ.to_csv(out / "differences.csv", index=False, float_format="%.3f")
    accuracy_curves(res, out, [("christensen", "paper", 5), ("sorlie", "paper", 5),
                               ("synthetic", "synthetic", 8)])
    if "chowdary" in args.datasets:
        tgg_figure(res, out, "chowdary", 10)
    runtime.append(("total", time.perf_counter() - t_all))
    pd.DataFrame(runtime, columns=["stage", "seconds"]).to_csv(
        out / "runtime.csv", index=False, float_format="%.1f")
    print(pd.DataFrame(runtime, columns=["stage", "seconds"]).to_string(index=False))


if __name__ == "__main__":
    main()
