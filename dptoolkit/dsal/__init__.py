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
their parameters and call :func:`solve`; the distributed solver runs the same
pieces (:class:`ActiveProblem`, :class:`Evaluation`, :func:`screen`,
:class:`StepControl`) with the per-row sums reduced over workers.  Benchmarks time
one inner epoch with :func:`inner_epoch`.

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
sub-matrix is stored compactly (:class:`ActiveProblem`) and the kernel
(:func:`inner_epoch`) never touches a coordinate outside the sampled row.

The interface, in the order a solver uses it:

Problem set-up
    :func:`check_loss_penalty`, :func:`prepare_targets`, :func:`prepare_problem`,
    :class:`Blocks`, :class:`Compressed`, :class:`ActiveProblem`,
    :func:`row_sampling`, :func:`segment_sq_norms`, :func:`block_opnorms`.
Evaluation and screening
    :func:`loss_values`, :func:`loss_derivative`, :func:`conjugate_values`,
    :func:`block_norms`, :func:`local_pass`, :class:`Evaluation`,
    :func:`gap_safe_keep`, :func:`screen`, :func:`drop_blocks`.
Step and outer loop
    :func:`default_step`, :class:`StepControl`, :func:`inner_epoch`, :func:`solve`,
    :func:`expand_solution`.
Working sets with dual extrapolation
    :func:`solve_working_set` (small penalties; the default of
    :class:`~dptoolkit.linear_model.DSALLasso`; one compiled kernel),
    :func:`working_set_columns`; the gap it reports is that of the full problem.
Public helpers
    :func:`~dptoolkit.linear_model.lasso_alpha_max`,
    :func:`~dptoolkit.linear_model.lasso_duality_gap`.
Constants
    :data:`LOSSES`, :data:`PENALTIES`, :data:`SAMPLINGS`, :data:`METHODS`,
    :data:`GAMMA`, :data:`STEP_FACTOR`, :data:`WS_P0`, :data:`WS_K`,
    :data:`WS_CHECK`, :data:`WS_TOL_RATIO`, :data:`WS_MAX_EPOCHS`,
    :data:`COMPILED_LOOP_MAX_NNZ`.

References
----------
E. Ndiaye, O. Fercoq, A. Gramfort, J. Salmon. Gap Safe screening rules for
sparsity enforcing penalties. JMLR 18(128), 2017 (the sphere test above).

F. Pedregosa, R. Leblond, S. Lacoste-Julien. Breaking the nonsmooth barrier: a
scalable parallel method for composite optimization. NeurIPS 2017 (the SAGA
method of :func:`solve`).

M. Massias, A. Gramfort, J. Salmon. Celer: a fast solver for the Lasso with dual
extrapolation. ICML 2018; M. Massias, S. Vaiter, A. Gramfort, J. Salmon. Dual
extrapolation for sparse generalized linear models. JMLR 21(234), 2020 (the
working sets and the extrapolated dual point of :func:`solve_working_set`).

Q. Bertrand, M. Massias. Anderson acceleration of coordinate descent. AISTATS
2021 (the primal extrapolation in the sub-problems of :func:`solve_working_set`).
"""
from ._problem import (ActiveProblem, block_opnorms, Blocks, check_loss_penalty,
                       COMPILED_LOOP_MAX_NNZ, Compressed, expand_solution, GAMMA, LOSSES,
                       METHODS, PENALTIES, prepare_problem, prepare_targets, row_sampling,
                       SAMPLINGS, segment_sq_norms)
from ._outer import (default_step, inner_epoch, solve, STEP_FACTOR, StepControl)
from ._screening import (block_norms, conjugate_values, drop_blocks, Evaluation,
                         gap_safe_keep, lasso_alpha_max, lasso_duality_gap, local_pass,
                         loss_derivative, loss_values, screen)
from ._working_set import (solve_working_set, working_set_columns, WS_CHECK, WS_K,
                           WS_MAX_EPOCHS, WS_P0, WS_TOL_RATIO)
from ._estimators import DSALLasso, ProxASAGALasso, ProxSVRGLasso


def __getattr__(name):
    # The MPI solver is imported on first use: ``python -m dptoolkit.dsal.mpi``
    # imports this package first, and an eager import would make runpy execute a
    # module already in sys.modules (a RuntimeWarning on every rank).
    if name == "fit_distributed":
        from .mpi import fit_distributed
        return fit_distributed
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DSALLasso", "ProxSVRGLasso", "ProxASAGALasso", "fit_distributed",
    "LOSSES",
    "PENALTIES",
    "SAMPLINGS",
    "METHODS",
    "GAMMA",
    "STEP_FACTOR",
    "loss_values",
    "loss_derivative",
    "conjugate_values",
    "block_norms",
    "gap_safe_keep",
    "Blocks",
    "Compressed",
    "ActiveProblem",
    "segment_sq_norms",
    "row_sampling",
    "block_opnorms",
    "local_pass",
    "Evaluation",
    "StepControl",
    "screen",
    "drop_blocks",
    "default_step",
    "inner_epoch",
    "solve",
    "expand_solution",
    "WS_P0",
    "WS_K",
    "WS_CHECK",
    "WS_TOL_RATIO",
    "WS_MAX_EPOCHS",
    "COMPILED_LOOP_MAX_NNZ",
    "working_set_columns",
    "solve_working_set",
    "check_loss_penalty",
    "prepare_targets",
    "prepare_problem",
    "lasso_alpha_max",
    "lasso_duality_gap",
]
