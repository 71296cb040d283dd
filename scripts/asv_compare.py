"""Benchmark two commits with asv and fail on regressions (``asv continuous`` offline).

    python scripts/asv_compare.py BASE HEAD [--bench REGEX] [--factor 1.2]

Runs the asv benchmarks selected by ``--bench`` (a regular expression, as
``asv run --bench``; repeatable) on commit BASE and on commit HEAD, then prints
``asv compare BASE HEAD --factor FACTOR --split`` and the list of regressions:
benchmarks at least FACTOR times slower (or larger, for ``peakmem_``/``track_``)
on HEAD than on BASE and significantly so by asv's test on the samples
(``+`` in asv's table), and benchmarks that fail on HEAD but ran on BASE
(``!``).  Exit status: 0 when there is none, 1 when there is at least one, 2
on a usage or build error.

Why not ``asv continuous`` itself: it builds each commit into an asv-managed
virtual environment (``virtualenv``/``conda`` environment types), which needs
the package's build and run dependencies from a package index for every
environment; with ``-E existing`` asv refuses a range of commits ("No range
spec may be specified if benchmarking in an existing environment").  This
script keeps asv's measurement and comparison and does the build itself, in
the Python that runs it (``-E existing:<that python>``):

1. each commit is exported (``git archive``) into a scratch folder;
2. its Cython extensions are built in place there
   (``python setup.py build_ext --inplace``), except those whose ``.pyx`` and
   whose ``.pxd``/``.h`` files are byte-identical to this checkout's and whose
   compiled module here is newer than its ``.pyx``: those are copied (a change to
   ``setup.py`` alone, e.g. its compiler directives, is not detected: pass
   ``--rebuild`` then);
3. ``asv run -E existing:<python> --set-commit-hash <commit>`` runs the
   benchmarks with ``ASV_PYTHONPATH`` (asv's way to set ``PYTHONPATH`` in its
   benchmark processes) pointing at that folder, so ``import dptoolkit`` is
   that commit's code (checked before running);
4. ``--rounds R`` alternates the commits (BASE HEAD, HEAD BASE, ...) with
   ``--append-samples``, so slow drifts of a shared machine's load fall on both
   sides alike.

The benchmark suite is this checkout's (``asv_benchmarks/benchmarks``), for
both commits, as with ``asv continuous``.  Results go to a scratch results
folder (``--results-dir``; by default a new temporary folder), never to
``asv_benchmarks/results``.  Run ``python -m asv machine --yes`` once per
machine first (the script does it when no machine file exists).

Timing benchmarks on a shared machine: asv compares the samples with a
Mann-Whitney-type test (its ``_stats.is_different``) before applying the
factor; with ``--quick`` (one sample per benchmark) only the factor decides,
so use a larger factor there.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ASV_DIR = REPO / "asv_benchmarks"


class CompareError(RuntimeError):
    """A step failed (git, build, asv): exit status 2."""


def run(cmd, *, cwd=None, env=None, capture=False):
    """Run a command, echoing it; raise CompareError on a non-zero status."""
    print("$ " + " ".join(str(c) for c in cmd), flush=True)
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, text=True,
                       capture_output=capture)
    if p.returncode != 0:
        out = (p.stdout or "") + (p.stderr or "") if capture else ""
        raise CompareError(f"command failed with status {p.returncode}: "
                           f"{' '.join(str(c) for c in cmd)}\n{out[-4000:]}")
    return p.stdout if capture else ""


def git(*args):
    return run(["git", *args], cwd=REPO, capture=True).strip()


def resolve(commit):
    """Full hash of a commit name (branch, tag, short hash)."""
    try:
        return git("rev-parse", "--verify", f"{commit}^{{commit}}")
    except CompareError:
        raise CompareError(f"BASE/HEAD: {commit!r} is not a commit of {REPO}") from None


def load_conf():
    """asv.conf.json of this checkout (asv's JSON allows // comments)."""
    from asv import util

    return util.load_json(str(ASV_DIR / "asv.conf.json"), js_comments=True)


def write_conf(workdir, results_dir):
    """A copy of the asv configuration with absolute paths and scratch outputs."""
    conf = load_conf()
    conf.update(repo=str(REPO), benchmark_dir=str(ASV_DIR / "benchmarks"),
                results_dir=str(results_dir), env_dir=str(workdir / "env"),
                html_dir=str(workdir / "html"), environment_type="existing")
    path = workdir / "asv.conf.json"
    path.write_text(json.dumps(conf, indent=2))
    return path


def _digest(data):
    return hashlib.sha256(data).hexdigest()


def _shared_sources(root):
    """Digests of every .pxd/.h of the package under ``root`` (shared by modules)."""
    pkg = Path(root) / "dptoolkit"
    return {str(p.relative_to(root)): _digest(p.read_bytes())
            for ext in ("*.pxd", "*.h") for p in sorted(pkg.rglob(ext))}


def export(commit, dest):
    """Extract the tree of ``commit`` into ``dest`` (git archive | tar)."""
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=REPO,
                             capture_output=True)
    if archive.returncode != 0:
        raise CompareError(f"git archive {commit} failed: {archive.stderr.decode()}")
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)


