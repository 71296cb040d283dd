"""A new private estimator is found, not listed.

The toy private mean of the architecture page (tests/_private_mean_example.py,
written as its constraints, plan and work) is declared public here with one class
attribute, ``_public_estimator = True``; then, with no list edited anywhere:

- :func:`dptoolkit._discovery.all_estimators` finds it (and not the undeclared
  example class, nor a subclass that does not declare itself);
- the command line (``python -m dptoolkit``) lists it as ``--model private-mean``,
  with options generated from its constraint table, and trains it in-process;
- :func:`dptoolkit.save_model` / :func:`dptoolkit.load_model` round-trip it
  without ``trusted=``;
- the contract checks of tests/test_private_contract.py run on it (their generic
  case).

And the command line's options are generated from the constraint tables: types,
choices and ranges as declared, names from the parameter names.  Every check is
exact (no statistics): tiny synthetic data, fixed seeds.
"""
import argparse
import warnings

import numpy as np
import pytest

import _private_mean_example as example
from dptoolkit import load_model, save_model
from dptoolkit._discovery import all_estimators, cli_name, trusted_types
from dptoolkit._persistence import untrusted_types
from dptoolkit.cli import _models
from dptoolkit.cli._parser import build_parser
from test_cli import _run


class PrivateMean(example.PrivateMean):
    """The worked example's private mean, declared public (found, not listed)."""

    _public_estimator = True


class _Undeclared(PrivateMean):
    """A subclass does not inherit the declaration."""


# imported after the declaration: the contract's case list is built on import
import test_private_contract as contract  # noqa: E402
from test_private_contract import spies  # noqa: E402,F401 (the contract's spies fixture)


def _data(n=50, d=6):
    rng = np.random.default_rng(0)
    return rng.uniform(-0.3, 0.3, size=(n, d))


# ------------------------------------------------------------------ discovery
def test_all_estimators_finds_the_declared_toy_only():
    found = dict(all_estimators())
    assert found.get("PrivateMean") is PrivateMean
    assert example.PrivateMean not in found.values()     # not declared public
    assert _Undeclared not in found.values()              # not inherited
    assert "PrivateMean" not in dict(all_estimators("classifier"))


def test_command_line_names():
    from dptoolkit.linear_model import DPSGDClassifier, DPSGDRegressor

    assert cli_name(PrivateMean) == "private-mean"        # derived from the class name
    assert cli_name(DPSGDClassifier) == "dp-sgd"          # declared (_cli_name)
    assert cli_name(DPSGDRegressor) is None               # not a model of the CLI
    assert cli_name(example.PrivateMean) is None


def test_trusted_types_are_discovered():
    names = trusted_types()
    assert f"{PrivateMean.__module__}.PrivateMean" in names
    # every discovered estimator, by the name skops writes (module and class)
    assert {f"{c.__module__}.{c.__name__}" for _, c in all_estimators()} <= set(names)
    assert "dptoolkit.accounting.events.GaussianEvent" in names
    # only dptoolkit's discovered types and the registered estimator: nothing else
    assert f"{example.__name__}.PrivateMean" not in names
    assert not [n for n in names if not (n.startswith("dptoolkit.")
                                         or n == f"{PrivateMean.__module__}.PrivateMean")]


# --------------------------------------------------------------- persistence
def test_save_load_round_trip_without_trusted(tmp_path):
    est = PrivateMean(epsilon=1.0, n_samples_public=50, random_state=0).fit(_data())
    path = save_model(est, tmp_path / "mean.skops")
    assert untrusted_types(path) == []
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.mean_, est.mean_)
    assert loaded.privacy_event_ == est.privacy_event_
    assert loaded.privacy_spent_ == est.privacy_spent_


def test_an_undeclared_estimator_is_still_refused(tmp_path):
    est = _Undeclared(epsilon=1.0, n_samples_public=50, random_state=0).fit(_data())
    path = save_model(est, tmp_path / "undeclared.skops")
    with pytest.raises(ValueError, match="not trusted"):
        load_model(path)


# -------------------------------------------------------------- command line
def test_the_parser_lists_the_toy_with_options_from_its_constraints():
    assert "private-mean" in _models.model_names()
    spec = _models.models()["private-mean"]
    assert spec.cls is PrivateMean and not spec.multiclass and not spec.dask
    assert set(spec.params) == {"data_norm", "neighbouring", "n_samples_public",
                                "clip_data"}
    parser = build_parser()
    args = parser.parse_args(["train", "--model", "private-mean", "--epsilon", "1",
                              "--data-norm", "2.5", "--no-clip-data",
                              "--neighbouring", "replace_one"])
    assert (args.data_norm, args.clip_data, args.neighbouring) == (
        2.5, False, "replace_one")
    est = _models.build_model(args)
    assert isinstance(est, PrivateMean)
    assert est.get_params()["data_norm"] == 2.5 and est.clip_data is False
    assert est.epsilon == 1.0


