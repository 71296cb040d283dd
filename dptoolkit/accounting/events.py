"""Privacy events: immutable descriptions of what a private computation ran.

An event says *which mechanism* ran on the data, with which parameters, and how
its runs were combined (subsampled, repeated, composed); it says nothing about
the resulting (epsilon, delta).  One accountant
(:class:`~dptoolkit.accounting.PrivacyAccountant`) turns events into
guarantees, so that every private estimator, selector and pipeline of the
toolkit is accounted the same way and heterogeneous steps (exponential-
mechanism steps, subsampled Gaussian steps, Laplace releases) compose into one
guarantee instead of a sum of epsilons.  The design follows dp-accounting's
``DpEvent`` (frozen dataclasses composed into a tree); :meth:`PrivacyEvent.to_dp_accounting`
converts an event to dp-accounting's own so that users can compose the
toolkit's fits with their other computations there.

All events refer to the neighbouring relation of the estimator that produced
them (``privacy_event_`` sits next to ``neighbouring``); sensitivities are
folded into the parameters (``noise_multiplier = scale / sensitivity``,
``epsilon`` of a mechanism already calibrated to its sensitivity).

Leaf events
-----------
:class:`ExponentialMechanismEvent`
    The exponential mechanism with parameter epsilon (utility sensitivity
    Delta, weights ``exp(epsilon u / (2 Delta))``), and every sampler with the
    same output law (inverse-CDF draw, Gumbel report-noisy-max, the grouped
    Big-Step Little-Step sampler).  It is epsilon-DP and, as an
    epsilon-bounded-range mechanism, ``epsilon^2 / 8``-zCDP (Durfee and Rogers
    2019; Cesar and Rogers 2021, Lemma 3.2), which composes far better than
    its pure-DP bound.
:class:`PureDPEvent`
    Any epsilon-DP release that is *not* known to be bounded range: Laplace
    report-noisy-max, permute-and-flip, the double-geometric count of the
    Sparsifier, the canonical Lipschitz top-k.  Accounted as epsilon-DP and
    ``epsilon^2 / 2``-zCDP (Bun and Steinke 2016, Proposition 1.4); the
    bounded-range ``epsilon^2 / 8`` bound does **not** hold for these
    (Laplace report-noisy-max is not a bounded-range mechanism).
:class:`LaplaceEvent`
    The Laplace mechanism with ``scale = noise_multiplier * L1 sensitivity``
    (exact RDP, Mironov 2017, Proposition 6).
:class:`GaussianEvent`
    The Gaussian mechanism with ``sigma = noise_multiplier * L2 sensitivity``
    (RDP ``alpha / (2 noise_multiplier^2)``).
:class:`ZCDPEvent`
    A rho-zCDP computation given directly (Bun and Steinke 2016).
:class:`ApproxDPEvent`
    An (epsilon, delta)-DP computation known only through that pair (e.g. the
    floating-point deviation of a sampler, or a reproduction of a paper's
    printed scale); it composes by basic composition with the rest.
:class:`NoOpEvent`
    Nothing private ran on the data.

Combinators
-----------
:class:`PoissonSampledEvent`, :class:`SampledWithoutReplacementEvent`,
:class:`SelfComposedEvent`, :class:`ComposedEvent`, :class:`RepeatAndSelectEvent`,
:class:`MaxOfEvents` (one of several events, chosen independently of the data:
accounted by the pointwise worst case).

References
----------
- D. Durfee, R. Rogers. "Practical Differentially Private Top-k Selection
  with Pay-what-you-get Composition." NeurIPS 2019.
- M. Cesar, R. Rogers. "Bounding, Concentrating, and Truncating: Unifying
  Privacy Loss Composition for Data Analytics." ALT 2021.
- M. Bun, T. Steinke. "Concentrated Differential Privacy: Simplifications,
  Extensions, and Lower Bounds." TCC 2016.
- I. Mironov. "Renyi Differential Privacy." CSF 2017.
- N. Papernot, T. Steinke. "Hyperparameter Tuning with Renyi Differential
  Privacy." ICLR 2022.
- dp-accounting (Google), ``dp_accounting.dp_event``.
"""
import dataclasses
import math
import numbers

