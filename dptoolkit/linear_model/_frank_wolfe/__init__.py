"""Frank-Wolfe LASSO logistic regression: the estimator, its budget split, the
private screening of candidate columns, the multinomial fit and the compiled kernels
(sparse-aware iterations, heaps, the Big-Step Little-Step sampler)."""
from ._estimator import DEFAULT_REFRESH_TOL, FrankWolfeLassoClassifier

__all__ = ["DEFAULT_REFRESH_TOL", "FrankWolfeLassoClassifier"]
