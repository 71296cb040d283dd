"""Turn the asv results of one commit into a CSV table (benchmark, parameters, result).

    python scripts/asv_results_table.py COMMIT [--out FILE.csv]

Reads ``asv_benchmarks/results/<machine>/<commit>-*.json`` (written by ``asv
run ... --set-commit-hash COMMIT``) and ``results/benchmarks.json`` (units and
parameter names), and writes one row per benchmark and parameter combination:
``result`` is asv's median (times in s/ms/us/ns, ``peakmem_`` in MiB, ``track_``
values with their unit), ``interquartile`` the 25-75% range of the timing
samples, ``samples`` how many timed calls asv made.  The docs' table of asv
results (*Studies > Benchmarks*) is this file.
"""
import argparse
import csv
import itertools
import json
import math
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def human(value, unit):
    """A value in asv's unit, readable: times scaled to s/ms/us/ns, bytes to MiB."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if unit == "seconds":
        for name, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
            if value >= scale:
                return f"{value / scale:.3g} {name}"
        return f"{value / 1e-9:.3g} ns"
    if unit == "bytes":
        return f"{value / 2**20:.0f} MiB"
    return f"{value:.6g} {unit}".strip()


def rows_of(result_file, benchmarks):
    """Rows (dicts) of one asv result file (asv >= 0.6 columnar format)."""
    data = json.loads(Path(result_file).read_text())
    columns = data["result_columns"]
    rows = []
    for name, values in sorted(data["results"].items()):
        r = dict(zip(columns, values))
        info = benchmarks.get(name, {})
        unit = info.get("unit", "")
        names = info.get("param_names", [])
        combos = list(itertools.product(*r["params"])) if r.get("params") else [()]
        results = r["result"] if isinstance(r["result"], list) else [r["result"]]
        q25, q75 = r.get("stats_q_25"), r.get("stats_q_75")
        repeat = r.get("stats_repeat")
        for i, combo in enumerate(combos):
            value = results[i] if i < len(results) else None
            iqr = ""
            if (unit == "seconds" and q25 and q75 and q25[i] is not None
                    and q75[i] is not None):
                iqr = f"{human(q25[i], unit)} - {human(q75[i], unit)}"
            rows.append(dict(
                benchmark=name,
                parameters=", ".join(f"{p}={str(v).strip(chr(39))}"
                                     for p, v in zip(names, combo)),
                result=human(value, unit), interquartile=iqr,
                samples=repeat[i] if repeat and repeat[i] is not None else ""))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("commit", help="commit (any name git knows) whose results to read")
    p.add_argument("--results-dir", type=Path, default=REPO / "asv_benchmarks" / "results")
    p.add_argument("--machine", default=None,
                   help="machine folder under the results (default: the only one)")
    p.add_argument("--out", type=Path, default=None, help="CSV file (default: stdout)")
    args = p.parse_args(argv)
    import subprocess

    h = subprocess.run(["git", "rev-parse", "--verify", f"{args.commit}^{{commit}}"],
                       cwd=REPO, capture_output=True, text=True)
    if h.returncode != 0:
        p.error(f"COMMIT {args.commit!r} is not a commit of {REPO}")
    commit = h.stdout.strip()
    if not args.results_dir.is_dir():
        p.error(f"--results-dir {args.results_dir} does not exist (run asv first)")
    machines = [d for d in args.results_dir.iterdir() if (d / "machine.json").exists()]
    if args.machine is not None:
        machines = [d for d in machines if d.name == args.machine]
    if len(machines) != 1:
        p.error(f"--machine: expected one machine folder in {args.results_dir}, found "
                f"{[d.name for d in machines]}")
    files = sorted(machines[0].glob(f"{commit[:8]}-*.json"))
    if not files:
        p.error(f"no results for {commit[:8]} in {machines[0]}")
    benchmarks = json.loads((args.results_dir / "benchmarks.json").read_text())
    rows = [row for f in files for row in rows_of(f, benchmarks)]
    fields = ["benchmark", "parameters", "result", "interquartile", "samples"]
    out = open(args.out, "w", newline="") if args.out else sys.stdout
    try:
        w = csv.DictWriter(out, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    finally:
        if args.out:
            out.close()
    print(f"# {len(rows)} rows from {', '.join(f.name for f in files)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
