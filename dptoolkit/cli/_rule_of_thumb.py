"""The command line's rule of thumb: is the training set large enough for the budget?

Before a private fit of the default model, the command line compares the public
training size ``--n-samples-public`` with
:meth:`~dptoolkit.linear_model.DPNBLogisticClassifier.n_samples_needed`, a function
of epsilon, delta, the number of classes and the model's release share only.  No
figure of the data enters (without ``--n-samples-public`` there is no public N, and
no note), so printing it costs no privacy.  Measured against the curves of test
accuracy against N in ``docs/studies/data_needed.rst``.
"""
from ..linear_model import DPNBLogisticClassifier

__all__ = ["data_budget_note"]


def data_budget_note(estimator, n_classes):
    """The note to print when N is below what the model needs, else None.

    Parameters
    ----------
    estimator : estimator
        The model about to be fitted (unfitted).  Only a private
        :class:`~dptoolkit.linear_model.DPNBLogisticClassifier` with a public
        ``n_samples_public`` gets a note.
    n_classes : int
        The public number of classes.

    Returns
    -------
    str or None
    """
    if type(estimator) is not DPNBLogisticClassifier:
        return None
    params = estimator.get_params(deep=False)
    n, epsilon = params["n_samples_public"], params["epsilon"]
    if n is None or epsilon is None:
        return None
    needed = estimator.n_samples_needed(n_classes)
    if n >= needed:
        return None
    return (f"note: N x epsilon = {n} x {epsilon:g} = {n * epsilon:,.0f} is below the "
            f"{needed * epsilon:,.0f} (N = {needed:,.0f} at epsilon {epsilon:g}) that the "
            f"default model needs to beat the majority class with {n_classes} classes at "
            f"delta {params['delta']:g}: expect little better than the majority class; "
            "give more training data or a larger --epsilon (a rule of thumb from public "
            "quantities only: N >= sqrt(2) K sigma_1 / gamma, sigma_1 the noise of the "
            "model's release of the per-class sums, gamma a typical margin of text; "
            "conservative for more than two classes; see docs/studies/data_needed.rst)")