def build(src, python, rebuild=False):
    """Build (or copy from this checkout) every Cython extension of ``src``.

    Returns the lists (copied, built) of module names.
    """
    pyx = sorted(p for p in (src / "dptoolkit").rglob("*.pyx"))
    if not pyx:
        raise CompareError(f"no .pyx under {src / 'dptoolkit'}: not a dptoolkit commit?")
    same_shared = not rebuild and _shared_sources(src) == _shared_sources(REPO)
    copied, to_build = [], []
    for p in pyx:
        rel = p.relative_to(src)
        module = ".".join(rel.with_suffix("").parts)
        here = REPO / rel
        compiled = sorted(here.parent.glob(here.stem + ".*.so"))
        if (same_shared and here.exists()
                and _digest(here.read_bytes()) == _digest(p.read_bytes())
                and compiled and compiled[-1].stat().st_mtime >= here.stat().st_mtime):
            shutil.copy2(compiled[-1], src / rel.parent / compiled[-1].name)
            copied.append(module)
        else:
            to_build.append(module)
    if to_build:
        env = dict(os.environ, DPTOOLKIT_EXTENSIONS=",".join(to_build),
                   DPTOOLKIT_BUILD_JOBS=os.environ.get("DPTOOLKIT_BUILD_JOBS", "1"))
        env.pop("DPTOOLKIT_CYTHON_DEBUG", None)
        run([python, "setup.py", "build_ext", "--inplace", "-q"], cwd=src, env=env,
            capture=True)
    return copied, to_build


def check_import(src, python, workdir):
    """``import dptoolkit`` with PYTHONPATH=src must load src's package."""
    env = dict(os.environ, PYTHONPATH=str(src))
    out = run([python, "-c", "import dptoolkit, dptoolkit.kernels; print(dptoolkit.__file__)"],
              cwd=workdir, env=env, capture=True).strip()
    if not Path(out).resolve().is_relative_to(src.resolve()):
        raise CompareError(f"import dptoolkit loads {out}, not {src}")


def parse_regressions(table):
    """Rows of ``asv compare``'s GitHub table marked ``+`` (worse) or ``!`` (failed)."""
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and len(cells) == 5 and cells[0] in ("+", "!"):
            rows.append(dict(mark=cells[0], before=cells[1], after=cells[2],
                             ratio=cells[3], benchmark=cells[4]))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Run asv benchmarks on two commits and report regressions "
                    "(exit 1 if any).")
    p.add_argument("base", help="reference commit (branch, tag or hash)")
    p.add_argument("head", help="commit compared with it")
    p.add_argument("--bench", "-b", action="append", default=[],
                   help="regular expression of the benchmarks to run (repeatable; "
                        "default: all)")
    p.add_argument("--factor", "-f", type=float, default=1.1,
                   help="ratio HEAD/BASE above which a significant change is a "
                        "regression (> 1; default 1.1, asv's default)")
    p.add_argument("--rounds", type=int, default=2,
                   help="alternating runs of each commit, samples appended (>= 1)")
    p.add_argument("--quick", action="store_true",
                   help="one sample per benchmark (asv run --quick): fast, no statistics")
    p.add_argument("--python", default=sys.executable,
                   help="interpreter that builds and runs (default: this one)")
    p.add_argument("--results-dir", type=Path, default=None,
                   help="where asv writes results (default: a scratch folder)")
    p.add_argument("--rebuild", action="store_true",
                   help="build every extension of both commits (copy none)")
    p.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = p.parse_args(argv)
    if not args.factor > 1.0:
        p.error(f"--factor must be > 1, got {args.factor}")
    if args.rounds < 1:
        p.error(f"--rounds must be >= 1, got {args.rounds}")
    if args.quick and args.rounds > 1:
        print("# --quick: one round only (a single sample per benchmark)", flush=True)
        args.rounds = 1
    for regex in args.bench:
        try:
            re.compile(regex)
        except re.error as exc:
            p.error(f"--bench {regex!r} is not a regular expression: {exc}")

    workdir = Path(tempfile.mkdtemp(prefix="asv-compare-"))
    try:
        base, head = resolve(args.base), resolve(args.head)
        if base == head:
            raise CompareError(f"BASE and HEAD are the same commit {base[:8]}")
        results = args.results_dir or workdir / "results"
        conf = write_conf(workdir, results)
        asv = [args.python, "-m", "asv", "--config", conf]
        if not (Path.home() / ".asv-machine.json").exists():
            run(asv + ["machine", "--yes"])
        src = {}
        for name, commit in (("base", base), ("head", head)):
            src[commit] = workdir / f"src-{name}-{commit[:8]}"
            export(commit, src[commit])
            copied, built = build(src[commit], args.python, args.rebuild)
            print(f"# {name} {commit[:8]}: built {built or 'nothing'}; "
                  f"copied from {REPO} {copied or 'nothing'}", flush=True)
            check_import(src[commit], args.python, workdir)
        env_spec = f"existing:{args.python}"
        bench = [a for regex in args.bench for a in ("--bench", regex)]
        order = [base, head]
        for r in range(args.rounds):
            for commit in (order if r % 2 == 0 else order[::-1]):
                env = dict(os.environ, ASV_PYTHONPATH=str(src[commit]))
                run(asv + ["run", "-E", env_spec, "--set-commit-hash", commit,
                           "--show-stderr", *bench,
                           *(["--quick"] if args.quick else []),
                           *(["--append-samples"] if r > 0 else [])], env=env)
        table = run(asv + ["compare", base, head, "--factor", str(args.factor),
                           "--split", "-E", env_spec], capture=True)
        print(table, flush=True)
        regressions = parse_regressions(table)
        if regressions:
            print(f"REGRESSIONS: {len(regressions)} benchmark(s) worse by more than "
                  f"a factor {args.factor:g} on {head[:8]} ({args.head}) against "
                  f"{base[:8]} ({args.base}):")
            for row in regressions:
                what = "failed" if row["mark"] == "!" else f"x{row['ratio']}"
                print(f"  {row['benchmark']}: {row['before']} -> {row['after']} ({what})")
            return 1
        print(f"no regression by more than a factor {args.factor:g} "
              f"({head[:8]} against {base[:8]})")
        return 0
    except CompareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if args.keep:
            print(f"# scratch folder kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
