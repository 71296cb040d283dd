"""The Renyi-DP accountants: :class:`RDPAccountant` keeps one RDP value per order
and composes mechanisms additively, order by order; :class:`MomentsAccountant`
is the same on the integer orders of Abadi et al. (2016).  The RDP curves of
the mechanisms, the conversions to (epsilon, delta) and the neighbouring
relations they refer to are in ``dptoolkit.accounting._rdp``.

References
----------
- [M17] I. Mironov. "Renyi Differential Privacy." CSF 2017 (Proposition 1:
  composition).
- [ACGMMTZ16] M. Abadi et al. "Deep Learning with Differential Privacy."
  CCS 2016 (moments accountant, Theorem 1).
"""
import warnings

import numpy as np

from .._validation import check_positive_int
from . import _rdp as _curves  # the RDP curves and conversions

__all__ = ["RDPAccountant", "MomentsAccountant", "MOMENTS_ORDERS"]


class RDPAccountant:
    """Renyi-DP accountant (a "moments accountant" over real orders).

    Keeps one RDP value per order; each ``compose_*`` call adds the RDP of a
    mechanism run ``steps`` times (RDP composes additively, [M17]
    Proposition 1, adaptively), and returns the accountant so calls chain::

        eps = (RDPAccountant()
               .compose_subsampled_gaussian(noise_multiplier=1.1,
                                            sampling_rate=0.01, steps=10_000)
               .get_epsilon(1e-5))

    Parameters
    ----------
    orders : array-like of float, default=None
        RDP orders (finite, > 1).  ``None`` means :data:`~dptoolkit.accounting.DEFAULT_RDP_ORDERS`,
        the same orders as dp-accounting's ``RdpAccountant``.
    neighboring_relation : {"add_remove", "replace_one"}, default="add_remove"
        The relation all composed guarantees refer to.  Poisson subsampling
        requires ``"add_remove"`` (dp-accounting's ``ADD_OR_REMOVE_ONE``; the
        spelling ``"add_or_remove_one"`` is accepted with a DeprecationWarning),
        sampling without replacement requires ``"replace_one"`` (see the module
        docstring).
    conversion : {"improved", "classic"}, default="improved"
        Default RDP -> (epsilon, delta) conversion (see :func:`rdp_to_epsilon`).
    series : {"exact", "absolute"}, default="exact"
        Fractional-order series of the Poisson-subsampled Gaussian (see
        :func:`rdp_poisson_subsampled_gaussian`; ``"absolute"`` reproduces
        dp-accounting 0.6.0 and is looser).

    Attributes
    ----------
    orders : ndarray of shape (n_orders,)
    rdp : ndarray of shape (n_orders,)
        Accumulated RDP (a copy).
    history : list of dict
        One entry per ``compose_*`` call, for audit.

    References
    ----------
    - [M17] I. Mironov. "Renyi Differential Privacy." CSF 2017.
    - [MTZ19] I. Mironov, K. Talwar, L. Zhang. arXiv:1908.10530, 2019.
    - [WBK19] Y.-X. Wang, B. Balle, S. Kasiviswanathan. AISTATS 2019.
    """

    def __init__(self, orders=None, *, neighboring_relation="add_remove",
                 conversion="improved", series="exact"):
        self._orders = _curves._check_orders(orders)
        if neighboring_relation == "add_or_remove_one":   # the toolkit's one spelling
            warnings.warn("neighboring_relation='add_or_remove_one' is deprecated: the "
                          "toolkit spells it 'add_remove' (as neighbouring= of every "
                          "estimator)", DeprecationWarning, stacklevel=2)
            neighboring_relation = "add_remove"
        self.neighboring_relation = _curves._check_choice(
            neighboring_relation, "neighboring_relation", _curves._RELATIONS)
        self.conversion = _curves._check_choice(conversion, "conversion", _curves._CONVERSIONS)
        self.series = _curves._check_choice(series, "series", _curves._SERIES)
        self._rdp = np.zeros_like(self._orders)
        self.history = []

    @property
    def orders(self):
        return self._orders.copy()

    @property
    def rdp(self):
        return self._rdp.copy()

    def __repr__(self):
        return (f"{type(self).__name__}(n_orders={self._orders.size}, "
                f"neighboring_relation={self.neighboring_relation!r}, "
                f"steps_composed={sum(h['steps'] for h in self.history)})")

    def copy(self):
        """Independent copy (same orders, settings and accumulated RDP)."""
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._orders = self._orders.copy()
        new._rdp = self._rdp.copy()
        new.history = list(self.history)
        return new

    def _add(self, rdp_step, steps, record):
        steps = check_positive_int(steps, "steps")
        self._rdp = self._rdp + steps * rdp_step
        record["steps"] = steps
        self.history.append(record)
        return self

    def compose_rdp(self, rdp, *, steps=1):
        """Add ``steps`` times a given RDP curve (one value per order).

        The caller vouches that ``rdp`` is valid for this accountant's
        orders and neighbouring relation.
        """
        rdp = np.asarray(rdp, dtype=np.float64)
        _curves._check_rdp_pair(self._orders, rdp)
        return self._add(rdp, steps, {"mechanism": "rdp"})

    def compose_gaussian(self, *, noise_multiplier, steps=1):
        """Compose ``steps`` Gaussian mechanisms (no subsampling).

        Parameters
        ----------
        noise_multiplier : float
            ``sigma / sensitivity`` (L2 sensitivity under the accountant's
            relation), > 0.
        steps : int, default=1
        """
        rdp = _curves.rdp_gaussian(noise_multiplier=noise_multiplier, orders=self._orders)
        return self._add(rdp, steps, {"mechanism": "gaussian",
                                      "noise_multiplier": float(noise_multiplier)})

    def compose_laplace(self, *, noise_multiplier, steps=1):
        """Compose ``steps`` Laplace mechanisms of scale ``noise_multiplier *
        sensitivity`` (L1 sensitivity; pure epsilon ``1 / noise_multiplier``
        each)."""
        rdp = _curves.rdp_laplace(noise_multiplier=noise_multiplier, orders=self._orders)
        return self._add(rdp, steps, {"mechanism": "laplace",
                                      "noise_multiplier": float(noise_multiplier)})

    def compose_subsampled_gaussian(self, *, noise_multiplier, sampling_rate, steps=1,
                                    sampling="poisson"):
        """Compose ``steps`` subsampled Gaussian mechanisms (DP-SGD / DP-SCD steps).

        Parameters
        ----------
        noise_multiplier : float
            ``sigma / sensitivity``, > 0.
        sampling_rate : float
            In (0, 1].  Poisson: inclusion probability of each example.
            Without replacement: batch size divided by the dataset size.
        steps : int, default=1
            Number of steps, >= 1.
        sampling : {"poisson", "without_replacement"}, default="poisson"
            How the batch is drawn; it must be what the algorithm really does.
            ``"poisson"`` uses [MTZ19] (add/remove relation);
            ``"without_replacement"`` uses [WBK19] Theorem 9 (replace-one).

        Returns
        -------
        self : RDPAccountant

        Raises
        ------
        ValueError
            Bad parameters, or a sampling scheme whose bound does not hold for
            this accountant's ``neighboring_relation``.
        """
        _curves._check_choice(sampling, "sampling", _curves._SAMPLINGS)
        if sampling == "poisson":
            if self.neighboring_relation != "add_remove":
                raise ValueError("sampling='poisson' is accounted under add_remove; "
                                 "this accountant uses neighboring_relation="
                                 f"{self.neighboring_relation!r}")
            rdp = _curves.rdp_poisson_subsampled_gaussian(
                noise_multiplier=noise_multiplier, sampling_rate=sampling_rate,
                orders=self._orders, series=self.series)
        else:
            if self.neighboring_relation != "replace_one":
                raise ValueError(
                    "sampling='without_replacement' (fixed batch size) is accounted under "
                    "replace_one; build RDPAccountant(neighboring_relation='replace_one') or "
                    "sample each example independently (sampling='poisson')")
            rdp = _curves.rdp_sampled_without_replacement_gaussian(
                noise_multiplier=noise_multiplier, sampling_rate=sampling_rate,
                orders=self._orders)
        return self._add(rdp, steps, {"mechanism": f"subsampled_gaussian/{sampling}",
                                      "noise_multiplier": float(noise_multiplier),
                                      "sampling_rate": float(sampling_rate)})

    def get_epsilon_and_order(self, delta, *, conversion=None):
        """Return ``(epsilon, optimal_order)`` for the composed mechanisms.

        See :meth:`get_epsilon`.
        """
        conversion = self.conversion if conversion is None else conversion
        return _curves.rdp_to_epsilon(self._orders, self._rdp, delta, conversion=conversion)

    def get_epsilon(self, delta, *, conversion=None):
        """Epsilon of everything composed so far, at the given delta.

        Parameters
        ----------
        delta : float
            In (0, 1).
        conversion : {"improved", "classic"} or None
            ``None``: the accountant's ``conversion``.

        Returns
        -------
        epsilon : float
        """
        return self.get_epsilon_and_order(delta, conversion=conversion)[0]

    def get_delta(self, epsilon, *, conversion=None):
        """Delta of everything composed so far, at the given epsilon (>= 0)."""
        conversion = self.conversion if conversion is None else conversion
        return _curves.rdp_to_delta(self._orders, self._rdp, epsilon, conversion=conversion)[0]


