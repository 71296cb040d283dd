"""Numpydoc text that many docstrings share, written once.

A docstring names a shared entry on a line of its own, ``%(name)s``, indented as
the text should be; :func:`fill_doc` (a decorator for functions, methods and
classes) replaces that line by the entry of :data:`DOCS`, every line indented the
same.  Nothing else of the docstring is touched (a ``%`` elsewhere stays as it is).
"""
import re
import textwrap

__all__ = ["DOCS", "fill_doc"]

_X = "X : {array-like, sparse matrix} of shape (n_samples, n_features)"

#: Shared entries, by name.
DOCS = {
    # the X of predict, decision_function, transform, ...
    "X": _X,
    # the Parameters section of a method of X alone (predict, decision_function, ...)
    "params_X": "Parameters\n----------\n" + _X,
    # the X of fit
    "X_fit": _X + "\n    Training data, dense or any scipy.sparse format.",
    # the Parameters section of fit(X, y), up to the description of y (which
    # follows the placeholder, indented by four more spaces)
    "params_fit_Xy": ("Parameters\n----------\n" + _X
                      + "\n    Training data, dense or any scipy.sparse format."
                      + "\ny : array-like of shape (n_samples,)"),
    # the Returns section of fit
    "returns_self": "Returns\n-------\nself : object\n    The fitted estimator.",
    # the Parameters section of a composition of k (epsilon, delta)-DP mechanisms
    "params_k_mechanisms": ("Parameters\n----------\n"
                            "epsilon : float\n    Per-mechanism epsilon, > 0 and finite.\n"
                            "delta : float\n    Per-mechanism delta, in [0, 1).\n"
                            "k : int\n    Number of mechanisms, >= 1."),
    # the orders and the Returns section of an RDP curve
    "rdp_orders_returns": ("orders : array-like of float, default=None\n"
                           "    RDP orders (> 1); ``None`` means :data:`DEFAULT_RDP_ORDERS`.\n\n"
                           "Returns\n-------\nrdp : ndarray of shape (n_orders,), dtype float64"),
    # the first Parameters of a pure (delta = 0) mechanism, up to ``sensitivity``
    # (whose description follows the placeholder, indented by four more spaces)
    "params_pure_dp": ("Parameters\n----------\n"
                       "epsilon : float\n    > 0 and finite.\n"
                       "delta : float, default=0.0\n    Must be 0 (pure DP).\n"
                       "sensitivity : float"),
    # the accountant of a private selector
    "accountant_selector": (
        "accountant : BudgetAccountant or None, default=None\n"
        "    If given, ``(epsilon, 0)`` and ``privacy_event_`` are checked against it\n"
        "    before any work (:class:`~dptoolkit.exceptions.BudgetExceededError`\n"
        "    leaves it untouched) and spent once after the selection."),
    # privacy_spent_ and privacy_event_ of a private selector
    "attrs_selector_privacy": (
        "privacy_spent_ : tuple (epsilon, delta)\n"
        "    ``(epsilon, 0.0)``.\n"
        "privacy_event_ : PrivacyEvent\n"
        "    ``PureDPEvent(epsilon)`` (canonical Lipschitz) or\n"
        "    ``SelfComposedEvent(ExponentialMechanismEvent(epsilon / k), k)``\n"
        "    (peeling)."),
    # the public shape of DPSIS's k="auto" rules (auto_k, gaussian_auto_k)
    "params_public_shape": ("Parameters\n----------\n"
                            "n_features : int\n    :math:`D \\ge 2`.\n"
                            "n_samples : int\n    Public dataset size :math:`N \\ge 1`."),
    # the papers of the private vocabulary (partition selection)
    "refs_partition_selection": (
        "S. Gopi, P. Gulhane, J. Kulkarni, J. H. Shen, M. Shokouhi, S. Yekhanin.\n"
        "Differentially private set union. ICML 2020.\n\n"
        "D. Desfontaines, J. Voss, B. Gipson, C. Mandayam. Differentially private\n"
        "partition selection. PoPETs 2022(1)."),
    "random_state": (
        "random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator\n"
        "    Seeds the sampling and the noise. ``None`` (the default for a release):\n"
        "    fresh OS entropy, and nothing on the fitted model can regenerate the noise.\n"
        "    A seed or a Generator is kept (as in scikit-learn) and makes the noise\n"
        "    reproducible by whoever knows it: a private fit given one warns\n"
        "    (PrivacyLeakWarning, once per process)."),
    "accountant": (
        "accountant : BudgetAccountant or None, default=None\n"
        "    If given, a private fit's (epsilon, delta) and ``privacy_event_`` are\n"
        "    checked against it before any work and spent after the fit.  Clones\n"
        "    (``sklearn.base.clone``: cross-validation, grid search) share it, so its\n"
        "    budget bounds all their fits."),
}

_PLACEHOLDER = re.compile(r"^([ \t]*)%\((\w+)\)s[ \t]*$", re.MULTILINE)


def fill_doc(obj):
    """Replace the ``%(name)s`` lines of ``obj.__doc__`` by ``DOCS[name]``.

    Parameters
    ----------
    obj : function or class
        Its docstring may be None (``python -OO``).

    Returns
    -------
    obj
        The same object, its docstring filled.

    Raises
    ------
    KeyError
        A placeholder names no entry of :data:`DOCS`.
    """
    doc = obj.__doc__
    if doc:
        obj.__doc__ = _PLACEHOLDER.sub(
            lambda m: textwrap.indent(DOCS[m.group(2)], m.group(1)), doc)
    return obj
