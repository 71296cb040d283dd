r"""The worked example of "Adding a DP algorithm" (docs/architecture.rst): a private
mean of bounded vectors, written as a module of the package would be.

Privacy (step 1 of the checklist)
---------------------------------
*Neighbouring relation*: ``neighbouring="add_remove"`` (add or remove one row) or
``"replace_one"``.  *Public bound*: every row has :math:`\|x_i\|_2 \le B`
(``data_norm``); rows above it are rescaled to it (a local operation, with a
:class:`~dptoolkit.exceptions.DataClippedWarning`).  *Sensitivity*: the sum
:math:`S = \sum_i x_i` moves by one row under add/remove, so
:math:`\Delta_2 S \le B`, and by the difference of two rows under replace-one,
:math:`\Delta_2 S \le 2B`.  *Mechanism*: the Gaussian mechanism,
:math:`\tilde S = S + N(0, (z\Delta_2)^2 I)` (Dwork and Roth, *The Algorithmic
Foundations of Differential Privacy*, 2014, Appendix A), released as
:math:`\tilde S / N` with the public dataset size :math:`N`
(``n_samples_public``; dividing by a public constant is post-processing).
*Budget*: one release, the event ``GaussianEvent(z)``; the noise multiplier
:math:`z` is the smallest for which the accountant certifies
``(epsilon, delta)`` (step 3), never a formula copied from a paper.
"""
import dataclasses

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from dptoolkit._estimator import _store_params
from dptoolkit._private import PrivateEstimatorMixin, sensitivity_factor
from dptoolkit._validation import (DELTA_GAUSSIAN, NEIGHBOURING, POSITIVE, PRIVATE_COMMON,
                                   Boolean)
from dptoolkit.accounting import calibrate_parameter, epsilon_of_event
from dptoolkit.accounting.events import GaussianEvent

#: Bracket of the noise-multiplier search (a noise multiplier of 1e4 certifies
#: epsilon below 1e-3 at delta = 1e-10; below 1e-3 it certifies nothing useful).
_Z_BRACKET = (1e-3, 1e4)


def gaussian_event(noise_multiplier):
    """Step 2, the event: one Gaussian release of noise multiplier ``z``."""
    return GaussianEvent(noise_multiplier)


def calibrate_noise(epsilon, delta):
    """Step 3, calibration through the accountant: the smallest ``z`` whose event
    the accountant certifies at ``(epsilon, delta)``."""
    return calibrate_parameter(gaussian_event, target_epsilon=epsilon, delta=delta,
                               low=_Z_BRACKET[0], high=_Z_BRACKET[1], increasing=False)


def noisy_sum(X, scale, rng):
    """The work (a kernel would go here): column sums plus Gaussian noise."""
    total = np.asarray(X.sum(axis=0), dtype=np.float64).ravel()
    return total + rng.normal(0.0, scale, size=total.shape)


@dataclasses.dataclass(frozen=True)
class MeanParams:
    """The validated and derived parameters of a fit (its plan's ``params``)."""
    n_samples: int              # public N, the divisor
    noise_multiplier: float     # z
    sensitivity: float          # Delta_2 of the sum


class PrivateMean(PrivateEstimatorMixin, BaseEstimator):
    """Differentially private mean of rows of bounded L2 norm (Gaussian mechanism).

    Parameters
    ----------
    epsilon : float
        > 0.
    delta : float, default=1e-5
        In (0, 1).
    data_norm : float, default=1.0
        Public bound :math:`B` on :math:`\\|x_i\\|_2`.
    neighbouring : {"add_remove", "replace_one"}, default="add_remove"
    n_samples_public : int or None, default=None
        The public dataset size :math:`N` (None: taken from the data, with a
        PrivacyLeakWarning under add/remove).
    clip_data : bool, default=True
        Rescale rows above the bound (else raise).
    accountant : BudgetAccountant or None, default=None
    random_state : None, int, SeedSequence or Generator, default=None

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
    noise_multiplier_ : float
        :math:`z` (a public function of epsilon and delta).
    privacy_event_ : GaussianEvent
    privacy_spent_ : tuple (epsilon, delta)
    n_features_in_ : int
    """

    # step 4: every parameter declared, checked once at the start of the template's fit
    _parameter_constraints = {
        **PRIVATE_COMMON, "delta": DELTA_GAUSSIAN, "data_norm": POSITIVE,
        "neighbouring": NEIGHBOURING, "clip_data": [Boolean()],
    }

    def __init__(self, *, epsilon=1.0, delta=1e-5, data_norm=1.0,
                 neighbouring="add_remove", n_samples_public=None, clip_data=True,
                 accountant=None, random_state=None):
        _store_params(self, locals())

    # the public bound the template enforces after the plan, before the spend
    _public_bound = ("l2", "data_norm")
    # the release (what the guarantee covers; every other fitted attribute must not
    # depend on the data)
    _released_attributes = ("mean_",)

    def _privacy_plan(self, n_samples, n_features, classes):
        """The event, spend and parameters of a fit on ``n_samples`` rows: public
        quantities only (``plan_spend`` calls it without a fit)."""
        epsilon, delta = self._check_budget(optional=False, delta_required=True)
        n = self._n_samples(n_samples, private=True, uses="the divisor of the mean")
        z = calibrate_noise(epsilon, delta)
        params = MeanParams(n_samples=n, noise_multiplier=z, sensitivity=sensitivity_factor(
            self.neighbouring) * self.data_norm)
        event = gaussian_event(z)
        return self._plan(event, (epsilon_of_event(event, delta), delta), params)

    def _fit_private(self, X, y, plan, rng):
        """The work, after the template checked the parameters, the data and the
        spend: the noisy sum over the public N (``rng`` is local, never stored)."""
        scale = plan.params.noise_multiplier * plan.params.sensitivity
        self.mean_ = noisy_sum(X, scale, rng) / plan.params.n_samples
        self.noise_multiplier_ = plan.params.noise_multiplier

    def transform(self, X):
        """Centre ``X`` on the private mean (dense output)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X - self.mean_
