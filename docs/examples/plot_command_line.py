"""
The command line, end to end: train, save, report, evaluate
============================================================

``python -m dptoolkit`` (also installed as ``dptoolkit``) trains a private
classifier on a text corpus or a LIBSVM file, prints its held-out accuracy and
its privacy guarantee, saves the model and writes a JSON report; ``evaluate``
and ``predict`` use the saved model later, and ``account`` says what a
configuration would guarantee without reading any data.

This tutorial runs every step on a small corpus written by the script itself,
in the ``label<TAB>text`` format the command line reads.  Each call goes
through :func:`dptoolkit.cli.main`, which takes the same arguments as the shell
command printed above its output (``$ python -m dptoolkit ...``).
"""

import contextlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from dptoolkit import load_model
from dptoolkit.cli import main


# The files of this tutorial live in a temporary folder, the working directory
# of every command below.
workdir = Path(tempfile.mkdtemp(prefix="dptoolkit-cli-"))


def dptoolkit(*args):
    """Run ``python -m dptoolkit ARGS`` in ``workdir``; its warnings go to stdout."""
    print("$ python -m dptoolkit", " ".join(args))
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        with contextlib.redirect_stderr(sys.stdout):
            status = main(list(args))
    except SystemExit as exc:  # usage errors leave through argparse's exit
        status = exc.code
    finally:
        os.chdir(cwd)
    print(f"(exit status {status})\n")
    return status


# %%
# A small corpus
# --------------
# 6,000 short "reviews": words drawn from a Zipf-like vocabulary of 3,000 filler
# words, plus a few sentiment words that lean towards the label (a positive
# review holds on average two positive and 0.7 negative cue words).  One example
# a line, ``label<TAB>text``.
rng = np.random.default_rng(0)
filler = np.array([f"w{i}" for i in range(3000)])
freq = 1.0 / np.arange(1, filler.size + 1)
freq /= freq.sum()
cues = {"pos": ["great", "excellent", "loved", "wonderful", "best"],
        "neg": ["awful", "boring", "worst", "terrible", "waste"]}
with open(workdir / "reviews.tsv", "w") as f:
    for _ in range(6000):
        label, other = ("pos", "neg") if rng.random() < 0.5 else ("neg", "pos")
        words = list(rng.choice(filler, size=rng.integers(20, 60), p=freq))
        words += list(rng.choice(cues[label], size=rng.poisson(2.0)))
        words += list(rng.choice(cues[other], size=rng.poisson(0.7)))
        rng.shuffle(words)
        f.write(f"{label}\t{' '.join(words)}\n")
print((workdir / "reviews.tsv").read_text()[:120], "...")

# %%
# What would a configuration guarantee?
# -------------------------------------
# ``account`` needs no data: the guarantee of the default model at epsilon = 1
# for 4,500 training examples and 2^20 hashed features, and how it is spent
# (the noise multipliers of the Gaussian release and of the DP-SGD steps).
dptoolkit("account", "--n-samples", "4500", "--n-features", "1048576",
          "--epsilon", "1")

# %%
# Train, save, report
# -------------------
# ``train`` hashes the words (1- and 2-grams) to 2^20 binary features with a
# fixed hash function, which reveals nothing about the corpus, holds out about a
# quarter of the examples (each by a keyed hash of its features, so the split
# needs no count of the data), fits the default model (``--model default``, the
# private naive-Bayes-scaled logistic regression), and prints the held-out
# accuracy and the guarantee.
#
# Everything the guarantee relies on is declared, so nothing is read from the
# data: ``--positive``/``--negative`` name the label set, ``--n-samples-public``
# the number of training examples (a public figure: without it the command
# warns that N was read from the data).  No ``--seed``: the noise comes from
# fresh OS entropy, as it must for a model that is released, so the figures
# below change from one build of this page to the next.  Half of the reviews
# are positive, so 0.5 is what guessing achieves.
status = dptoolkit("train", "--data", "reviews.tsv", "--positive", "pos",
                   "--negative", "neg", "--epsilon", "1",
                   "--n-samples-public", "4500",
                   "--save", "model.skops", "--report", "train.json")
assert status == 0

# %%
# The report follows the JSON schema shipped with the package
# (``dptoolkit/cli/report_schema.json``): the data's public description, the model
# and its hyperparameters, the held-out metrics and the guarantee, with the
# privacy event as a tree.
report = json.loads((workdir / "train.json").read_text())
print("sections:", list(report))
print("metrics:", report["metrics"])
print("privacy_spent:", report["privacy"]["privacy_spent"])
print("privacy event:", report["privacy"]["privacy_event"]["type"], "of",
      [e["type"] for e in report["privacy"]["privacy_event"]["events"]])

# %%
# Evaluate the saved model
# ------------------------
# ``evaluate`` loads the model (a `skops <https://skops.readthedocs.io>`_ file,
# read without executing arbitrary code) and scores it on the same held-out
# part: ``--test-size`` and ``--split-seed`` default to the values ``train``
# used, so the split is the same.  The saved model carries the public
# description of the data it takes (the hashing, the label set and the task),
# so the label options need not be repeated, and data of another description
# is refused.
status = dptoolkit("evaluate", "--model-file", "model.skops", "--data", "reviews.tsv",
                   "--report", "evaluate.json")
assert status == 0
evaluation = json.loads((workdir / "evaluate.json").read_text())
assert evaluation["metrics"]["accuracy"] == report["metrics"]["accuracy"]
print("accuracy at training time and from the saved model:",
      report["metrics"]["accuracy"], evaluation["metrics"]["accuracy"])

# %%
# Predict, and the model in Python
# --------------------------------
# ``predict`` writes one line per example (index, predicted label, score) as CSV.
dptoolkit("predict", "--model-file", "model.skops", "--data", "reviews.tsv",
          "--output", "predictions.csv")
print("\n".join((workdir / "predictions.csv").read_text().splitlines()[:4]))

# %%
# The saved file is an ordinary fitted estimator, with its guarantee attached:
# :func:`dptoolkit.load_model` reads it with the same trust rule as
# ``evaluate`` (only dptoolkit's own types and those skops trusts by default),
# and :func:`dptoolkit.save_model` writes one from Python.
model = load_model(workdir / "model.skops")
print(type(model).__name__, model.privacy_spent_,
      f"{np.count_nonzero(model.coef_)} non-zeros")
print("data it takes:", model.data_description_["featurisation"]["kind"],
      "| classes", model.data_description_["classes"])

# %%
# Errors name the option
# ----------------------
# Every argument is checked before any data is read; a missing file or an
# option that does not apply to the chosen model stops with exit status 2 and a
# message that names the option (a value out of range, such as
# ``--epsilon -1``, is refused the same way).
for bad in (["--data", "missing.tsv", "--epsilon", "1"],
            ["--data", "reviews.tsv", "--epsilon", "1", "--l1-bound", "5"]):
    assert dptoolkit("train", *bad) == 2

shutil.rmtree(workdir)
