"""Private generalised linear models trained by gradient or coordinate methods:
DP-SGD, DP-SCD, DP-IGHT and naive-Bayes-scaled logistic regression, with their
compiled kernels."""
from ._dpsgd import DPSGDClassifier, DPSGDRegressor
from ._ight import DPIGHTClassifier
from ._nb_logistic import DPNBLogisticClassifier
from ._scd import DPSCDClassifier, DPSCDRegressor

__all__ = ["DPSGDClassifier", "DPSGDRegressor", "DPIGHTClassifier",
           "DPNBLogisticClassifier", "DPSCDClassifier", "DPSCDRegressor"]
