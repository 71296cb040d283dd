"""The noise on a run's validation score in a private search.

A run's score is the number of correct predictions on the validation part, whose
sensitivity is 1 under add/remove neighbours and under the exchange of one
validation example the coupled splits make (see
:class:`~dptoolkit.model_selection.PrivateHyperparameterSearch`).  With
``delta > 0`` it gets Gaussian noise of standard deviation ``score_noise``
(Renyi DP of the Gaussian mechanism, Mironov 2017, Proposition 7); a pure-DP
search gives it the Laplace mechanism with epsilon one ninth of the run's
training epsilon, a tenth of the run (Dwork, McSherry, Nissim and Smith 2006),
so that the run is epsilon/3-DP by basic composition as Liu and Talwar (2019),
Theorem 3.4 requires.
"""
from ..accounting.events import GaussianEvent, LaplaceEvent


def _score_event(p, eps_run):
    """The privacy event of one run's noisy score (``p``: the search's
    validated parameters, ``eps_run``: the run's training epsilon)."""
    if p.delta == 0:  # the score gets 1/9 of the training epsilon (10% of the run)
        return LaplaceEvent(9.0 / eps_run)
    return GaussianEvent(p.noise)


def _noisy_count(correct, p, eps_run, rng):
    """``correct`` (a count of sensitivity 1) plus the noise of :func:`_score_event`,
    drawn from ``rng``."""
    if p.delta > 0:
        return correct + rng.normal(0.0, p.noise)
    return correct + rng.laplace(0.0, 9.0 / eps_run)
