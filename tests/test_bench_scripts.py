"""The non-timing logic of scripts/bench_scaling.py and scripts/asv_compare.py.

The scaling study's data generator (exactly k distinct non-zeros per row, seeded),
its log-log slope, and the parser that turns ``asv compare``'s table into the
list of regressions (the exit status of ``asv_compare.py``).  No timing is
asserted.
"""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _load(name):
    path = SCRIPTS / f"{name}.py"
    if not path.exists():
        pytest.skip(f"{path} not present (tests run outside the source tree)")
    spec = importlib.util.spec_from_file_location(f"_script_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def scaling():
    return _load("bench_scaling")


@pytest.fixture(scope="module")
def compare():
    return _load("asv_compare")


@pytest.mark.parametrize("generator", ["zipf", "uniform"])
def test_make_data_shape_and_seed(scaling, generator):
    X, y = scaling.make_data(generator, 500, 2000, 20, seed=3)
    X2, y2 = scaling.make_data(generator, 500, 2000, 20, seed=3)
    assert X.shape == (500, 2000) and X.dtype == np.float64
    assert set(np.unique(X.data)) == {1.0}
    assert set(np.unique(y)) <= {0.0, 1.0}
    np.testing.assert_array_equal(X.indices, X2.indices)
    np.testing.assert_array_equal(y, y2)
    if generator == "zipf":
        # exactly k distinct columns per row, whatever the repeats drawn
        assert np.all(np.diff(X.indptr) == 20)
        for i in range(500):
            cols = X.indices[X.indptr[i]:X.indptr[i + 1]]
            assert len(np.unique(cols)) == 20
    else:
        # density k / D: 20 per row on average (500 rows: 10,000 in total)
        assert X.nnz == 500 * 20


def test_zipf_rows_follow_the_popularity(scaling):
    # Zipf(1) over 1000 columns: the most popular column is in a row with
    # probability about 1 - (1 - 1/H_1000)^k; with k = 5, H = 7.49, about 0.51
    # (drawing distinct columns raises it a little).  Over 4000 rows the
    # observed frequency is within 0.44..0.64 except with probability < 1e-9
    # (normal approximation, sd 0.008); a uniform draw would give 0.005.
    rng = np.random.default_rng(0)
    cols = scaling.zipf_rows(4000, 1000, 5, rng)
    counts = np.bincount(cols.ravel(), minlength=1000)
    assert 0.44 < counts.max() / 4000 < 0.64


def test_zipf_rows_refuse_more_nnz_than_columns(scaling):
    with pytest.raises(ValueError, match="nnz_per_row"):
        scaling.zipf_rows(3, 4, 5, np.random.default_rng(0))


def test_views_are_canonical_int64(scaling):
    X, _ = scaling.make_data("uniform", 50, 300, 10, seed=0)
    Xr, Xc = scaling.views(X)
    assert Xr.indices.dtype == Xr.indptr.dtype == np.int64
    assert Xc.indices.dtype == Xc.indptr.dtype == np.int64
    assert Xr.has_sorted_indices and Xc.has_sorted_indices
    assert abs(Xr - X).sum() == 0 and abs(Xc - X).sum() == 0


def test_slope_recovers_an_exponent(scaling):
    x = np.logspace(5, 7, 6)
    b, se = scaling.slope(x, 3.0 * x ** 0.5)
    assert b == pytest.approx(0.5, abs=1e-12)
    assert se == pytest.approx(0.0, abs=1e-9)
    b, se = scaling.slope(x, x * (1 + 0.1 * np.array([1, -1, 1, -1, 1, -1])))
    assert abs(b - 1.0) < 0.05 and se > 0


# asv compare --split output (GitHub table format of asv 0.6)
_TABLE = """
Benchmarks that have stayed the same:

| Change   | Before [57f915fb] <main~1>   | After [ed54d5f1] <scratch>   |   Ratio | Benchmark (Parameter)                          |
|----------|------------------------------|------------------------------|---------|------------------------------------------------|
|          | 12.1+-0.2us                  | 12.3+-0.1us                  |    1.02 | samplers.GroupedSampler.time_draw_1(16384)     |
|          | 21.0+-1ms                    | 23.0+-2ms                    |   ~1.10 | frank_wolfe.ScalingPrivate.time_steps(65536, 'standard') |

Benchmarks that have got worse:

| Change   | Before [57f915fb] <main~1>   | After [ed54d5f1] <scratch>   |   Ratio | Benchmark (Parameter)                          |
|----------|------------------------------|------------------------------|---------|------------------------------------------------|
| +        | 3.10+-0.1ms                  | 410+-3ms                     |  132.26 | frank_wolfe.ScalingPrivate.time_steps(4194304, 'fast') |
| !        | 1.00+-0ms                    | failed                       |     n/a | samplers.GroupedSampler.time_build(16384)      |
"""


def test_parse_regressions_keeps_worse_and_failed_rows(compare):
    rows = compare.parse_regressions(_TABLE)
    assert [r["mark"] for r in rows] == ["+", "!"]
    assert rows[0]["benchmark"] == "frank_wolfe.ScalingPrivate.time_steps(4194304, 'fast')"
    assert rows[0]["ratio"] == "132.26"
    assert rows[0]["before"] == "3.10+-0.1ms" and rows[0]["after"] == "410+-3ms"
    assert rows[1]["after"] == "failed"


def test_parse_regressions_ignores_same_and_improved(compare):
    improved = _TABLE.replace("| +  ", "| -  ").replace("| !  ", "| x  ")
    assert compare.parse_regressions(improved) == []
    assert compare.parse_regressions("") == []


@pytest.mark.parametrize("argv, message", [
    (["a", "b", "--factor", "1.0"], "--factor must be > 1"),
    (["a", "b", "--rounds", "0"], "--rounds must be >= 1"),
    (["a", "b", "--bench", "("], "is not a regular expression"),
])
def test_bad_arguments_name_the_option(compare, capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        compare.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_unknown_commit_is_an_error(compare, capsys):
    assert compare.main(["no-such-commit-xyz", "HEAD"]) == 2
    assert "is not a commit" in capsys.readouterr().err


def test_results_table_rows(tmp_path):
    table = _load("asv_results_table")
    assert table.human(0.0123, "seconds") == "12.3 ms"
    assert table.human(4.1e-6, "seconds") == "4.1 us"
    assert table.human(3e-9, "seconds") == "3 ns"
    assert table.human(2 * 2**20, "bytes") == "2 MiB"
    assert table.human(float("nan"), "non-zeros") == "n/a"
    cols = ["result", "params", "version", "started_at", "duration", "stats_ci_99_a",
            "stats_ci_99_b", "stats_q_25", "stats_q_75", "stats_number",
            "stats_repeat", "samples", "profile"]
    results = {"m.C.time_x": [[1e-3, 2e-3], [["1", "2"], ["'fast'"]], "v", 0, 1.0,
                              None, None, [0.9e-3, 1.8e-3], [1.1e-3, 2.2e-3], [1, 1],
                              [10, 8], None, None],
               "m.C.peakmem_y": [[2**21], [], "v", 0, 1.0] + [None] * 8}
    f = tmp_path / "abc-existing.json"
    f.write_text(__import__("json").dumps({"result_columns": cols, "results": results}))
    bench = {"m.C.time_x": {"unit": "seconds", "param_names": ["n", "solver"]},
             "m.C.peakmem_y": {"unit": "bytes", "param_names": []}}
    rows = table.rows_of(f, bench)
    assert [r["benchmark"] for r in rows] == ["m.C.peakmem_y", "m.C.time_x", "m.C.time_x"]
    assert rows[0]["result"] == "2 MiB" and rows[0]["parameters"] == ""
    assert rows[1]["parameters"] == "n=1, solver=fast"
    assert rows[2]["result"] == "2 ms" and rows[2]["interquartile"] == "1.8 ms - 2.2 ms"
    assert rows[2]["samples"] == 8


# ------------------------------------------------------------- bench_kdda_shaped.py
@pytest.fixture(scope="module")
def kdda():
    return _load("bench_kdda_shaped")


def test_kdda_parses_time_v(kdda):
    text = ("\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:02:03.5\n"
            "\tMaximum resident set size (kbytes): 2097152\n")
    assert kdda.parse_time_v(text) == {"time_v_max_rss_gb": 2.0, "time_v_wall_s": 3723.5}
    assert kdda.parse_time_v("") == {"time_v_max_rss_gb": None, "time_v_wall_s": 0}


@pytest.mark.parametrize("argv,message", [
    (["fw", "--fraction", "0"], "--fraction must be in (0, 1]"),
    (["fw", "--fraction", "1.5"], "--fraction must be in (0, 1]"),
    (["standard", "--standard-steps", "0"], "--standard-steps must be >= 1"),
])
def test_kdda_bad_arguments_name_the_option(kdda, capsys, argv, message):
    with pytest.raises(SystemExit):
        kdda.main(argv)
    assert message in capsys.readouterr().err


def test_kdda_jobs_run_on_a_sliver(kdda, capsys):
    """Every job on 2e-5 of the rows (168 rows, the full D): the JSON line of each."""
    import json

    for job in ("fw", "dpnb", "standard"):
        kdda.main([job, "--fraction", "2e-5", "--standard-steps", "1"])
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert out["job"] == job and out["n_samples"] == 168
        assert out["n_features"] == 20_216_830 and out["peak_rss_gb"] > 0
        assert ("standard_step_s" in out) == (job == "standard")
