"""Refactorings keep results: every reference fit's coef_ is bit-identical to the
recorded one (tests/_reference_fits.py records; same seed, same machine kind)."""
import json

from _reference_fits import HASH_FILE, fit_hashes


def test_reference_fits_bit_identical(data_file):
    data_file("a9a.bz2")
    recorded = json.loads(HASH_FILE.read_text())
    now = fit_hashes()
    assert sorted(now) == sorted(recorded)
    changed = sorted(k for k in now if now[k] != recorded[k])
    assert not changed, f"coef_ changed for {changed}"
