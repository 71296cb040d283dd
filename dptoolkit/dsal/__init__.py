r"""DSAL: screened, variance-reduced, asynchronous sparse Lasso solvers (not private).

The estimators (:class:`~dptoolkit.linear_model.DSALLasso`,
:class:`~dptoolkit.linear_model.ProxSVRGLasso`, :class:`~dptoolkit.linear_model.ProxASAGALasso`,
also in :mod:`dptoolkit.linear_model`), the MPI solver (:mod:`dptoolkit.dsal.mpi`)
and the engine they share, in four modules: problem set-up (``_problem``),
evaluation and screening (``_screening``), the outer loop (``_outer``) and working
sets (``_working_set``), over one compiled module (``_prox_fast``: the stochastic
inner loops and the whole working-set solver).

The engine is the solver behind :class:`~dptoolkit.linear_model.DSALLasso`,
:class:`~dptoolkit.linear_model.ProxSVRGLasso` and
:class:`~dptoolkit.linear_model.ProxASAGALasso` (shared memory, threads) and behind
:func:`dptoolkit.dsal.mpi.fit_distributed` (MPI).  The estimators validate
their parameters and call ``solve``; the distributed solver runs the same
pieces (``ActiveProblem``, ``Evaluation``, ``screen``, ``StepControl``) with the
per-row sums reduced over workers.

Paper: R. Bao, X. Wu, W. Xian, H. Huang, *Doubly Sparse Asynchronous Learning for
Stochastic Composite Optimization*, IJCAI 2022 (DSAL).  Every solver minimises

.. math:: P(w) = \frac{1}{n}\sum_{i=1}^n f_i(x_i^\top w) + \alpha\,\Omega(w),

with :math:`f_i(z) = (z - y_i)^2/2` (``loss="squared"``; :math:`P` is then exactly
the objective of :class:`sklearn.linear_model.Lasso` without intercept) or
:math:`f_i(z) = \log(1 + e^{-y_i z})`, :math:`y_i = \pm 1` (``loss="logistic"``), and
:math:`\Omega(w) = \|w\|_1` (``penalty="l1"``) or :math:`\sum_B \|w_B\|_2` over a
partition of the features into blocks (``penalty="group_l1"``).

Screening (Section 2.1, eq. 2-3 of the paper) follows the Gap Safe rules of Ndiaye,
Fercoq, Gramfort and Salmon (JMLR 2017) for the objective exactly as scaled above.
The paper's eq. 2-3 mix two normalisations of the regulariser (:math:`n\lambda`
and :math:`\lambda`), so they cannot be applied as printed; the rules below are
derived in one scaling, and the tests check that no feature active at the optimum
is ever removed.  Written for
:math:`nP(w) = \sum_i f_i(x_i^\top w) + \lambda\Omega(w)` with :math:`\lambda = n\alpha`
and :math:`f_i` :math:`1/\gamma`-smooth (:math:`\gamma = 1` squared, :math:`\gamma = 4`
logistic), with :math:`g = \nabla F(w) = X^\top f'(Xw)/n`:

* dual point :math:`\theta = -c\, f'(Xw)/\lambda`, :math:`c = \alpha / \max(\alpha, \Omega^D(g))`,
  feasible: :math:`\Omega^D(X^\top\theta) \le 1`;
* dual objective :math:`D(\theta) = -\frac{1}{n}\sum_i f_i^*(c\, f_i'(x_i^\top w))` (scaled
  by :math:`1/n` like :math:`P`), duality gap :math:`G = P(w) - D(\theta) \ge P(w) - P^*`;
* the optimum :math:`\theta^*` lies in the ball of centre :math:`\theta` and radius
  :math:`r = \sqrt{2 n G / \gamma} / (n\alpha)`, so a block with
  :math:`\|g_B\|_* / \max(\alpha, \Omega^D(g)) + r\,\|X_B\|_2 < 1` is zero at the
  optimum and is removed for good (:math:`\|X_B\|_2` is the column norm for l1 and the
  spectral norm of the block for group l1).

The test uses the dual norm over the *active* blocks only, i.e. the Gap Safe rule of
the restricted problem, which has the same optimum as the full one because every
removed block is zero there; the gap reported is the gap of the restricted problem,
which bounds :math:`P(w) - P^*` all the same.

The cost of a stochastic step is the non-zeros of the sampled row restricted to
the active set (the "doubly sparse" update of Section 2.1): the active
sub-matrix is stored compactly (``ActiveProblem``) and the kernel
(``inner_epoch``) never touches a coordinate outside the sampled row.

The engine's modules are private.  Its benchmark window (``prepare_problem``,
``ActiveProblem``, ``Evaluation``, ``inner_epoch`` and ``solve_working_set``) can be
imported from this package for ``asv_benchmarks/`` and ``scripts/``, which time one
inner epoch apart from the estimators; it is not part of the API (not in
``__all__``, no API page) and its signatures may change between versions.  The
public names of this package are the estimators (also in
:mod:`dptoolkit.linear_model`) and the MPI solver.

References
----------
E. Ndiaye, O. Fercoq, A. Gramfort, J. Salmon. Gap Safe screening rules for
sparsity enforcing penalties. JMLR 18(128), 2017 (the sphere test above).

F. Pedregosa, R. Leblond, S. Lacoste-Julien. Breaking the nonsmooth barrier: a
scalable parallel method for composite optimization. NeurIPS 2017 (the SAGA
method of ``solve``).

M. Massias, A. Gramfort, J. Salmon. Celer: a fast solver for the Lasso with dual
extrapolation. ICML 2018; M. Massias, S. Vaiter, A. Gramfort, J. Salmon. Dual
extrapolation for sparse generalized linear models. JMLR 21(234), 2020 (the
working sets and the extrapolated dual point of ``solve_working_set``).

Q. Bertrand, M. Massias. Anderson acceleration of coordinate descent. AISTATS
2021 (the primal extrapolation in the sub-problems of ``solve_working_set``).
"""
from ._estimators import DSALLasso, ProxASAGALasso, ProxSVRGLasso
# the benchmark window (see the module docstring): not in __all__
from ._outer import inner_epoch
from ._problem import ActiveProblem, prepare_problem
from ._screening import Evaluation, lasso_alpha_max, lasso_duality_gap
from ._working_set import solve_working_set


def __getattr__(name):
    # The MPI solver is imported on first use: ``python -m dptoolkit.dsal.mpi``
    # imports this package first, and an eager import would make runpy execute a
    # module already in sys.modules (a RuntimeWarning on every rank).
    if name == "fit_distributed":
        from .mpi import fit_distributed
        return fit_distributed
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: No names of its own: the estimators are documented (and listed) in
#: :mod:`dptoolkit.linear_model`, the MPI solver in :mod:`dptoolkit.dsal.mpi`; both are
#: importable here too.
__all__ = []
