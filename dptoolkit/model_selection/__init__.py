"""Private model selection: hyperparameter search whose cost is part of the guarantee.

- :class:`PrivateHyperparameterSearch`: random search with a random number of
  private runs (Papernot and Steinke 2022; Liu and Talwar 2019 for pure DP).
"""
from ._search import PrivateHyperparameterSearch

__all__ = ["PrivateHyperparameterSearch"]
