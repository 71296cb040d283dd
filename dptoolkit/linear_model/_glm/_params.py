"""The validated and derived parameters of DP-SGD and DP-SCD fits, as frozen dataclasses.

:class:`GLMParams` holds the hyper-parameters once validated (``_check_common``);
:class:`GLMSteps`, what a fit's privacy plan derives from them and the public N
(the plan's ``params``, see
:meth:`dptoolkit._private.PrivateEstimatorMixin._privacy_plan`).
"""
import dataclasses
import types

__all__ = ["GLMParams", "GLMSteps"]


@dataclasses.dataclass(frozen=True)
class GLMParams:
    """Validated hyper-parameters shared by DP-SGD and DP-SCD.

    ``epsilon`` and ``delta`` are None for a non-private fit; ``clip`` is inf for a
    non-private ``clip=None``; ``clip`` and ``n_epochs`` may be ``"auto"`` (DP-SCD,
    resolved by its plan); ``n_samples_public`` is None when not given.
    """
    private: bool
    epsilon: float
    delta: float
    alpha: float
    clip: object
    n_epochs: object
    intercept_scaling: float
    n_samples_public: int


@dataclasses.dataclass(frozen=True)
class GLMSteps:
    """The parameters a DP-SGD or DP-SCD fit runs with (its privacy plan's ``params``).

    ``validated`` is the :class:`GLMParams` (``"auto"`` resolved); the rest is
    derived from it and the public N: ``n_constant`` (N), ``batch_size`` (L),
    ``sampling_rate`` (q, None when not private), ``n_steps`` (per model),
    ``total_steps`` (all models: K one-vs-rest DP-SCD models add up),
    ``noise_multiplier`` (sigma, 0 when not private), ``sensitivity`` (L2, of one
    step's sum), ``noise_std`` (sigma times sensitivity), ``clip``, ``n_classes``
    (K, 2 for regressors) and the estimator's ``extra`` (learning rate, ...).
    """
    validated: GLMParams
    n_constant: int
    batch_size: int
    sampling_rate: float
    n_steps: int
    total_steps: int
    noise_multiplier: float
    sensitivity: float
    noise_std: float
    clip: float
    n_classes: int
    extra: types.MappingProxyType = dataclasses.field(
        default_factory=lambda: types.MappingProxyType({}))
