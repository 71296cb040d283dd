"""Command line of dptoolkit: ``python -m dptoolkit`` (or ``dptoolkit``).

Subcommands
-----------
``train``
    Fit a classifier (``--model``), privately with ``--epsilon E`` or without
    privacy with ``--non-private`` (one of the two is required), on a LIBSVM
    file, a text corpus (folder, tar archive or ``label<TAB>text`` file, hashed
    to binary features) or, without ``--data``, a synthetic sparse problem;
    print the model's test accuracy, AUC and non-zeros and the privacy
    guarantee; optionally ``--save`` the model (skops) and write a JSON
    ``--report``.
``predict``
    Load a saved model and write its predictions on ``--data`` (CSV).
``evaluate``
    Load a saved model and print its accuracy and AUC on ``--data``
    (optionally a JSON ``--report``).
``account``
    Print the (epsilon, delta) guarantee, and how it is spent, of a model
    configuration for a dataset of a given size, without any data.

Every argument is checked before any data is read; usage errors exit with
status 2 and a message naming the option, and so do options the data turn out
to contradict (a label outside ``--classes``, a feature index above
``--n-features``, a ``--positive`` group the corpus lacks, data unlike a saved
model's); data that cannot be read exit with status 1.  Options an estimator takes are
passed to it only when given, so the defaults are the estimators' own (shown
by ``--help``).  The report follows ``dptoolkit/cli/report_schema.json``.

Privacy of the command line itself (``train``): the guarantee covers the
released model, trained on the training examples, under the estimator's
neighbouring relation (add/remove by default).  The output and the report hold
only public quantities (the feature dimension ``--n-features``, the declared
classes, ``--n-samples-public``, delta from ``--delta`` or an estimator's
default, the split's seed and size) and released figures (the model's metrics
on the held-out examples, what a search or a selection releases).  The noise
comes from fresh OS entropy unless ``--seed`` is given (then a
:class:`~dptoolkit.exceptions.PrivacyLeakWarning` says that it is
reproducible).  Figures computed from the training data without privacy are
printed only with ``--nonprivate-stats`` (or for a non-private fit), labelled as
outside the guarantee, and in the report's ``outside_guarantee`` section only;
see ``dptoolkit.cli._data`` for the dimension, the label set and the split.
"""
import sys
import warnings

from .._private import fixed_noise_warning_scope
from ._commands import (DataError, UsageError, _account, _check_model_options, _evaluate,
                        _predict, _train)
from ._models import DEFAULT_MODEL
from ._parser import build_parser

__all__ = [
    "main",
]


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings on the command line: the category and the message, no source line."""
    from .._private import DATA_DEPENDENT_NOTE
    from ..exceptions import DataClippedWarning

    text = str(message)
    if "n_samples_public" in text:
        text += "  (Command line: --n-samples-public N.)"
    if issubclass(category, DataClippedWarning) and DATA_DEPENDENT_NOTE not in text:
        text += "  " + OUTSIDE_NOTICE
    print(f"warning ({category.__name__}): {text}", file=file or sys.stderr)


#: The label of a warning computed from the training data (e.g. how many examples an
#: estimator clipped): such a notice is not covered by the guarantee.
OUTSIDE_NOTICE = "(a notice computed from the training data: outside the guarantee)"

_COMMANDS = {"train": _train, "predict": _predict, "evaluate": _evaluate,
             "account": _account}


def main(argv=None):
    """Entry point of ``python -m dptoolkit`` and the ``dptoolkit`` script.

    Parameters
    ----------
    argv : list of str or None
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 on success, 2 for a bad command line (reported before
        any data is read where it can be) or data that contradict an option or
        do not fit the model (the option is named), 1 for data that cannot be
        read and other errors.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    from ..exceptions import BudgetExceededError

    try:
        if args.command in ("train", "account"):
            _check_model_options(args)
        # a command is one process from a shell: its own once-per-process seed warning
        with warnings.catch_warnings(), fixed_noise_warning_scope():
            warnings.showwarning = _show_warning    # restored on exit
            return _COMMANDS[args.command](args)
    except UsageError as exc:
        parser.exit(2, f"{parser.prog} {args.command}: error: {exc}\n")
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except DataError as exc:
        print(f"{parser.prog} {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, BudgetExceededError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