#: Largest ``max_lambda`` of :class:`MomentsAccountant` (its orders then end at
#: 1025, just past dp-accounting's largest default order, 1024).
MAX_LAMBDA = 1024

#: Integer orders alpha = lambda + 1 for the moments lambda = 1, ..., 32 of
#: Abadi et al. (2016).
MOMENTS_ORDERS = tuple(float(lam + 1) for lam in range(1, 33))


class MomentsAccountant(RDPAccountant):
    """The moments accountant of Abadi et al. (2016), as used by DP-SCD.

    Tracks the log moments alpha_M(lambda) for lambda = 1, ..., 32 of the
    Poisson-subsampled Gaussian mechanism and converts with the tail bound of
    [ACGMMTZ16] Theorem 1: delta = min_lambda exp(T alpha(lambda) -
    lambda eps), i.e. eps = min_lambda (T alpha(lambda) + log(1/delta)) /
    lambda.  The log moment alpha(lambda) equals lambda times the RDP at order
    lambda + 1 (computed exactly by the integer-order formula of [MTZ19],
    not by the asymptotic bound of Abadi et al.'s Lemma 3), so this is an
    :class:`RDPAccountant` with orders 2, ..., 33 and the classic conversion.

    Abadi et al. report eps ~ 1.26 for q = 0.01, sigma = 4, T = 10^4,
    delta = 1e-5.  Computed exactly with integer moments this gives
    eps = 1.258575 (attained at lambda = 19, i.e. order 20), which rounds to
    their 1.26; the RDP accountant with the default orders and the improved
    conversion gives 1.035490 for the same mechanism (dp-accounting:
    1.035490).  Both are upper bounds; the moments accountant is kept to
    reproduce papers that used it (e.g. DP-SCD).

    Parameters
    ----------
    max_lambda : int, default=32
        Largest moment, in [1, 1024]; orders are 2, ..., max_lambda + 1 (the
        largest of dp-accounting's default RDP orders is 1024; the cost of a
        composition grows as ``max_lambda**2``).

    Raises
    ------
    TypeError
        ``max_lambda`` is not an integer.
    ValueError
        ``max_lambda`` outside [1, 1024].
    """

    def __init__(self, max_lambda=32):
        max_lambda = check_positive_int(max_lambda, "max_lambda")
        if max_lambda > MAX_LAMBDA:
            raise ValueError(f"max_lambda must be in [1, {MAX_LAMBDA}], got {max_lambda}: "
                             "each composition evaluates max_lambda exact moments of "
                             "O(max_lambda) terms each")
        super().__init__(orders=[float(lam + 1) for lam in range(1, max_lambda + 1)],
                         conversion="classic")
        self.max_lambda = max_lambda

    @property
    def log_moments(self):
        """Accumulated log moments alpha(lambda), lambda = 1..max_lambda."""
        return self._rdp * (self._orders - 1.0)
