"""scikit-learn's own estimator checks over every discovered public estimator, in
its non-private mode (``epsilon=None``) and a private mode at a large epsilon
(``dptoolkit._discovery.check_instances``); the known failures are declared with
their reasons (``dptoolkit._discovery.expected_failed_checks``)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.utils.estimator_checks import parametrize_with_checks

from dptoolkit._discovery import all_estimators, check_instances, expected_failed_checks

ESTIMATORS = all_estimators()
INSTANCES = [est for _, cls in ESTIMATORS for est in check_instances(cls)]


@parametrize_with_checks(INSTANCES, expected_failed_checks=expected_failed_checks)
def test_sklearn_checks(estimator, check):
    with warnings.catch_warnings():
        # the checks' data leave the public bounds (clipped) and read N and the
        # label set from the data: both warned, neither an error
        warnings.simplefilter("ignore")
        check(estimator)