def test_the_help_lists_the_toy(capsys):
    status, out, _ = _run(["train", "--help"], capsys)
    assert status == 0
    assert "private-mean" in out and "PrivateMean" in out


def test_train_the_toy_from_the_command_line(tmp_path, capsys):
    saved = tmp_path / "mean.skops"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # the seed warning, clipping
        status, out, err = _run(["train", "--model", "private-mean", "--epsilon", "1",
                                 "--synthetic-samples", "200", "--synthetic-features",
                                 "20", "--seed", "0", "--save", saved], capsys)
    assert status == 0, err
    assert "model: private-mean (PrivateMean)" in out
    assert "no predictions to score" in out
    loaded = load_model(saved)                  # no trusted=
    assert isinstance(loaded, PrivateMean) and loaded.mean_.shape == (20,)
    assert loaded.privacy_spent_[0] == pytest.approx(1.0, rel=1e-6)


def test_an_option_of_another_model_is_refused_for_the_toy(capsys):
    status, _, err = _run(["train", "--model", "private-mean", "--epsilon", "1",
                           "--l1-bound", "5"], capsys)
    assert status == 2 and "--l1-bound does not apply to --model private-mean" in err


# ------------------------------------------ options from the constraint tables
@pytest.mark.parametrize("argv,message", [
    (["--model", "frank-wolfe", "--l1-bound", "-1"], "a float in (0, inf)"),
    (["--model", "frank-wolfe", "--max-iter", "0"], "an int in [1,"),
    (["--model", "frank-wolfe", "--max-iter", "2.5"], "an int in [1,"),
    (["--model", "frank-wolfe", "--solver", "slow"], "invalid choice: 'slow'"),
    (["--model", "private-mean", "--data-norm", "0"], "a float in (0, inf)"),
])
def test_generated_options_check_types_and_ranges(argv, message, capsys):
    status, _, err = _run(["train", "--epsilon", "1", *argv], capsys)
    assert status == 2 and message in err, err


def test_every_parameter_of_every_model_is_an_option_named_after_it():
    parser = build_parser()
    train = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flags = {f for a in train.choices["train"]._actions for f in a.option_strings}
    for name, spec in _models.models().items():
        for param in spec.params:
            assert "--" + param.replace("_", "-") in flags, (name, param)


def test_generated_values_keep_their_types():
    parser = build_parser()
    args = parser.parse_args(["train", "--model", "frank-wolfe", "--epsilon", "1",
                              "--l1-bound", "5", "--max-iter", "30", "--refresh-tol", "inf"])
    assert args.l1_bound == 5.0 and isinstance(args.l1_bound, float)
    assert args.max_iter == 30 and isinstance(args.max_iter, int)
    assert args.refresh_tol == float("inf")
    args = parser.parse_args(["train", "--epsilon", "1", "--max-iter", "auto"])
    assert args.max_iter == "auto"


# ------------------------------------------------------------------ contract
@pytest.mark.parametrize("composition", ["basic", "events"])
def test_the_contract_checks_run_on_the_toy(composition, spies):  # noqa: F811
    case = contract.generic_case(PrivateMean)
    contract.test_private_fit_reports_event_and_spend(case)
    contract.test_insufficient_accountant_refuses_before_any_work(case, composition, spies)
    contract.test_sufficient_accountant_is_charged_once(case, composition, spies)
    contract.test_accountant_must_be_an_accountant(case, spies)
    contract.test_plan_spend_on_a_zero_stand_in_matches_the_fit(case, spies)


def test_the_contract_cases_include_the_toy():
    # (tests/test_private_contract.py, collected after this file, runs every check
    # on these cases)
    assert "PrivateMean" in [c.name for c in contract.discovered_cases()]


def test_the_public_n_cases_include_the_toy():
    import test_public_n

    case = next(c for c in test_public_n.discovered_cases() if c.cls is PrivateMean)
    test_public_n.test_public_n_decides_everything_but_the_model(case)
    test_public_n.test_n_from_the_data_warns(case)


def test_the_help_is_plain_text_from_the_docstrings(capsys):
    status, out, _ = _run(["train", "--help"], capsys)
    assert status == 0
    assert not [s for s in (":math:", "``", "\\", ":class:") if s in out]
    pytest.importorskip("numpydoc")     # the sentences come from the numpydoc entries
    text = " ".join(out.split())
    assert "Radius lambda > 0 of the L1 ball: one of 'auto' or a float in (0, inf)" in text


def test_default_search_grids_name_parameters_of_their_models():
    """The search's default grids name parameters of their models (a renamed
    parameter must rename its grid too)."""
    import inspect

    for name, grid in _models.SEARCH_GRIDS.items():
        params = inspect.signature(_models.models()[name].cls).parameters
        assert set(grid) <= set(params), (name, set(grid) - set(params))
    assert set(_models.SEARCH_GRIDS) <= set(_models.searchable())