#: The event types (what a fit's ``privacy_event_`` is made of) and ``describe_event``
#: (prints what a fit ran).  The other helpers that walk an event (``child_events``,
#: ``count_steps``, ``noise_multipliers``, ``event_to_dict``) serve the estimators and
#: the command line.
__all__ = [
    "PrivacyEvent",
    "NoOpEvent",
    "PureDPEvent",
    "ApproxDPEvent",
    "ExponentialMechanismEvent",
    "LaplaceEvent",
    "GaussianEvent",
    "ZCDPEvent",
    "PoissonSampledEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "ComposedEvent",
    "RepeatAndSelectEvent",
    "MaxOfEvents",
    "describe_event",
]


def _real(value, name, *, low=0.0, low_open=False, allow_inf=False, high=None,
          high_open=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if value < low or (low_open and value == low):
        bound = ">" if low_open else ">="
        raise ValueError(f"{name} must be {bound} {low:g}, got {value!r}")
    if high is not None and (value > high or (high_open and value == high)):
        bound = "<" if high_open else "<="
        raise ValueError(f"{name} must be {bound} {high:g}, got {value!r}")
    return value


def _dp_event_module():
    try:
        from dp_accounting import dp_event
    except ImportError as exc:  # optional dependency
        raise ImportError("to_dp_accounting() needs the optional dependency "
                          "dp-accounting (pip install dp-accounting)") from exc
    return dp_event


@dataclasses.dataclass(frozen=True)
class PrivacyEvent:
    """Base class of privacy events (immutable, hashable, comparable)."""

    def to_dp_accounting(self):
        """The equivalent ``dp_accounting.dp_event.DpEvent``.

        Needs the optional dependency dp-accounting.  Events dp-accounting
        cannot express exactly are mapped to a valid but possibly looser event
        (documented per class) or to ``UnsupportedDpEvent``.
        """
        raise NotImplementedError

    def leaves(self):
        """The leaf events of the tree, in order (combinators expanded once)."""
        return [self]


@dataclasses.dataclass(frozen=True)
class NoOpEvent(PrivacyEvent):
    """Nothing data-dependent was released (e.g. a non-private fit on public data)."""

    def to_dp_accounting(self):
        return _dp_event_module().NoOpDpEvent()


@dataclasses.dataclass(frozen=True)
class PureDPEvent(PrivacyEvent):
    """An epsilon-DP release that is not known to be bounded range.

    Examples: Laplace report-noisy-max (Dwork and Roth 2014, Claim 3.9),
    permute-and-flip, a double-geometric count, the canonical Lipschitz top-k.
    Converted to dp-accounting as ``ZCDpEvent(epsilon^2 / 2)`` (valid, Bun and
    Steinke 2016 Proposition 1.4; it drops the cap of epsilon on every RDP order
    that this toolkit's accountant also uses).

    Parameters
    ----------
    epsilon : float
        >= 0.
    """
    epsilon: float

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _real(self.epsilon, "epsilon"))

    def to_dp_accounting(self):
        return _dp_event_module().ZCDpEvent(rho=0.5 * self.epsilon ** 2)


@dataclasses.dataclass(frozen=True)
class ApproxDPEvent(PrivacyEvent):
    """An (epsilon, delta)-DP computation known only through that pair.

    Composes with other events by basic composition (its epsilon and delta are
    added to the guarantee of the rest).  dp-accounting has no such event:
    :meth:`to_dp_accounting` returns ``UnsupportedDpEvent`` unless delta is 0
    (then it is a :class:`PureDPEvent`).

    Parameters
    ----------
    epsilon : float
        >= 0.
    delta : float
        In [0, 1].
    """
    epsilon: float
    delta: float

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _real(self.epsilon, "epsilon"))
        object.__setattr__(self, "delta", _real(self.delta, "delta", high=1.0))

    def to_dp_accounting(self):
        if self.delta == 0.0:
            return PureDPEvent(self.epsilon).to_dp_accounting()
        return _dp_event_module().UnsupportedDpEvent()


