"""Private feature selection: the canonical Lipschitz top-k mechanism, SIS / DP-SIS,
the two-stage (subsample-and-aggregate LASSO) baseline, selection metrics and a
select-then-fit pipeline under one privacy budget.

Paper: Swope, Khanna, Doldo, Roy, Raff. *Feature Selection from Differentially
Private Correlations.* AISec 2024.
"""
from ._metrics import top_great_good, top_k_accuracy
from ._pipeline import PrivateSelectThenFit
from ._dpsis_scores import dpsis_scores
from ._sis import DPSIS, SIS, auto_k, gaussian_auto_k
from ._topk import canonical_lipschitz_top_k, peeling_top_k
from ._two_stage import TwoStageSelector, block_support_counts

#: The selectors, the select-then-fit meta-estimator and the two private top-k
#: mechanisms.  ``auto_k``, ``gaussian_auto_k``, ``dpsis_scores``,
#: ``block_support_counts`` and the study metrics (``top_k_accuracy``,
#: ``top_great_good``) are importable for the studies but are not part of the API.
__all__ = [
    "DPSIS",
    "SIS",
    "TwoStageSelector",
    "PrivateSelectThenFit",
    "canonical_lipschitz_top_k",
    "peeling_top_k",
]
