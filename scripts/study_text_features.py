"""Study: private text features in a pipeline against the hashed main job, at one total budget.

Every configuration trains ``DPNBLogisticClassifier`` (defaults, ``delta`` share of
1e-5, ``n_samples_public`` the training size, ``classes`` declared) on features of
raw documents, at a total ``epsilon`` (default 1) and ``delta = 1e-5``:

* ``hashed``: the command line's features (``HashingVectorizer``, 2^20 binary
  uni+bigram columns, nothing fitted) and the model at the whole budget (the main
  job, ``python -m dptoolkit train --data ... --epsilon 1``);
* ``private``: ``DPTfidfVectorizer(vocabulary="private")`` then the model, in
  ``dptoolkit.pipeline.make_pipeline(..., epsilon=epsilon, delta=1e-5)``, which
  splits the total between the two (equal shares of delta, epsilon shares scaled
  until the accountant's figure for the composition is the total);
* ``public``: ``DPTfidfVectorizer(public_vocabulary(n_words))`` (no idf: it
  releases nothing) and the model at the whole budget; ``public_idf``: the same
  with private idf, the budget split by the pipeline.

Documents are read from the archives in ``$DPTOOLKIT_DATA/text`` as the toolkit's
loaders read them (latin-1): ``imdb`` (25,000 / 25,000), ``news20`` (comp.* = 1 vs
rec.* = 0, "bydate" split) and ``r8`` (Reuters-21578 ModApte, single-topic
documents of the 8 R8 topics, 8 classes).  Output: one CSV row per fit appended to
``<out>/text_features.csv``.  From the repository root::

    nice -n 10 python scripts/study_text_features.py --dataset news20 \
        --configs hashed private public --seeds 0 1
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import csv  # noqa: E402
import html  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import tarfile  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

DELTA = 1e-5
R8 = ("acq", "crude", "earn", "grain", "interest", "money-fx", "ship", "trade")
FIELDS = ("dataset", "config", "epsilon", "vectorizer_epsilon", "max_terms", "ngram_max", "use_idf",
          "n_words", "seed", "n_features", "accuracy", "eps_spent", "delta_spent", "commit")


def _archive(name):
    from dptoolkit.datasets import get_data_path

    return Path(get_data_path()) / "text" / name


def _read_members(archive, keep):
    out = []
    with tarfile.open(archive, "r:*") as tar:
        for member in tar:
            if member.isfile():
                label = keep(member.name)
                if label is not None:
                    out.append((member.name, label,
                                tar.extractfile(member).read().decode("latin-1")))
    return out


def _split(rows, subset_of):
    parts = {"train": ([], []), "test": ([], [])}
    for name, label, text in sorted(rows):
        docs, ys = parts[subset_of(name)]
        docs.append(text)
        ys.append(label)
    return [(docs, np.asarray(ys)) for docs, ys in (parts["train"], parts["test"])]


def load(dataset):
    """``((train_docs, y_train), (test_docs, y_test)), classes``."""
    if dataset == "imdb":
        pat = re.compile(r"aclImdb/(train|test)/(neg|pos)/[^/]+\.txt$")

        def keep(n):
            m = pat.search(n)
            return None if m is None else int(m.group(2) == "pos")
        rows = _read_members(_archive("aclImdb-train-test.tar.xz"), keep)
        return _split(rows, lambda n: pat.search(n).group(1)), [0, 1]
    if dataset == "news20":
        pat = re.compile(r"20news-bydate-(train|test)/([^/]+)/[^/]+$")

        def keep(n):
            m = pat.search(n)
            if m is None or not m.group(2).startswith(("comp.", "rec.")):
                return None
            return int(m.group(2).startswith("comp."))
        rows = _read_members(_archive("20news-bydate.tar.xz"), keep)
        return _split(rows, lambda n: pat.search(n).group(1)), [0, 1]
    if dataset == "r8":
        return _load_r8(), list(range(len(R8)))
    raise SystemExit(f"unknown dataset {dataset!r}")


def _load_r8():
    rows = []
    reuters = re.compile(r"<REUTERS([^>]*)>(.*?)</REUTERS>", re.S)
    with tarfile.open(_archive("reuters21578.tar.xz"), "r:*") as tar:
        for member in tar:
            if not re.search(r"reut2-\d+\.sgm$", member.name):
                continue
            text = tar.extractfile(member).read().decode("latin-1")
            for i, (attrs, body) in enumerate(reuters.findall(text)):
                split = re.search(r'LEWISSPLIT="(\w+)"', attrs)
                split = split and split.group(1)
                if 'TOPICS="YES"' not in attrs or split not in ("TRAIN", "TEST"):
                    continue
                block = re.search(r"<TOPICS>(.*?)</TOPICS>", body, re.S)
                topics = re.findall(r"<D>(.*?)</D>", block.group(1)) if block else []
                if len(topics) != 1 or topics[0] not in R8:
                    continue
                title = re.search(r"<TITLE>(.*?)</TITLE>", body, re.S)
                main = re.search(r"<BODY>(.*?)</BODY>", body, re.S)
                doc = " ".join(html.unescape(m.group(1)) for m in (title, main) if m)
                rows.append((f"{member.name}:{i:05d}", R8.index(topics[0]), doc,
                             "train" if split == "TRAIN" else "test"))
    parts = {"train": ([], []), "test": ([], [])}
    for _, label, doc, part in sorted(rows):
        parts[part][0].append(doc)
        parts[part][1].append(label)
    return [(d, np.asarray(y)) for d, y in (parts["train"], parts["test"])]


def make(config, args, n, classes, seed):
    from sklearn.feature_extraction.text import HashingVectorizer

    from dptoolkit.feature_extraction import DPTfidfVectorizer, public_vocabulary
    from dptoolkit.linear_model import DPNBLogisticClassifier
    from dptoolkit.pipeline import make_pipeline

    eps = args.epsilon

    def model(e, d):
        return DPNBLogisticClassifier(epsilon=e, delta=d, n_samples_public=n,
                                      classes=classes, random_state=seed)
    ngrams = (1, args.ngram_max)
    if config == "hashed":
        vec = HashingVectorizer(n_features=2**20, ngram_range=(1, 2), binary=True, norm=None,
                                alternate_sign=False, dtype=np.float64)
        return make_pipeline(vec, model(eps, DELTA))
    if config == "private":
        vec = DPTfidfVectorizer(use_idf=args.use_idf, max_terms_per_document=args.max_terms,
                                ngram_range=ngrams, n_samples_public=n, random_state=seed)
        return make_pipeline(vec, model(None, None), epsilon=eps, delta=DELTA)
    words = public_vocabulary(args.n_words)
    if config == "public":
        vec = DPTfidfVectorizer(words, epsilon=eps, delta=DELTA, use_idf=False,
                                n_samples_public=n)
        return make_pipeline(vec, model(eps, DELTA))
    vec = DPTfidfVectorizer(words, use_idf=True, max_terms_per_document=args.max_terms,
                            n_samples_public=n, random_state=seed)
    return make_pipeline(vec, model(None, None), epsilon=eps, delta=DELTA)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="news20", choices=("news20", "r8", "imdb"))
    ap.add_argument("--configs", nargs="+", default=["hashed", "private", "public"],
                    choices=("hashed", "private", "public", "public_idf"))
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--max-terms", type=int, default=256)
    ap.add_argument("--ngram-max", type=int, default=1)
    ap.add_argument("--use-idf", action="store_true")
    ap.add_argument("--n-words", type=int, default=20000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--out", default="docs/studies/text_features")
    args = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    ((docs, y), (docs_te, y_te)), classes = load(args.dataset)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "text_features.csv"
    new = not path.exists()
    with open(path, "a", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        if new:
            writer.writeheader()
        for config in args.configs:
            for seed in args.seeds:
                pipe = make(config, args, len(docs), classes, seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pipe.fit(docs, y)
                    acc = float(np.mean(pipe.predict(docs_te) == y_te))
                spent = pipe.privacy_spent_ or (None, None)
                row = dict(dataset=args.dataset, config=config, epsilon=args.epsilon,
                           vectorizer_epsilon=(round(pipe.budget_split_[0][1], 4)
                                               if config in ("private", "public_idf") else ""),
                           max_terms=args.max_terms, ngram_max=args.ngram_max,
                           use_idf=args.use_idf, n_words=args.n_words, seed=seed,
                           n_features=int(pipe[-1].n_features_in_),
                           accuracy=round(acc, 4),
                           eps_spent=None if spent[0] is None else round(spent[0], 4),
                           delta_spent=spent[1], commit=commit)
                writer.writerow(row)
                fh.flush()
                print(row, flush=True)


if __name__ == "__main__":
    main()