@dataclasses.dataclass(frozen=True)
class ExponentialMechanismEvent(PrivacyEvent):
    r"""The exponential mechanism with parameter epsilon (a bounded-range mechanism).

    Weights :math:`\exp(\varepsilon u(r) / (2\Delta))` with :math:`\Delta` the
    sensitivity of the utility :math:`u`; also any sampler with that output law
    (inverse-CDF, Gumbel report-noisy-max, the grouped sampler of Raff, Khanna and Lu (2023),
    Algorithm 4).  It is :math:`\varepsilon`-DP and
    :math:`\varepsilon`-bounded-range, hence :math:`\varepsilon^2/8`-zCDP
    (Cesar and Rogers 2021, Lemma 3.2; Durfee and Rogers 2019).  Converted to
    dp-accounting as ``ZCDpEvent(bounded_range^2 / 8)``.

    Parameters
    ----------
    epsilon : float
        >= 0: the pure-DP parameter.
    bounded_range : float or None, default=None
        The bounded-range parameter (``None``: ``epsilon``, the exact
        mechanism).  A floating-point sampler within a factor :math:`e^{\pm\gamma}`
        of the exact law is :math:`(\varepsilon + 2\gamma)`-DP but
        :math:`(\varepsilon + 4\gamma)`-bounded-range: give both.
    """
    epsilon: float
    bounded_range: float = None

    def __post_init__(self):
        object.__setattr__(self, "epsilon", _real(self.epsilon, "epsilon"))
        br = self.epsilon if self.bounded_range is None else _real(self.bounded_range,
                                                                    "bounded_range")
        object.__setattr__(self, "bounded_range", br)

    def to_dp_accounting(self):
        return _dp_event_module().ZCDpEvent(rho=self.bounded_range ** 2 / 8.0)


@dataclasses.dataclass(frozen=True)
class _NoiseMultiplierEvent(PrivacyEvent):
    """An additive-noise mechanism given by its noise multiplier (noise scale over
    sensitivity), > 0; ``inf`` (nothing released) where ``_allow_inf``.  The
    dp-accounting event of the same name is ``_dp_accounting_event``."""
    noise_multiplier: float

    _allow_inf = False
    _dp_accounting_event = None

    def __post_init__(self):
        object.__setattr__(self, "noise_multiplier",
                           _real(self.noise_multiplier, "noise_multiplier", low_open=True,
                                 allow_inf=self._allow_inf))

    def to_dp_accounting(self):
        return getattr(_dp_event_module(), self._dp_accounting_event)(self.noise_multiplier)


@dataclasses.dataclass(frozen=True)
class LaplaceEvent(_NoiseMultiplierEvent):
    """The Laplace mechanism, scale ``noise_multiplier * L1 sensitivity``.

    Pure ``1 / noise_multiplier``-DP; exact RDP from Mironov 2017, Proposition 6.

    Parameters
    ----------
    noise_multiplier : float
        > 0.
    """

    _dp_accounting_event = "LaplaceDpEvent"


@dataclasses.dataclass(frozen=True)
class GaussianEvent(_NoiseMultiplierEvent):
    """The Gaussian mechanism, ``sigma = noise_multiplier * L2 sensitivity``.

    Parameters
    ----------
    noise_multiplier : float
        > 0 (``inf`` allowed: nothing is released).
    """

    _allow_inf = True
    _dp_accounting_event = "GaussianDpEvent"


