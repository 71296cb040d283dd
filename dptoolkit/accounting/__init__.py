"""Privacy accounting: privacy events, the accountant that turns them into
(epsilon, delta), calibration and budget tracking.

Every noise scale and per-step budget used by the toolkit's private algorithms is
derived in this subpackage, so that there is one place to audit.

Public names, each with the reason a user needs it:

- :mod:`dptoolkit.accounting.events`: immutable descriptions of what a fit ran
  (``privacy_event_`` of every private estimator); a user composes them to plan.
- :class:`PrivacyAccountant` and :func:`epsilon_of_event`: the one accountant that
  turns an event into (epsilon, delta) (basic, advanced, Renyi DP / zCDP; the
  estimators' ``privacy_spent_`` is computed by it).
- :func:`calibrate_parameter` and :func:`calibrate_noise_multiplier`: planning, the
  noise (or step count) that meets a target (epsilon, delta).
- :class:`BudgetAccountant`, :func:`default_accountant`,
  :func:`set_default_accountant`: a total budget spent by successive fits (check ->
  work -> spend).

The theorems behind them live in private modules: composition (Dwork, Rothblum and
Vadhan 2010; Kairouz, Oh and Viswanath 2015) in ``_composition``, Renyi DP of the
Gaussian, Laplace and subsampled Gaussian mechanisms (Mironov 2017; Mironov, Talwar
and Zhang 2019) in ``_rdp`` with its low-level accountants ``RDPAccountant`` and
``MomentsAccountant`` (Abadi et al. 2016) in ``_rdp_accountant``, and Talwar,
Thakurta and Zhang (2015)'s private-LASSO noise scale and Laplace report noisy max
in ``_talwar``.  The helpers other subpackages and the studies use are importable
from this package but are not part of its API (not in ``__all__``).
"""
from . import events
from ._accountant import PrivacyAccountant, calibrate_parameter, epsilon_of_event
from ._budget import BudgetAccountant, default_accountant, set_default_accountant
from ._calibration import calibrate_noise_multiplier

# Importable for the other subpackages, the studies and the benchmarks, but not part
# of the API (not in __all__, no API page): engine helpers and the theorems' functions.
from ._accountant import (ACCOUNTING_METHODS, accounted_spend, basic_guarantee,
                          tnb_success_probability)
from ._budget import note_estimator_origin, warn_model_selection
from ._calibration import MIN_NOISE_MULTIPLIER
from ._composition import (advanced_composition, basic_composition, optimal_composition,
                           per_step_epsilon)
from ._rdp import (DEFAULT_RDP_ORDERS, rdp_gaussian, rdp_laplace,
                   rdp_poisson_subsampled_gaussian,
                   rdp_sampled_without_replacement_gaussian, rdp_to_delta, rdp_to_epsilon)
from ._rdp_accountant import MomentsAccountant, RDPAccountant
from ._talwar import (laplace_report_noisy_max_composition,
                      laplace_report_noisy_max_epsilon, laplace_report_noisy_max_scale,
                      laplace_selector_parameters, talwar_noise_scale)

__all__ = [
    "events",
    "PrivacyAccountant",
    "epsilon_of_event",
    "calibrate_parameter",
    "calibrate_noise_multiplier",
    "BudgetAccountant",
    "default_accountant",
    "set_default_accountant",
]
