"""Privacy accounting: composition theorems, Renyi-DP / moments accountants,
noise calibration and budget tracking.

Every noise scale and per-step budget used by the toolkit's private
algorithms is derived here, so that there is one place to audit.

- :func:`basic_composition`, :func:`advanced_composition` (Dwork-Rothblum-
  Vadhan, full bound), its exact inverse :func:`per_step_epsilon`, and
  :func:`optimal_composition` (Kairouz-Oh-Viswanath).
- :class:`RDPAccountant` (Renyi DP of the Gaussian, Laplace and subsampled
  Gaussian mechanisms; Poisson or without-replacement sampling) and
  :class:`MomentsAccountant` (Abadi et al. 2016).
- :func:`calibrate_noise_multiplier`.
- :class:`BudgetAccountant` (check -> work -> spend).
- Privacy events (:mod:`dptoolkit.accounting.events`: immutable descriptions
  of what a fit ran) and the one accountant that turns them into (epsilon,
  delta), :class:`PrivacyAccountant` (basic, advanced, Renyi DP / zCDP).
- Laplace report noisy max and Talwar et al.'s private LASSO scale
  (:mod:`dptoolkit.accounting.talwar`):
  :func:`~dptoolkit.accounting.talwar.laplace_report_noisy_max_scale`, its inverse
  :func:`~dptoolkit.accounting.talwar.laplace_report_noisy_max_epsilon`,
  :func:`~dptoolkit.accounting.talwar.laplace_report_noisy_max_composition` and
  :func:`~dptoolkit.accounting.talwar.talwar_noise_scale`.
"""
from . import events
from .accountant import (
    ACCOUNTING_METHODS,
    PrivacyAccountant,
    basic_guarantee,
    calibrate_parameter,
    epsilon_of_event,
    tnb_success_probability,
)
from .budget import BudgetAccountant, default_accountant, set_default_accountant
from .calibration import calibrate_noise_multiplier
from .composition import (
    advanced_composition,
    basic_composition,
    optimal_composition,
    per_step_epsilon,
)
from .rdp import (
    DEFAULT_RDP_ORDERS,
    rdp_gaussian,
    rdp_laplace,
    rdp_poisson_subsampled_gaussian,
    rdp_sampled_without_replacement_gaussian,
    rdp_to_delta,
    rdp_to_epsilon,
)
from .rdp_accountant import MomentsAccountant, RDPAccountant
from .talwar import (
    laplace_report_noisy_max_composition,
    laplace_report_noisy_max_epsilon,
    laplace_report_noisy_max_scale,
    talwar_noise_scale,
)

__all__ = [
    "ACCOUNTING_METHODS",
    "BudgetAccountant",
    "PrivacyAccountant",
    "basic_guarantee",
    "calibrate_parameter",
    "default_accountant",
    "set_default_accountant",
    "epsilon_of_event",
    "events",
    "DEFAULT_RDP_ORDERS",
    "MomentsAccountant",
    "RDPAccountant",
    "advanced_composition",
    "basic_composition",
    "calibrate_noise_multiplier",
    "laplace_report_noisy_max_composition",
    "laplace_report_noisy_max_epsilon",
    "laplace_report_noisy_max_scale",
    "optimal_composition",
    "per_step_epsilon",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_poisson_subsampled_gaussian",
    "rdp_sampled_without_replacement_gaussian",
    "rdp_to_delta",
    "rdp_to_epsilon",
    "talwar_noise_scale",
    "tnb_success_probability",
]
