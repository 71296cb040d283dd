"""Linear models: Frank-Wolfe LASSO (private and not), the Sparsifier and DP-IGHT
(Khanna, Lu and Raff), DP-SCD and DP-SGD (Damaskinos et al.), private
naive-Bayes-scaled logistic regression, and the DSAL Lasso solvers (Bao et al.).

Each algorithm family is a wing with its compiled kernels beside it:
``_frank_wolfe/`` (Frank-Wolfe and its kernels), ``_glm/`` (DP-SGD, DP-SCD,
DP-IGHT, naive-Bayes-scaled logistic regression) and, as its own subpackage,
:mod:`dptoolkit.dsal`, whose estimators are re-exported here.
"""
from ..dsal import (DSALLasso, ProxASAGALasso, ProxSVRGLasso, lasso_alpha_max,
                    lasso_duality_gap)
from ._frank_wolfe import DEFAULT_REFRESH_TOL, FrankWolfeLassoClassifier
from ._glm import (DPIGHTClassifier, DPNBLogisticClassifier, DPSCDClassifier,
                   DPSCDRegressor, DPSGDClassifier, DPSGDRegressor)
from ._glm._base import primal_objective, transform_rows
from ._sparsifier import SparsifiedLassoClassifier

#: The estimators, and the smallest penalty at which the Lasso's solution is zero (to
#: choose ``alpha``).  ``DEFAULT_REFRESH_TOL``, ``lasso_duality_gap``,
#: ``primal_objective`` and ``transform_rows`` are importable for the studies and
#: benchmarks but are not part of the API.
__all__ = [
    "FrankWolfeLassoClassifier",
    "SparsifiedLassoClassifier",
    "DPIGHTClassifier",
    "DPNBLogisticClassifier",
    "DPSCDClassifier",
    "DPSCDRegressor",
    "DPSGDClassifier",
    "DPSGDRegressor",
    "DSALLasso",
    "ProxASAGALasso",
    "ProxSVRGLasso",
    "lasso_alpha_max",
]
