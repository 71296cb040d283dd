"""Shared fixtures.  Real data is found through ``dptoolkit.datasets.get_data_path``
(environment variable ``DPTOOLKIT_DATA``, default ``../shared/data``); tests that
need a file skip with a clear reason when it is absent."""
import pytest

from dptoolkit import _private
from dptoolkit.datasets import get_data_path


@pytest.fixture(autouse=True, scope="session")
def _seed_warning_already_shown():
    """Tests fix ``random_state`` for reproducibility; a private fit given a seed
    warns once per process (``dptoolkit._private.warn_fixed_noise``).  Which test
    would get that one warning depends on the order the tests run in, and tests
    that turn PrivacyLeakWarning into errors to check another leak would fail or
    pass with it.  So the session starts with the warning marked as shown; the
    tests of the warning (and the command line, which starts its own scope) use
    ``fixed_noise_warning_scope()`` to see it again."""
    saved = _private._FIXED_NOISE_WARNED[0]
    _private._FIXED_NOISE_WARNED[0] = True
    yield
    _private._FIXED_NOISE_WARNED[0] = saved


@pytest.fixture
def data_file():
    """Return a function name -> path that skips the test when the file is missing."""

    def _get(name):
        path = get_data_path(name)
        if not path.exists():
            pytest.skip(f"dataset {name} not found at {path} (set DPTOOLKIT_DATA)")
        return path

    return _get