@dataclasses.dataclass(frozen=True)
class ZCDPEvent(PrivacyEvent):
    """A rho-zCDP computation (Bun and Steinke 2016): RDP ``rho * alpha`` at every order.

    Parameters
    ----------
    rho : float
        >= 0.
    """
    rho: float

    def __post_init__(self):
        object.__setattr__(self, "rho", _real(self.rho, "rho"))

    def to_dp_accounting(self):
        return _dp_event_module().ZCDpEvent(rho=self.rho)


@dataclasses.dataclass(frozen=True)
class PoissonSampledEvent(PrivacyEvent):
    """``event`` run on a Poisson subsample (each example kept with ``sampling_rate``).

    The accountant has a bound for a Gaussian inner event (Mironov, Talwar and
    Zhang 2019; add/remove relation).

    Parameters
    ----------
    sampling_rate : float
        In [0, 1].
    event : PrivacyEvent
    """
    sampling_rate: float
    event: PrivacyEvent

    def __post_init__(self):
        object.__setattr__(self, "sampling_rate",
                           _real(self.sampling_rate, "sampling_rate", high=1.0))
        _check_event(self.event, "event")

    def to_dp_accounting(self):
        return _dp_event_module().PoissonSampledDpEvent(self.sampling_rate,
                                                        self.event.to_dp_accounting())


@dataclasses.dataclass(frozen=True)
class SampledWithoutReplacementEvent(PrivacyEvent):
    """``event`` run on ``sample_size`` of ``n_samples`` examples drawn without replacement.

    The accountant has a bound for a Gaussian inner event under the replace-one
    relation (Wang, Balle and Kasiviswanathan 2019).

    Parameters
    ----------
    n_samples, sample_size : int
        ``1 <= sample_size <= n_samples``.
    event : PrivacyEvent
    """
    n_samples: int
    sample_size: int
    event: PrivacyEvent

    def __post_init__(self):
        for name in ("n_samples", "sample_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{name} must be an int >= 1, got {type(value).__name__}")
            if value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
            object.__setattr__(self, name, int(value))
        if self.sample_size > self.n_samples:
            raise ValueError(f"sample_size={self.sample_size} exceeds n_samples="
                             f"{self.n_samples}")
        _check_event(self.event, "event")

    def to_dp_accounting(self):
        return _dp_event_module().SampledWithoutReplacementDpEvent(
            self.n_samples, self.sample_size, self.event.to_dp_accounting())


@dataclasses.dataclass(frozen=True)
class SelfComposedEvent(PrivacyEvent):
    """``event`` run ``count`` times (adaptively, on the same data).

    Parameters
    ----------
    event : PrivacyEvent
    count : int
        >= 0.
    """
    event: PrivacyEvent
    count: int

    def __post_init__(self):
        _check_event(self.event, "event")
        if isinstance(self.count, bool) or not isinstance(self.count, numbers.Integral):
            raise TypeError(f"count must be an int >= 0, got {type(self.count).__name__}")
        if self.count < 0:
            raise ValueError(f"count must be an int >= 0, got {self.count!r}")
        object.__setattr__(self, "count", int(self.count))

    def leaves(self):
        return self.event.leaves()

    def to_dp_accounting(self):
        return _dp_event_module().SelfComposedDpEvent(self.event.to_dp_accounting(),
                                                      self.count)


@dataclasses.dataclass(frozen=True)
class ComposedEvent(PrivacyEvent):
    """The events run one after the other (adaptively) on the same data.

    Parameters
    ----------
    events : sequence of PrivacyEvent
        Stored as a tuple.
    """
    events: tuple

    def __post_init__(self):
        object.__setattr__(self, "events", _check_events(self.events))

    def leaves(self):
        return [leaf for event in self.events for leaf in event.leaves()]

    def to_dp_accounting(self):
        return _dp_event_module().ComposedDpEvent(
            [event.to_dp_accounting() for event in self.events])


