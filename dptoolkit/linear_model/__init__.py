"""Linear models: Frank-Wolfe LASSO (private and not), the Sparsifier and DP-IGHT
(Khanna, Lu and Raff), DP-SCD and DP-SGD (Damaskinos et al.), private
naive-Bayes-scaled logistic regression, and the DSAL Lasso solvers (Bao et al.)."""
from ._frank_wolfe import DEFAULT_REFRESH_TOL, FrankWolfeLassoClassifier
from ._dsal import (DSALLasso, ProxASAGALasso, ProxSVRGLasso, lasso_alpha_max,
                    lasso_duality_gap)
from ._base import primal_objective, transform_rows
from ._scd import DPSCDClassifier, DPSCDRegressor
from ._dpsgd import DPSGDClassifier, DPSGDRegressor
from ._sparsifier import SparsifiedLassoClassifier
from ._ight import DPIGHTClassifier
from ._nb_logistic import DPNBLogisticClassifier

__all__ = [
    "DEFAULT_REFRESH_TOL",
    "FrankWolfeLassoClassifier",
    "DSALLasso",
    "ProxASAGALasso",
    "ProxSVRGLasso",
    "lasso_alpha_max",
    "lasso_duality_gap",
    "DPSCDClassifier",
    "DPSCDRegressor",
    "DPSGDClassifier",
    "DPSGDRegressor",
    "SparsifiedLassoClassifier",
    "DPIGHTClassifier",
    "DPNBLogisticClassifier",
    "primal_objective",
    "transform_rows",
]
