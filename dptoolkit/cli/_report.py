"""Metrics and the JSON report of ``train`` / ``evaluate``.

The report follows ``dptoolkit/cli/report_schema.json`` (JSON Schema draft 2020-12),
:data:`SCHEMA_VERSION`.
"""
import datetime
import json
import math
import numbers
from importlib import resources

import numpy as np

from ..accounting.events import PrivacyEvent, event_to_dict

__all__ = ["SCHEMA_VERSION", "load_schema", "event_to_dict", "to_jsonable", "metrics",
           "model_coef", "privacy_section", "build_report", "write_report"]

SCHEMA_VERSION = "2.0"


def load_schema():
    """The report's JSON schema (a dict), shipped as ``dptoolkit/cli/report_schema.json``."""
    text = resources.files("dptoolkit.cli").joinpath("report_schema.json").read_text(
        encoding="utf-8")
    return json.loads(text)


def _number(x):
    """A finite float, or the strings "inf", "-inf", "nan" (JSON has no such numbers)."""
    x = float(x)
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def to_jsonable(value):
    """``value`` as JSON-compatible data (events, estimators and arrays included)."""
    if isinstance(value, PrivacyEvent):
        return event_to_dict(value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return _number(value)
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if hasattr(value, "get_params"):
        return {"class": type(value).__name__,
                "hyperparameters": to_jsonable(value.get_params(deep=False))}
    if hasattr(value, "rvs"):  # a scipy distribution of a search grid
        return repr(value)
    return repr(value)


def model_coef(model):
    """The fitted weights over the input features, shape (n_rows, n_features).

    Meta-estimators: a search's best model; select-then-fit's model expanded
    from the selected columns (zeros elsewhere).
    """
    if hasattr(model, "best_estimator_"):
        return model_coef(model.best_estimator_)
    if hasattr(model, "support_") and hasattr(model, "estimator_"):
        inner = np.atleast_2d(model_coef(model.estimator_))
        full = np.zeros((inner.shape[0], model.support_.size))
        full[:, np.flatnonzero(model.support_)] = inner
        return full
    return np.atleast_2d(np.asarray(model.coef_, dtype=np.float64))


def metrics(model, X, y):
    """Accuracy, AUC (binary: of the decision function; multiclass: one-vs-rest of
    the probabilities when available, else None) and counts.

    Returns
    -------
    dict
    """
    from sklearn.metrics import accuracy_score, roc_auc_score

    pred = model.predict(X)
    out = {"accuracy": float(accuracy_score(y, pred)), "auc": None,
           "n_samples": int(X.shape[0])}
    classes = getattr(model, "classes_", None)
    present = np.unique(y)
    try:
        if classes is not None and len(classes) == 2 and present.size == 2:
            out["auc"] = float(roc_auc_score(y == classes[1], model.decision_function(X)))
        elif classes is not None and len(classes) > 2 and hasattr(model, "predict_proba") \
                and set(present.tolist()) == set(np.asarray(classes).tolist()):
            out["auc"] = float(roc_auc_score(y, model.predict_proba(X), multi_class="ovr",
                                             labels=classes))
    except (AttributeError, ValueError):
        out["auc"] = None
    out["n_nonzero"] = int(np.count_nonzero(model_coef(model)))
    return out


def privacy_section(model, model_name, bound, *, noise=None, delta=None):
    """The guarantee of a fitted model: spend, event, relation, public quantities.

    Parameters
    ----------
    model : fitted estimator
    model_name : str
    bound : str or None
        The public bound on every example.
    noise : str or None
        Where the noise seed came from (train only).
    delta : str or None
        Where delta came from (train only).

    Returns
    -------
    dict
    """
    spent = getattr(model, "privacy_spent_", None)
    event = getattr(model, "privacy_event_", None)
    params = model.get_params(deep=False)
    inner = params.get("estimator")
    relation = params.get("neighbouring")
    if relation is None and inner is not None:
        relation = inner.get_params(deep=False).get("neighbouring")
    n_public = params.get("n_samples_public")
    if n_public is None and inner is not None:
        n_public = inner.get_params(deep=False).get("n_samples_public")
    if model_name == "search":
        relation = "add_remove"  # the search is stated for add/remove neighbours
    section = {
        "private": spent is not None,
        "privacy_spent": None if spent is None else [_number(spent[0]), _number(spent[1])],
        "privacy_event": event_to_dict(event),
        "neighbouring": relation or "add_remove",
        "public_bounds": bound,
        "n_samples_public": n_public,
        "accountant": ("none (the fit's own guarantee; no budget ledger was passed)"
                       if getattr(model, "accountant", None) is None
                       else type(model.accountant).__name__),
        "covers": ("the released model (coef_ and its other fitted attributes), trained "
                   "on the training examples; the metrics are computed exactly on the "
                   "held-out examples, which the guarantee does not protect"),
    }
    if noise is not None:
        section["noise"] = noise
    if delta is not None:
        section["delta_source"] = delta
    return section


def build_report(*, command, data, model, model_name, metrics_, bound, timings=None,
                 extra=None, noise=None, delta=None, outside_guarantee=None):
    """The report dict (see ``report_schema.json``).

    Parameters
    ----------
    command : {"train", "evaluate"}
    data : dict
        Public description of the data: source, path, description, split,
        n_features, classes.
    model : fitted estimator
    model_name : str
    metrics_ : dict
        Released figures: metrics of the model on the evaluation data.
    bound : str or None
    timings : dict or None
        ``evaluate`` only (a training run's timings depend on the training data
        and go to ``outside_guarantee``).
    extra : dict or None
        Top-level fields (``saved_model``, ``model_file``).
    noise, delta : str or None
        See :func:`privacy_section`.
    outside_guarantee : dict or None
        Figures computed from the training data without privacy
        (``--nonprivate-stats``, or a non-private fit); the report's only
        section that holds them.

    Returns
    -------
    dict
    """
    from .. import __version__

    report = {
        "schema_version": SCHEMA_VERSION,
        "command": command,
        "dptoolkit_version": __version__,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "data": to_jsonable(data),
        "model": {
            "name": model_name,
            "class": type(model).__name__,
            "hyperparameters": to_jsonable(model.get_params(deep=False)),
            "n_iter": to_jsonable(getattr(getattr(model, "best_estimator_", model),
                                          "n_iter_", None)),
            "n_features_in": int(model.n_features_in_),
        },
        "metrics": to_jsonable(metrics_),
        "privacy": privacy_section(model, model_name, bound, noise=noise, delta=delta),
    }
    if timings is not None:
        report["timings"] = {k: float(v) for k, v in timings.items()}
    if hasattr(model, "best_params_"):      # a private search: what it released
        # (the number of runs is not released: the search's guarantee covers the
        # best run with that number hidden)
        report["model"]["best_params"] = to_jsonable(model.best_params_)
    if hasattr(model, "support_"):          # select-then-fit: the selected features
        report["model"]["selected_features"] = to_jsonable(np.flatnonzero(model.support_))
    if outside_guarantee is not None:
        report["outside_guarantee"] = to_jsonable(outside_guarantee)
    if extra:
        report.update(to_jsonable(extra))
    return report


def write_report(report, path):
    """Write ``report`` as indented JSON (strict: no NaN or infinity literals)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2, allow_nan=False)
        f.write("\n")