@dataclasses.dataclass(frozen=True)
class RepeatAndSelectEvent(PrivacyEvent):
    """Private selection by random repetition (Papernot and Steinke 2022).

    ``event`` is run a random number K of times, K truncated-negative-binomial
    with parameters (``shape``, and success probability given by ``mean``)
    (``shape = 0`` is the logarithmic distribution, ``shape = 1`` geometric)
    or Poisson (``shape = inf``), and the best run is released.  Same
    parametrisation as dp-accounting's ``RepeatAndSelectDpEvent``.

    Parameters
    ----------
    event : PrivacyEvent
        One run (training one candidate and scoring it privately).
    mean : float
        Mean number of repetitions, > 0 (> 1 unless Poisson).
    shape : float
        >= 0, ``inf`` for Poisson.
    """
    event: PrivacyEvent
    mean: float
    shape: float

    def __post_init__(self):
        _check_event(self.event, "event")
        object.__setattr__(self, "mean", _real(self.mean, "mean", low_open=True))
        object.__setattr__(self, "shape", _real(self.shape, "shape", allow_inf=True))
        if self.mean <= 1.0 and not math.isinf(self.shape):
            raise ValueError(f"mean must be > 1 for a truncated negative binomial number "
                             f"of runs (shape={self.shape!r} < inf), got {self.mean!r}")

    def leaves(self):
        return self.event.leaves()

    def to_dp_accounting(self):
        return _dp_event_module().RepeatAndSelectDpEvent(
            self.event.to_dp_accounting(), self.mean, self.shape)


@dataclasses.dataclass(frozen=True)
class MaxOfEvents(PrivacyEvent):
    r"""One of ``events``, chosen independently of the data: the pointwise worst case.

    Describes a mechanism that picks one of several mechanisms by public
    randomness or public parameters (e.g. a hyperparameter drawn at random in
    :class:`~dptoolkit.model_selection.PrivateHyperparameterSearch`, which
    changes the number of steps of the run) and may release which one it
    picked.  Conditioned on the choice the mechanism is that child; since the
    choice does not depend on the data:

    * Renyi DP: at every order :math:`\alpha`, the maximum of the children's
      RDP, :math:`\max_j \varepsilon_j(\alpha)`.  With the choice :math:`J`
      (law :math:`w`, the same on neighbouring datasets) released next to the
      output :math:`Y`, :math:`e^{(\alpha-1) D_\alpha}` of the pair
      :math:`(J, Y)` is :math:`\sum_j w_j e^{(\alpha-1) D_\alpha(P_j \| Q_j)}`,
      at most :math:`e^{(\alpha-1)\max_j \varepsilon_j(\alpha)}`; without
      :math:`J`, by post-processing.  The maximum is taken order by order, so
      no single child need dominate.  In an adaptive composition the law
      :math:`w` may depend on earlier outputs, not on the data.
    * Pure and approximate DP: each child's (epsilon, delta) by basic
      composition of its leaves, and the event is (max epsilon, max delta)-DP.
    * Approximate-DP leaves inside the children (taken out of the Renyi part
      by the accountant): conditioned on the choice, the chosen child's
      approximate parts total at most (max over the children of their sum of
      epsilons, max of their sum of deltas), which the accountant adds.

    dp-accounting has no such event: :meth:`to_dp_accounting` returns the
    child's event when all children are equal and ``UnsupportedDpEvent``
    otherwise.  (dp-accounting's RDP of each child, maximised order by order,
    is what the tests compare with.)

    Parameters
    ----------
    events : sequence of PrivacyEvent
        Non-empty; stored as a tuple, in the given order (duplicates kept).
    """
    events: tuple

    def __post_init__(self):
        events = _check_events(self.events)
        if not events:
            raise ValueError("events must be a non-empty sequence of PrivacyEvent, got an "
                             "empty one")
        object.__setattr__(self, "events", events)

    def leaves(self):
        return ComposedEvent.leaves(self)

    def to_dp_accounting(self):
        if len(set(self.events)) == 1:
            return self.events[0].to_dp_accounting()
        return _dp_event_module().UnsupportedDpEvent()


