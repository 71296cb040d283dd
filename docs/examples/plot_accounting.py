"""
Accounting: privacy events, one accountant, and a budget across fits
====================================================================

Every private estimator in dptoolkit describes what its fit ran as a
*privacy event* (``privacy_event_``) and reports its guarantee through one
accountant.  This example uses only the public names of
:mod:`dptoolkit.accounting` for the three jobs a user has:

1. **Planning a DP-SGD or DP-SCD run**: the noise multiplier that a target
   (epsilon, delta) allows (:func:`~dptoolkit.accounting.calibrate_noise_multiplier`),
   checked by composing the events with a
   :class:`~dptoolkit.accounting.PrivacyAccountant`.
2. **Per-step budgets for pure-DP steps** (Frank-Wolfe's exponential
   mechanism): the per-step epsilon that T steps may spend under each
   composition rule (:func:`~dptoolkit.accounting.calibrate_parameter`).
3. **A budget across releases**: a
   :class:`~dptoolkit.accounting.BudgetAccountant` that refuses a spend *before*
   any work is done.
"""

import matplotlib.pyplot as plt
import numpy as np

from dptoolkit.accounting import (BudgetAccountant, PrivacyAccountant,
                                  calibrate_noise_multiplier, calibrate_parameter,
                                  epsilon_of_event)
from dptoolkit.accounting.events import (ExponentialMechanismEvent, GaussianEvent,
                                         PoissonSampledEvent, SelfComposedEvent)
from dptoolkit.exceptions import BudgetExceededError
from dptoolkit.mechanisms import DoubleGeometric, Exponential

# %%
# 1. Planning subsampled Gaussian steps
# -------------------------------------
# A DP-SGD (or DP-SCD) step sums per-example contributions clipped to L2 norm
# ``C`` over a random batch and adds ``N(0, (sigma C)^2)`` noise; ``sigma`` is
# the *noise multiplier*.  With ``n = 60000`` examples and batches of 600, the
# sampling rate is ``q = 0.01``; 50 epochs are 5000 steps.
#
# Sampling must match the accountant: the Renyi-DP bound of Mironov, Talwar
# and Zhang (2019) is for **Poisson** sampling (each example in the batch
# independently with probability q), under the add/remove-one relation.  A
# fixed-size batch drawn without replacement is a different mechanism,
# accounted under replace-one with the bound of Wang, Balle and
# Kasiviswanathan (2019).
n, batch, epochs = 60_000, 600, 50
q = batch / n
steps = int(epochs * n / batch)
target_epsilon, delta = 1.0, 1e-5

sigma_rdp = calibrate_noise_multiplier(target_epsilon=target_epsilon, delta=delta,
                                       sampling_rate=q, steps=steps)
sigma_ma = calibrate_noise_multiplier(target_epsilon=target_epsilon, delta=delta,
                                      sampling_rate=q, steps=steps, accountant="moments")
sigma_wor = calibrate_noise_multiplier(target_epsilon=target_epsilon, delta=delta,
                                       sampling_rate=q, steps=steps,
                                       sampling="without_replacement")
print(f"q = {q}, {steps} steps, target (epsilon, delta) = ({target_epsilon}, {delta})")
print(f"  Renyi DP, Poisson sampling:               sigma = {sigma_rdp:.4f}")
print(f"  moments accountant (Abadi et al. 2016):   sigma = {sigma_ma:.4f}")
print(f"  Renyi DP, fixed batch without replacement: sigma = {sigma_wor:.4f}"
      "  (replace-one sensitivity)")

# %%
# The calibrated multiplier never overshoots.  The same steps written as an
# event, composed by the accountant, give back an epsilon at most the target:
# this is how an estimator's ``privacy_spent_`` is computed from its
# ``privacy_event_``.
step_event = PoissonSampledEvent(q, GaussianEvent(sigma_rdp))
accountant = PrivacyAccountant().compose(step_event, count=steps)
print(f"epsilon of {steps} steps at sigma = {sigma_rdp:.4f}: "
      f"{accountant.get_epsilon(delta):.6f}")

# %%
# Epsilon as training proceeds, for three noise multipliers.
t_grid = np.unique(np.logspace(0, 4, 25).astype(int))
fig, ax = plt.subplots(figsize=(6, 4))
for sigma in (0.8, 1.1, 2.0):
    one_step = PoissonSampledEvent(q, GaussianEvent(sigma))
    eps_t = [epsilon_of_event(SelfComposedEvent(one_step, int(t)), delta) for t in t_grid]
    ax.loglog(t_grid, eps_t, label=f"sigma = {sigma}")
ax.set_xlabel("steps")
ax.set_ylabel(f"epsilon at delta = {delta:g}")
ax.set_title(f"Poisson-subsampled Gaussian steps, q = {q}")
ax.legend()
fig.tight_layout()

# %%
# 2. Per-step budgets for pure-DP steps
# -------------------------------------
# Private Frank-Wolfe runs T exponential-mechanism steps.  To spend a total
# (epsilon, delta) it needs the per-step epsilon whose T-fold composition is
# the total: basic composition gives epsilon / T; advanced composition (Dwork,
# Rothblum and Vadhan 2010) and the zCDP of a bounded-range mechanism (Cesar
# and Rogers 2021) allow more per step once T is large.
total, delta_fw = 1.0, 1e-6
print(f"{'T':>8} " + " ".join(f"{rule:>10}" for rule in ("basic", "advanced", "rdp")))
for T in (100, 1000, 4000, 100_000):
    per_step = [calibrate_parameter(
        lambda e, T=T: SelfComposedEvent(ExponentialMechanismEvent(e), T),
        target_epsilon=total, delta=delta_fw, low=1e-9, high=total, composition=rule)
        for rule in ("basic", "advanced", "rdp")]
    print(f"{T:>8} " + " ".join(f"{e:>10.3e}" for e in per_step))

# %%
# 3. A budget across releases
# ---------------------------
# Total budget (epsilon, delta) = (2, 1e-5), basic composition.  Each release
# checks the budget, works, then records its spend.
budget = BudgetAccountant(epsilon=2.0, delta=1e-5)
rng = np.random.default_rng(0)

# (a) pick one of 50 candidate features with the exponential mechanism
#     (utilities with sensitivity 1), epsilon 0.3
scores = rng.normal(size=50) * 5
budget.check(0.3)
chosen = Exponential(epsilon=0.3, sensitivity=1.0, random_state=1).select(scores)
budget.spend(0.3, label="feature selection")

# (b) release a count (sensitivity 1) with the double-geometric mechanism, epsilon 0.2
budget.check(0.2)
noisy_count = DoubleGeometric(epsilon=0.2, sensitivity=1, random_state=2).randomise(1234)
budget.spend(0.2, label="noisy count")

# (c) give everything left to a DP-SGD run: calibrate its noise to the remainder
eps_left, delta_left = budget.remaining()
budget.check(eps_left, delta_left)
sigma_train = calibrate_noise_multiplier(target_epsilon=eps_left, delta=delta_left,
                                         sampling_rate=q, steps=steps)
budget.spend(eps_left, delta_left, label="DP-SGD")
print(f"chosen feature {chosen}, noisy count {noisy_count}, training sigma {sigma_train:.3f}")
for eps_i, delta_i, label in budget.spends:
    print(f"  {label:<18} epsilon {eps_i:.3f}  delta {delta_i:.1e}")
print("spent:", tuple(round(v, 12) for v in budget.spent))

# %%
# The budget is exhausted: a further release is refused before it runs.
try:
    budget.check(0.01)
except BudgetExceededError as err:
    print("refused:", str(err).split(";")[0])