def _check_event(event, name):
    if not isinstance(event, PrivacyEvent):
        raise TypeError(f"{name} must be a PrivacyEvent, got {type(event).__name__}")
    return event


def _check_events(events, name="events"):
    """``events`` as a tuple of PrivacyEvent (a single event is refused, not iterated)."""
    if isinstance(events, (PrivacyEvent, str, bytes)) or not hasattr(events, "__iter__"):
        raise TypeError(f"{name} must be a sequence of PrivacyEvent, got "
                        f"{type(events).__name__}")
    events = tuple(events)
    for k, event in enumerate(events):
        _check_event(event, f"{name}[{k}]")
    return events


# ---------------------------------------------------------------------------
# traversal of an event tree (for reports and the command line)
# ---------------------------------------------------------------------------

def child_events(event):
    """The events directly inside ``event`` (its fields that are events), in order.

    Parameters
    ----------
    event : PrivacyEvent

    Returns
    -------
    list of PrivacyEvent
        Empty for a leaf.
    """
    out = []
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        for item in (value if isinstance(value, tuple) else (value,)):
            if isinstance(item, PrivacyEvent):
                out.append(item)
    return out


def describe_event(event, indent="  "):
    """Lines describing an event tree, one per event, children indented.

    Parameters
    ----------
    event : PrivacyEvent or None
    indent : str
        Prefix of the root's line; each level adds two spaces.

    Returns
    -------
    list of str
        ``["  ClassName(field=value, ...)", ...]``; empty for None.
    """
    if event is None:
        return []
    scalars = []
    for field in dataclasses.fields(event):
        value = getattr(event, field.name)
        if isinstance(value, PrivacyEvent) or (
                isinstance(value, tuple) and value and isinstance(value[0], PrivacyEvent)):
            continue
        scalars.append(f"{field.name}={value:.6g}" if isinstance(value, float)
                       else f"{field.name}={value}")
    lines = [f"{indent}{type(event).__name__}({', '.join(scalars)})"]
    for child in child_events(event):
        lines.extend(describe_event(child, indent + "  "))
    return lines


def count_steps(event):
    """The number of steps of an event: the count of its longest self-composition.

    Parameters
    ----------
    event : PrivacyEvent

    Returns
    -------
    int
        ``count`` of a :class:`SelfComposedEvent`, the largest over the parts of a
        :class:`ComposedEvent`, else 1.
    """
    if isinstance(event, SelfComposedEvent):
        return event.count
    if isinstance(event, ComposedEvent):
        return max((count_steps(e) for e in event.events), default=1)
    return 1


def noise_multipliers(event):
    """The ``noise_multiplier`` of every event of the tree that has one, depth first.

    Parameters
    ----------
    event : PrivacyEvent or None

    Returns
    -------
    list of float
    """
    if event is None:
        return []
    out = [float(event.noise_multiplier)] if hasattr(event, "noise_multiplier") else []
    for child in child_events(event):
        out.extend(noise_multipliers(child))
    return out


def event_to_dict(event):
    """A privacy event as nested JSON-ready dicts: ``{"type": class name, field: value}``.

    Child events become nested dicts, tuples lists, and infinite or NaN numbers
    the strings ``"inf"``, ``"-inf"``, ``"nan"`` (JSON has no such numbers), so
    ``json.dumps`` takes the result as is (the command line's report uses it).

    Parameters
    ----------
    event : PrivacyEvent or None

    Returns
    -------
    dict or None
    """
    if event is None:
        return None
    _check_event(event, "event")
    out = {"type": type(event).__name__}
    for field in dataclasses.fields(event):
        out[field.name] = _jsonable_field(getattr(event, field.name))
    return out


def _jsonable_field(value):
    if isinstance(value, PrivacyEvent):
        return event_to_dict(value)
    if isinstance(value, (tuple, list)):
        return [_jsonable_field(v) for v in value]
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        value = float(value)
        if math.isfinite(value):
            return value
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value
