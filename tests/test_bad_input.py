"""Bad input over the whole public API, each case in a child process.

Every case calls one public function, method, estimator, loader or the command
line with one bad argument and states the expected outcome:

* ``Raises(TypeError, r"epsilon")``: the exception type and a regular
  expression the message must match (it names the argument, or the file, and
  where useful the allowed range);
* ``Accepts(check)``: a documented acceptance, and ``check(result)`` verifies
  the value returned (a silent wrong answer fails);
* ``Exits(2, r"--epsilon")``: the command line's exit status and a pattern of
  its standard error.

Each case runs in a child forked from this process (which has imported
dptoolkit, so a case costs milliseconds), under a memory cap and a timeout.
A case fails on a *crash* (the child dies by a signal), a *hang* (it outlives
the timeout and is killed), a *silent acceptance* (no exception where one is
expected), a *wrong answer* (the check fails) or an error whose type or
message does not match (e.g. a ``MemoryError`` instead of a named cap).
Nothing here is random except through fixed seeds.
"""
import bz2
import io
import math
import multiprocessing
import os
import re
import resource
import sys
import traceback
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import is_classifier

import dptoolkit.accounting as acc
import dptoolkit.cli as cli
import dptoolkit.datasets as ds
import dptoolkit.kernels as kernels
import dptoolkit.linear_model as lm
import dptoolkit.mechanisms as mech
import dptoolkit.model_selection as ms
import dptoolkit.selection as sel
from dptoolkit.selection._metrics import order_statistics_hit
from dptoolkit import _persistence
from dptoolkit.accounting import events as ev
from dptoolkit.exceptions import BudgetExceededError, ScreeningUnavailableError

#: Seconds a case may run before it counts as a hang.
TIMEOUT = 20.0
#: Extra address space a case may allocate beyond the parent's (bytes).
MEMORY_HEADROOM = 1536 * 2**20

_CTX = multiprocessing.get_context("fork")


# ---------------------------------------------------------------- expectations
@dataclass(frozen=True)
class Raises:
    exc: type
    match: str


@dataclass(frozen=True)
class Accepts:
    check: object          # callable(result) -> bool
    what: str = ""


@dataclass(frozen=True)
class Exits:
    status: int
    match: str


@dataclass(frozen=True)
class Case:
    id: str
    call: object           # callable() -> result
    expect: object


CASES = []


def case(id, call, expect):
    CASES.append(Case(id, call, expect))


# ---------------------------------------------------------------- the runner
def _cli(*argv):
    """Run the command line in the child; return (exit status, stderr text)."""
    err, out = io.StringIO(), io.StringIO()
    old = sys.stderr, sys.stdout
    sys.stderr, sys.stdout = err, out
    try:
        try:
            status = cli.main(list(argv))
        except SystemExit as exc:
            status = exc.code
    finally:
        sys.stderr, sys.stdout = old
    return status, err.getvalue()


def _child(conn, c):
    limit = _vm_size() + MEMORY_HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = c.call()
    except BaseException as exc:   # noqa: BLE001 - reported to the parent
        names = [f"{k.__module__}.{k.__qualname__}" for k in type(exc).__mro__]
        conn.send(("raised", names, f"{type(exc).__name__}: {exc}",
                   traceback.format_exc(limit=-3)))
        return
    if isinstance(c.expect, Accepts):
        try:
            ok = bool(c.expect.check(result))
        except BaseException as exc:  # noqa: BLE001
            conn.send(("check-error", None, repr(exc), traceback.format_exc(limit=-3)))
            return
        conn.send(("returned", ok, _short(result), ""))
    elif isinstance(c.expect, Exits):
        conn.send(("returned", result, _short(result), ""))
    else:
        conn.send(("returned", None, _short(result), ""))


def _short(obj):
    try:
        text = repr(obj)
    except Exception:  # noqa: BLE001
        text = object.__repr__(obj)
    return text[:300]


def _vm_size():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def run_case(c, timeout=TIMEOUT):
    """Run ``c`` in a forked child; return None on success, else a failure text."""
    recv, send = _CTX.Pipe(duplex=False)
    proc = _CTX.Process(target=_child, args=(send, c), daemon=True)
    proc.start()
    send.close()
    msg = None
    if recv.poll(timeout):
        try:
            msg = recv.recv()
        except EOFError:
            msg = None
    proc.join(timeout if msg is not None else 1.0)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return f"hang: still running after {timeout:g} s (killed)"
    if proc.exitcode is not None and proc.exitcode < 0:
        return f"crash: child killed by signal {-proc.exitcode}"
    if msg is None:
        return f"crash: child exited with status {proc.exitcode} without a result"
    kind, info, text, tb = msg
    exp = c.expect
    if isinstance(exp, Raises):
        want = f"{exp.exc.__module__}.{exp.exc.__qualname__}"
        if kind != "raised":
            return f"silent acceptance: expected {exp.exc.__name__}, returned {text}"
        if want not in info:
            return (f"wrong exception: expected {exp.exc.__name__} matching {exp.match!r}, "
                    f"got {text}\n{tb}")
        if not re.search(exp.match, text):
            return f"message does not match {exp.match!r}: {text}"
        return None
    if isinstance(exp, Accepts):
        if kind == "raised":
            return f"expected acceptance ({exp.what}), raised {text}\n{tb}"
        if kind == "check-error":
            return f"the check failed with {text}\n{tb}"
        return None if info else f"wrong answer ({exp.what}): returned {text}"
    if isinstance(exp, Exits):
        if kind == "raised":
            return f"command line raised instead of exiting: {text}\n{tb}"
        status, stderr = info
        if status != exp.status:
            return f"exit status {status}, expected {exp.status}; stderr: {stderr[-500:]}"
        if not re.search(exp.match, stderr):
            return f"stderr does not match {exp.match!r}: {stderr[-500:]}"
        return None
    raise TypeError(f"unknown expectation {exp!r}")


# ---------------------------------------------------------------- shared data
_rng = np.random.default_rng(0)
N, D = 40, 12
X = sp.random(N, D, density=0.4, format="csr", random_state=1, dtype=np.float64)
X.data = np.clip(X.data, 0.0, 1.0)
y01 = (np.asarray(X.sum(axis=1)).ravel() > np.median(np.asarray(X.sum(axis=1)))).astype(float)
y01[:2] = [0.0, 1.0]
ypm = 2.0 * y01 - 1.0
yreg = np.asarray(X @ np.linspace(-1, 1, D)).ravel()
Xd = X.toarray()
X_nan = Xd.copy()
X_nan[0, 0] = np.nan
X_inf = Xd.copy()
X_inf[1, 1] = np.inf
y_str = np.where(y01 > 0, "pos", "neg")
y_nan = y01.copy()
y_nan[3] = np.nan

FILES = {}


@pytest.fixture(scope="module", autouse=True)
def _files(tmp_path_factory):
    """Bad files for the loaders and the command line (written once)."""
    d = tmp_path_factory.mktemp("bad_input")
    good = b"".join(b"%d 1:%.1f 3:1\n" % (i % 2, i / 10) for i in range(20))
    (d / "good.txt").write_bytes(good)
    raw = bz2.compress(good * 50)
    (d / "truncated.bz2").write_bytes(raw[: len(raw) // 2])
    (d / "garbage.bz2").write_bytes(b"BZh9 this is not bzip2 data at all" * 10)
    (d / "prose.txt").write_text("This is a plain English sentence.\nAnd another one.\n")
    (d / "empty.txt").write_bytes(b"")
    (d / "comments.txt").write_bytes(b"# only a comment\n\n")
    (d / "huge_index.txt").write_bytes(b"1 99999999999:1\n0 1:1\n")
    (d / "zero_index.txt").write_bytes(b"1 0:1\n0 1:1\n")
    (d / "unsorted.txt").write_bytes(b"1 3:1 2:1\n0 1:1\n")
    (d / "nan_value.txt").write_bytes(b"1 1:nan\n0 1:1\n")
    (d / "inf_value.txt").write_bytes(b"# comment\n1 1:1\n0 2:inf\n")
    (d / "nan_label.txt").write_bytes(b"nan 1:1\n0 1:1\n")
    gz = __import__("gzip").compress(good * 50)
    (d / "truncated.gz").write_bytes(gz[: len(gz) // 2])
    (d / "binary.bin").write_bytes(bytes(range(256)) * 4)
    (d / "a_folder").mkdir()
    (d / "not_a_model.skops").write_text("1 1:1\n")
    (d / "zip_not_model.skops").write_bytes(
        b"PK\x05\x06" + b"\x00" * 18)  # an empty zip archive
    FILES.update({p.name: str(p) for p in d.iterdir()})
    FILES["missing"] = str(d / "does_not_exist.txt")
    FILES["dir"] = str(d)
    yield


def F(name):
    return FILES[name]


@pytest.fixture(scope="module", autouse=True)
def _warm_parent():
    """Fill this process's caches before the children fork from it.

    Every valid configuration below is fitted once here (memoised noise
    calibrations, lazily imported modules such as skops), so that each forked
    case costs milliseconds instead of repeating that work; it also checks that
    the configurations the cases start from are valid.
    """
    import skops.io  # noqa: F401  (imported lazily by dptoolkit._persistence)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (make, target) in ESTIMATORS.items():
            make().fit(Xd, target)
    yield


def finite_array(shape=None):
    def check(r):
        r = np.asarray(r)
        return np.all(np.isfinite(r)) and (shape is None or r.shape == shape)
    return check


# ================================================================ mechanisms
for _cls in (mech.Laplace, mech.Gaussian, mech.GaussianAnalytic, mech.DoubleGeometric):
    _n = _cls.__name__
    _delta = 0.0 if _cls in (mech.Laplace, mech.DoubleGeometric) else 1e-5
    _eps = 0.5       # the classical Gaussian mechanism needs epsilon < 1
    case(f"{_n}-epsilon-negative",
         lambda c=_cls, d=_delta: c(epsilon=-1.0, delta=d, sensitivity=1.0),
         Raises(ValueError, r"epsilon"))
    case(f"{_n}-epsilon-nan",
         lambda c=_cls, d=_delta: c(epsilon=float("nan"), delta=d, sensitivity=1.0),
         Raises(ValueError, r"epsilon"))
    case(f"{_n}-epsilon-string",
         lambda c=_cls, d=_delta: c(epsilon="1", delta=d, sensitivity=1.0),
         Raises(TypeError, r"epsilon"))
    case(f"{_n}-sensitivity-zero-or-negative",
         lambda c=_cls, d=_delta: c(epsilon=_eps, delta=d, sensitivity=-1.0),
         Raises(ValueError, r"sensitivity"))
    case(f"{_n}-sensitivity-inf",
         lambda c=_cls, d=_delta: c(epsilon=_eps, delta=d, sensitivity=float("inf")),
         Raises(ValueError, r"sensitivity"))
    case(f"{_n}-delta-one",
         lambda c=_cls: c(epsilon=0.5, delta=1.0, sensitivity=1.0),
         Raises(ValueError, r"delta"))
    case(f"{_n}-randomise-nan",
         lambda c=_cls, d=_delta: c(epsilon=_eps, delta=d, sensitivity=1.0,
                                    random_state=0).randomise(float("nan")),
         Raises(ValueError, r"value"))
    case(f"{_n}-randomise-string",
         lambda c=_cls, d=_delta: c(epsilon=_eps, delta=d, sensitivity=1.0,
                                    random_state=0).randomise("3"),
         Raises(TypeError, r"value"))
    case(f"{_n}-random-state-float",
         lambda c=_cls, d=_delta: c(epsilon=_eps, delta=d, sensitivity=1.0,
                                    random_state=1.5),
         Raises(TypeError, r"random_state"))

case("Gaussian-delta-zero", lambda: mech.Gaussian(epsilon=0.5, delta=0.0, sensitivity=1.0),
     Raises(ValueError, r"delta"))
case("Gaussian-epsilon-above-one",
     lambda: mech.Gaussian(epsilon=2.0, delta=1e-5, sensitivity=1.0),
     Raises(ValueError, r"epsilon"))
case("DoubleGeometric-sensitivity-fraction",
     lambda: mech.DoubleGeometric(epsilon=1.0, sensitivity=0.5),
     Accepts(lambda m: abs(m.p - (1 - math.exp(-2.0))) < 1e-15,
             "a real sensitivity bound is documented as valid: p = 1 - exp(-eps/sens)"))
case("DoubleGeometric-randomise-fraction",
     lambda: mech.DoubleGeometric(epsilon=1.0, sensitivity=1, random_state=0).randomise(1.5),
     Raises(ValueError, r"value"))
case("DoubleGeometric-randomise-huge-int",
     lambda: mech.DoubleGeometric(epsilon=1.0, sensitivity=1, random_state=0).randomise(2**64),
     Raises(ValueError, r"value"))
case("analytic_gaussian_sigma-delta-zero",
     lambda: mech.analytic_gaussian_sigma(epsilon=1.0, delta=0.0),
     Raises(ValueError, r"delta"))
case("analytic_gaussian_sigma-epsilon-huge",
     lambda: mech.analytic_gaussian_sigma(epsilon=1e300, delta=1e-5),
     Accepts(lambda s: np.isfinite(s) and s >= 0, "a finite sigma"))
for _cls in (mech.Exponential, mech.ReportNoisyMax):
    _n = _cls.__name__
    def _m(c=_cls):
        return c(epsilon=1.0, sensitivity=1.0, random_state=0)
    case(f"{_n}-utilities-empty", lambda m=_m: m().select([]),
         Raises(ValueError, r"utilities"))
    case(f"{_n}-utilities-nan", lambda m=_m: m().select([1.0, float("nan")]),
         Raises(ValueError, r"utilities"))
    case(f"{_n}-utilities-2d", lambda m=_m: m().select([[1.0, 2.0]]),
         Raises(ValueError, r"utilities"))
    case(f"{_n}-utilities-strings", lambda m=_m: m().select(["a", "b"]),
         Raises(TypeError, r"utilities"))
    case(f"{_n}-candidates-wrong-length",
         lambda m=_m: m().select([1.0, 2.0], candidates=[1, 2, 3]),
         Raises(ValueError, r"candidates"))
    case(f"{_n}-size-negative", lambda m=_m: m().select([1.0, 2.0], size=-1),
         Raises(ValueError, r"size"))
    case(f"{_n}-size-float", lambda m=_m: m().select([1.0, 2.0], size=1.5),
         Raises(ValueError, r"size"))
    case(f"{_n}-utilities-plus-inf", lambda m=_m: m().select([1.0, float("inf")]),
         Raises(ValueError, r"utilities"))
case("Exponential-method-unknown",
     lambda: mech.Exponential(epsilon=1.0, sensitivity=1.0, method="magic"),
     Raises(ValueError, r"method"))
case("ReportNoisyMax-noise-unknown",
     lambda: mech.ReportNoisyMax(epsilon=1.0, sensitivity=1.0, noise="magic"),
     Raises(ValueError, r"noise"))
case("Exponential-monotonic-string",
     lambda: mech.Exponential(epsilon=1.0, sensitivity=1.0, monotonic="yes"),
     Raises(TypeError, r"monotonic"))
case("Exponential-huge-utilities-probabilities",
     lambda: mech.Exponential(epsilon=1.0, sensitivity=1.0).probabilities([1e308, -1e308, 0.0]),
     Accepts(lambda p: np.all(np.isfinite(p)) and abs(np.sum(p) - 1) < 1e-9 and p[0] > 0.99,
             "finite probabilities summing to 1, mass on the top utility"))
case("DoubleGeometric-pmf-float",
     lambda: mech.DoubleGeometric(epsilon=1.0, sensitivity=1).pmf(0.5),
     Raises(ValueError, r"\bk\b"))


# ================================================================ accounting
case("basic_composition-k-zero", lambda: acc.basic_composition(epsilon=1.0, k=0),
     Raises(ValueError, r"\bk\b"))
case("basic_composition-k-bool", lambda: acc.basic_composition(epsilon=1.0, k=True),
     Raises(TypeError, r"\bk\b"))
case("basic_composition-k-huge",
     lambda: acc.basic_composition(epsilon=1.0, delta=0.0, k=2**64),
     Accepts(lambda r: r[0] == 2.0**64 and r[1] == 0.0, "epsilon k*eps, exact"))
case("basic_composition-epsilon-inf", lambda: acc.basic_composition(epsilon=math.inf, k=2),
     Raises(ValueError, r"epsilon"))
case("advanced_composition-delta-slack-zero",
     lambda: acc.advanced_composition(epsilon=0.1, delta=0.0, k=10, delta_slack=0.0),
     Raises(ValueError, r"delta_slack"))
case("advanced_composition-k-float",
     lambda: acc.advanced_composition(epsilon=0.1, delta=0.0, k=10.0, delta_slack=1e-6),
     Raises(TypeError, r"\bk\b"))
case("advanced_composition-k-huge",
     lambda: acc.advanced_composition(epsilon=1e-9, delta=0.0, k=2**64, delta_slack=1e-6),
     Accepts(lambda r: np.isfinite(r[0]) and r[0] > 0 and 0 < r[1] < 1, "finite guarantee"))
case("optimal_composition-k-1e9",
     lambda: acc.optimal_composition(epsilon=0.01, delta=0.0, k=10**9, delta_slack=1e-6),
     Raises(ValueError, r"\bk\b"))
case("optimal_composition-k-zero",
     lambda: acc.optimal_composition(epsilon=0.1, delta=0.0, k=0, delta_slack=1e-6),
     Raises(ValueError, r"\bk\b"))
case("optimal_composition-delta-slack-one",
     lambda: acc.optimal_composition(epsilon=0.1, delta=0.0, k=10, delta_slack=1.0),
     Raises(ValueError, r"delta_slack"))
case("per_step_epsilon-k-zero",
     lambda: acc.per_step_epsilon(epsilon_total=1.0, delta_slack=1e-6, k=0),
     Raises(ValueError, r"\bk\b"))
case("per_step_epsilon-epsilon-total-negative",
     lambda: acc.per_step_epsilon(epsilon_total=-1.0, delta_slack=1e-6, k=10),
     Raises(ValueError, r"epsilon_total"))
case("per_step_epsilon-k-huge",
     lambda: acc.per_step_epsilon(epsilon_total=1.0, delta_slack=1e-6, k=2**64),
     Accepts(lambda e: 0 < e < 1e-9, "a tiny positive per-step epsilon"))
case("MomentsAccountant-max-lambda-1e8", lambda: acc.MomentsAccountant(max_lambda=10**8),
     Raises(ValueError, r"max_lambda"))
case("MomentsAccountant-max-lambda-zero", lambda: acc.MomentsAccountant(max_lambda=0),
     Raises(ValueError, r"max_lambda"))
case("MomentsAccountant-max-lambda-float", lambda: acc.MomentsAccountant(max_lambda=3.5),
     Raises(TypeError, r"max_lambda"))
case("RDPAccountant-orders-empty", lambda: acc.RDPAccountant(orders=[]),
     Raises(ValueError, r"orders"))
case("RDPAccountant-orders-below-one", lambda: acc.RDPAccountant(orders=[0.5, 2.0]),
     Raises(ValueError, r"orders"))
case("RDPAccountant-orders-nan", lambda: acc.RDPAccountant(orders=[2.0, float("nan")]),
     Raises(ValueError, r"orders"))
case("RDPAccountant-relation-unknown",
     lambda: acc.RDPAccountant(neighboring_relation="swap"),
     Raises(ValueError, r"neighboring_relation"))
case("RDPAccountant-conversion-unknown", lambda: acc.RDPAccountant(conversion="magic"),
     Raises(ValueError, r"conversion"))
case("RDPAccountant-noise-zero",
     lambda: acc.RDPAccountant().compose_gaussian(noise_multiplier=0.0),
     Raises(ValueError, r"noise_multiplier"))
case("RDPAccountant-steps-negative",
     lambda: acc.RDPAccountant().compose_gaussian(noise_multiplier=1.0, steps=-1),
     Raises(ValueError, r"steps"))
case("RDPAccountant-steps-huge",
     lambda: acc.RDPAccountant().compose_gaussian(noise_multiplier=1.0, steps=2**64
                                                  ).get_epsilon(1e-5),
     Accepts(lambda e: e > 1e6 or e == math.inf, "a huge (or infinite) epsilon"))
case("RDPAccountant-sampling-rate-above-one",
     lambda: acc.RDPAccountant().compose_subsampled_gaussian(noise_multiplier=1.0,
                                                             sampling_rate=1.5),
     Raises(ValueError, r"sampling_rate"))
case("RDPAccountant-sampling-unknown",
     lambda: acc.RDPAccountant().compose_subsampled_gaussian(
         noise_multiplier=1.0, sampling_rate=0.1, sampling="magic"),
     Raises(ValueError, r"sampling"))
case("RDPAccountant-get-epsilon-delta-zero",
     lambda: acc.RDPAccountant().compose_gaussian(noise_multiplier=1.0).get_epsilon(0.0),
     Raises(ValueError, r"delta"))
case("RDPAccountant-get-delta-epsilon-negative",
     lambda: acc.RDPAccountant().compose_gaussian(noise_multiplier=1.0).get_delta(-1.0),
     Raises(ValueError, r"epsilon"))
case("RDPAccountant-compose-rdp-wrong-length",
     lambda: acc.RDPAccountant(orders=[2.0, 4.0]).compose_rdp([1.0, 2.0, 3.0]),
     Raises(ValueError, r"rdp"))
case("RDPAccountant-compose-rdp-negative",
     lambda: acc.RDPAccountant(orders=[2.0, 4.0]).compose_rdp([-1.0, 2.0]),
     Raises(ValueError, r"rdp"))
case("rdp_gaussian-noise-negative", lambda: acc.rdp_gaussian(noise_multiplier=-1.0),
     Raises(ValueError, r"noise_multiplier"))
case("rdp_laplace-noise-nan", lambda: acc.rdp_laplace(noise_multiplier=float("nan")),
     Raises(ValueError, r"noise_multiplier"))
case("rdp_poisson-sampling-rate-negative",
     lambda: acc.rdp_poisson_subsampled_gaussian(noise_multiplier=1.0, sampling_rate=-0.1),
     Raises(ValueError, r"sampling_rate"))
case("rdp_poisson-series-unknown",
     lambda: acc.rdp_poisson_subsampled_gaussian(noise_multiplier=1.0, sampling_rate=0.1,
                                                 series="magic"),
     Raises(ValueError, r"series"))
case("rdp_poisson-orders-huge",
     lambda: acc.rdp_poisson_subsampled_gaussian(noise_multiplier=1.0, sampling_rate=0.1,
                                                 orders=[1e12]),
     Raises(ValueError, r"orders"))
case("rdp_swor-sampling-rate-zero",
     lambda: acc.rdp_sampled_without_replacement_gaussian(noise_multiplier=1.0,
                                                          sampling_rate=0.0),
     Raises(ValueError, r"sampling_rate"))
case("rdp_to_epsilon-length-mismatch",
     lambda: acc.rdp_to_epsilon([2.0, 3.0], [1.0], 1e-5),
     Raises(ValueError, r"\brdp\b.*orders"))
case("rdp_to_epsilon-delta-one", lambda: acc.rdp_to_epsilon([2.0], [1.0], 1.0),
     Raises(ValueError, r"delta"))
case("rdp_to_delta-epsilon-nan", lambda: acc.rdp_to_delta([2.0], [1.0], float("nan")),
     Raises(ValueError, r"epsilon"))
case("calibrate_noise_multiplier-steps-huge",
     lambda: acc.calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5,
                                            sampling_rate=0.01, steps=10**12, tol=1e-3),
     Accepts(lambda s: acc.RDPAccountant().compose_subsampled_gaussian(
         noise_multiplier=s, sampling_rate=0.01, steps=10**12).get_epsilon(1e-5) <= 1.0,
         "a noise multiplier that meets epsilon = 1 over 1e12 steps"))
case("calibrate_noise_multiplier-steps-zero",
     lambda: acc.calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5,
                                            sampling_rate=0.01, steps=0),
     Raises(ValueError, r"steps"))
case("calibrate_noise_multiplier-target-epsilon-zero",
     lambda: acc.calibrate_noise_multiplier(target_epsilon=0.0, delta=1e-5,
                                            sampling_rate=0.01, steps=10),
     Raises(ValueError, r"target_epsilon"))
case("calibrate_noise_multiplier-accountant-unknown",
     lambda: acc.calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5,
                                            sampling_rate=0.01, steps=10,
                                            accountant="magic"),
     Raises(ValueError, r"accountant"))
case("calibrate_noise_multiplier-tol-negative",
     lambda: acc.calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5,
                                            sampling_rate=0.01, steps=10, tol=-1.0),
     Raises(ValueError, r"tol"))
case("calibrate_parameter-low-above-high",
     lambda: acc.calibrate_parameter(lambda s: ev.GaussianEvent(s), target_epsilon=1.0,
                                     delta=1e-5, low=10.0, high=1.0, increasing=False),
     Raises(ValueError, r"low must be < high"))
case("calibrate_parameter-make-event-not-callable",
     lambda: acc.calibrate_parameter(3, target_epsilon=1.0, delta=1e-5, low=0.1, high=10.0),
     Raises(TypeError, r"make_event"))
case("calibrate_parameter-composition-unknown",
     lambda: acc.calibrate_parameter(lambda s: ev.GaussianEvent(s), target_epsilon=1.0,
                                     delta=1e-5, low=0.1, high=100.0, increasing=False,
                                     composition="magic"),
     Raises(ValueError, r"composition"))
case("epsilon_of_event-not-an-event", lambda: acc.epsilon_of_event("laplace", 1e-5),
     Raises(TypeError, r"event"))
case("epsilon_of_event-delta-negative",
     lambda: acc.epsilon_of_event(ev.PureDPEvent(1.0), -0.1),
     Raises(ValueError, r"delta"))
case("epsilon_of_event-composition-unknown",
     lambda: acc.epsilon_of_event(ev.PureDPEvent(1.0), 1e-5, composition="magic"),
     Raises(ValueError, r"composition"))
case("epsilon_of_event-huge-count",
     lambda: acc.epsilon_of_event(ev.SelfComposedEvent(ev.GaussianEvent(1.0), 2**64), 1e-5),
     Accepts(lambda r: (r[0] if isinstance(r, tuple) else r) > 1e6, "a huge epsilon"))
case("PrivacyAccountant-composition-unknown",
     lambda: acc.PrivacyAccountant(composition="magic"), Raises(ValueError, r"composition"))
case("PrivacyAccountant-compose-count-zero",
     lambda: acc.PrivacyAccountant().compose(ev.PureDPEvent(1.0), count=0),
     Raises(ValueError, r"count"))
case("PrivacyAccountant-compose-not-event",
     lambda: acc.PrivacyAccountant().compose(1.0),
     Raises(TypeError, r"event"))
case("PrivacyAccountant-get-epsilon-delta-nan",
     lambda: acc.PrivacyAccountant().compose(ev.PureDPEvent(1.0)).get_epsilon(float("nan")),
     Raises(ValueError, r"delta"))
case("event-PureDP-negative", lambda: ev.PureDPEvent(-1.0), Raises(ValueError, r"epsilon"))
case("event-PureDP-string", lambda: ev.PureDPEvent("1"), Raises(TypeError, r"epsilon"))
case("event-ApproxDP-delta-two", lambda: ev.ApproxDPEvent(1.0, 2.0),
     Raises(ValueError, r"delta"))
case("event-Gaussian-zero", lambda: ev.GaussianEvent(0.0),
     Raises(ValueError, r"noise_multiplier"))
case("event-Laplace-inf", lambda: ev.LaplaceEvent(math.inf),
     Raises(ValueError, r"noise_multiplier"))
case("event-ZCDP-nan", lambda: ev.ZCDPEvent(float("nan")), Raises(ValueError, r"rho"))
case("event-Exponential-bounded-range-negative",
     lambda: ev.ExponentialMechanismEvent(1.0, bounded_range=-1.0),
     Raises(ValueError, r"bounded_range"))
case("event-Poisson-rate-two", lambda: ev.PoissonSampledEvent(2.0, ev.GaussianEvent(1.0)),
     Raises(ValueError, r"sampling_rate"))
case("event-Poisson-inner-not-event", lambda: ev.PoissonSampledEvent(0.1, 1.0),
     Raises(TypeError, r"event"))
case("event-SWOR-sample-size-above-n",
     lambda: ev.SampledWithoutReplacementEvent(10, 20, ev.GaussianEvent(1.0)),
     Raises(ValueError, r"sample_size"))
case("event-SWOR-n-samples-float",
     lambda: ev.SampledWithoutReplacementEvent(10.5, 2, ev.GaussianEvent(1.0)),
     Raises(TypeError, r"n_samples"))
case("event-SelfComposed-count-zero",
     lambda: acc.epsilon_of_event(ev.SelfComposedEvent(ev.PureDPEvent(1.0), 0), 0.0),
     Accepts(lambda e: e == 0.0, "count=0 is documented (nothing ran): epsilon 0"))
case("event-SelfComposed-count-negative",
     lambda: ev.SelfComposedEvent(ev.PureDPEvent(1.0), -1), Raises(ValueError, r"count"))
case("epsilon_of_event-approx-leaf-huge-count",
     lambda: acc.epsilon_of_event(ev.SelfComposedEvent(ev.ApproxDPEvent(1e-9, 1e-30),
                                                       10**12), 1e-5, composition="basic"),
     Accepts(lambda e: abs(e - 1000.0) < 1e-6, "basic composition: 1e12 * 1e-9"))
case("event-SelfComposed-count-bool",
     lambda: ev.SelfComposedEvent(ev.PureDPEvent(1.0), True),
     Raises(TypeError, r"count"))
case("event-Composed-not-events", lambda: ev.ComposedEvent((ev.PureDPEvent(1.0), 3)),
     Raises(TypeError, r"events"))
case("event-MaxOf-empty", lambda: ev.MaxOfEvents(()), Raises(ValueError, r"events"))
case("event-MaxOf-single-event-not-a-sequence",
     lambda: ev.MaxOfEvents(ev.PureDPEvent(1.0)), Raises(TypeError, r"events"))
case("event-MaxOf-not-events", lambda: ev.MaxOfEvents((ev.PureDPEvent(1.0), 3)),
     Raises(TypeError, r"events\[1\]"))
case("event-RepeatAndSelect-shape-negative",
     lambda: ev.RepeatAndSelectEvent(ev.PureDPEvent(1.0), 10.0, -2.0),
     Raises(ValueError, r"shape"))
case("event-RepeatAndSelect-mean-below-one",
     lambda: ev.RepeatAndSelectEvent(ev.PureDPEvent(1.0), 0.5, 1.0),
     Raises(ValueError, r"mean"))
case("BudgetAccountant-epsilon-negative", lambda: acc.BudgetAccountant(-1.0),
     Raises(ValueError, r"epsilon"))
case("BudgetAccountant-delta-two", lambda: acc.BudgetAccountant(1.0, 2.0),
     Raises(ValueError, r"delta"))
case("BudgetAccountant-composition-unknown",
     lambda: acc.BudgetAccountant(1.0, composition="magic"),
     Raises(ValueError, r"composition"))
case("BudgetAccountant-spend-over-budget",
     lambda: acc.BudgetAccountant(1.0).spend(2.0),
     Raises(BudgetExceededError, r"epsilon=2.*over the budget"))
case("BudgetAccountant-spend-negative", lambda: acc.BudgetAccountant(1.0).spend(-0.5),
     Raises(ValueError, r"epsilon"))
case("BudgetAccountant-spend-nan", lambda: acc.BudgetAccountant(1.0).spend(float("nan")),
     Raises(ValueError, r"epsilon"))
case("BudgetAccountant-remaining-k-zero", lambda: acc.BudgetAccountant(1.0).remaining(0),
     Raises(ValueError, r"\bk\b"))
case("BudgetAccountant-remaining-k-huge",
     lambda: acc.BudgetAccountant(1.0, 0.0).remaining(2**64),
     Accepts(lambda r: 0 < r[0] <= 1.0 / 2**64 * (1 + 1e-12), "budget / k"))
case("BudgetAccountant-spend-event-not-event",
     lambda: acc.BudgetAccountant(1.0).spend(0.1, event="laplace"),
     Raises(TypeError, r"event"))
case("set_default_accountant-wrong-type", lambda: acc.set_default_accountant(1.0),
     Raises(TypeError, r"accountant"))
case("laplace_rnm_scale-sensitivity-zero",
     lambda: acc.laplace_report_noisy_max_scale(epsilon=1.0, sensitivity=0.0),
     Raises(ValueError, r"sensitivity"))
case("laplace_rnm_composition-max-iter-zero",
     lambda: acc.laplace_report_noisy_max_composition(noise_scale=1.0, sensitivity=1.0,
                                                      max_iter=0),
     Raises(ValueError, r"max_iter"))
case("laplace_rnm_epsilon-monotonic-string",
     lambda: acc.laplace_report_noisy_max_epsilon(noise_scale=1.0, sensitivity=1.0,
                                                  monotonic="no"),
     Raises(TypeError, r"monotonic"))
case("talwar_noise_scale-n-samples-zero",
     lambda: acc.talwar_noise_scale(epsilon=1.0, delta=1e-5, max_iter=10, n_samples=0),
     Raises(ValueError, r"n_samples"))
case("talwar_noise_scale-max-iter-huge",
     lambda: acc.talwar_noise_scale(epsilon=1.0, delta=1e-5, max_iter=2**64, n_samples=100),
     Accepts(lambda s: np.isfinite(s) and s > 0, "a finite positive scale"))
case("tnb_success_probability-mu-one", lambda: acc.tnb_success_probability(1.0, 1.0),
     Raises(ValueError, r"\bmu\b"))
case("tnb_success_probability-eta-negative", lambda: acc.tnb_success_probability(-0.5, 5.0),
     Raises(ValueError, r"eta"))


# ================================================================ selection
case("canonical_top_k-k-zero", lambda: sel.canonical_lipschitz_top_k([1.0, 2.0], 0, epsilon=1.0),
     Raises(ValueError, r"\bk\b"))
case("canonical_top_k-k-above-d",
     lambda: sel.canonical_lipschitz_top_k([1.0, 2.0], 3, epsilon=1.0),
     Raises(ValueError, r"\bk\b"))
case("canonical_top_k-k-huge",
     lambda: sel.canonical_lipschitz_top_k([1.0, 2.0], 2**64, epsilon=1.0),
     Raises(ValueError, r"\bk\b"))
case("canonical_top_k-gamma-above-one",
     lambda: sel.canonical_lipschitz_top_k([1.0, 2.0, 3.0], 1, epsilon=1.0, gamma=1.5),
     Raises(ValueError, r"gamma"))
case("canonical_top_k-scores-nan",
     lambda: sel.canonical_lipschitz_top_k([1.0, float("nan"), 3.0], 1, epsilon=1.0),
     Raises(ValueError, r"scores"))
case("canonical_top_k-scores-empty", lambda: sel.canonical_lipschitz_top_k([], 1, epsilon=1.0),
     Raises(ValueError, r"scores"))
case("canonical_top_k-epsilon-zero",
     lambda: sel.canonical_lipschitz_top_k([1.0, 2.0], 1, epsilon=0.0),
     Raises(ValueError, r"epsilon"))
case("canonical_top_k-scores-2d",
     lambda: sel.canonical_lipschitz_top_k([[1.0, 2.0]], 1, epsilon=1.0),
     Raises(ValueError, r"scores"))
case("canonical_top_k-k-float",
     lambda: sel.canonical_lipschitz_top_k([1.0, 2.0], 1.0, epsilon=1.0),
     Raises(TypeError, r"\bk\b"))
case("peeling_top_k-method-unknown",
     lambda: sel.peeling_top_k([1.0, 2.0], 1, epsilon=1.0, method="magic"),
     Raises(ValueError, r"method"))
case("peeling_top_k-sensitivity-negative",
     lambda: sel.peeling_top_k([1.0, 2.0], 1, epsilon=1.0, sensitivity=-1.0),
     Raises(ValueError, r"sensitivity"))
case("peeling_top_k-size-zero",
     lambda: sel.peeling_top_k([1.0, 2.0, 3.0], 1, epsilon=1.0, size=0, random_state=0),
     Raises(ValueError, r"size"))
case("top_k_accuracy-reference-empty", lambda: sel.top_k_accuracy([1, 2], []),
     Raises(ValueError, r"reference"))
case("top_k_accuracy-selected-floats", lambda: sel.top_k_accuracy([1.5, 2.0], [1, 2]),
     Raises(TypeError, r"selected"))
case("top_k_accuracy-duplicates", lambda: sel.top_k_accuracy([1, 1], [1, 2]),
     Raises(ValueError, r"selected"))
case("order_statistics_hit-index-out-of-range",
     lambda: order_statistics_hit([5], [1.0, 2.0, 3.0], 1, 1),
     Raises(ValueError, r"selected"))
case("order_statistics_hit-head-negative",
     lambda: order_statistics_hit([0], [1.0, 2.0, 3.0], -1, 1),
     Raises(ValueError, r"head"))
case("order_statistics_hit-scores-nan",
     lambda: order_statistics_hit([0], [1.0, float("nan"), 3.0], 1, 1),
     Raises(ValueError, r"scores"))
case("top_great_good-selected-3d", lambda: sel.top_great_good([[[0]]], [1.0, 2.0]),
     Raises(ValueError, r"selected"))
case("top_great_good-draws",
     lambda: sel.top_great_good([[1], [0]], [1.0, 2.0]),
     Accepts(lambda r: list(r["top"]) == [True, False], "one row per draw"))
case("top_great_good-scores-empty", lambda: sel.top_great_good([0], []),
     Raises(ValueError, r"scores"))
case("dpsis_scores-bounds-reversed",
     lambda: sel.dpsis_scores(X, y01, bounds=(1.0, -1.0)), Raises(ValueError, r"bounds"))
case("dpsis_scores-y-length", lambda: sel.dpsis_scores(X, y01[:-1]),
     Raises(ValueError, r"\bX\b.*\by\b.*samples"))
case("block_support_counts-n-blocks-zero",
     lambda: sel.block_support_counts(X, yreg, n_blocks=0), Raises(ValueError, r"n_blocks"))
case("block_support_counts-n-blocks-above-n",
     lambda: sel.block_support_counts(X, yreg, n_blocks=10**6),
     Raises(ValueError, r"n_blocks"))
case("block_support_counts-alpha-negative",
     lambda: sel.block_support_counts(X, yreg, n_blocks=2, alpha=-1.0),
     Raises(ValueError, r"alpha"))
case("SIS-k-zero", lambda: sel.SIS(k=0).fit(X, yreg), Raises(ValueError, r"\bk\b"))
case("SIS-k-above-features", lambda: sel.SIS(k=D + 1).fit(X, yreg),
     Accepts(lambda est: est.support_.all(), "every feature kept, as SelectKBest"))
case("SIS-X-nan", lambda: sel.SIS(k=2).fit(X_nan, yreg), Raises(ValueError, r"\bX\b.*NaN"))
case("SIS-transform-wrong-features",
     lambda: sel.SIS(k=2).fit(X, yreg).transform(Xd[:, :3]),
     Raises(ValueError, r"features"))
case("DPSIS-epsilon-zero", lambda: sel.DPSIS(k=2, epsilon=0.0).fit(X, yreg),
     Raises(ValueError, r"epsilon"))
case("DPSIS-k-huge", lambda: sel.DPSIS(k=2**64, epsilon=1.0).fit(X, yreg),
     Raises(ValueError, r"\bk\b"))
case("DPSIS-k-unknown-string", lambda: sel.DPSIS(k="most", epsilon=1.0).fit(X, yreg),
     Raises(ValueError, r"\bk\b"))
case("DPSIS-n_samples_public-zero",
     lambda: sel.DPSIS(epsilon=1.0, n_samples_public=0).fit(X, yreg),
     Raises(ValueError, r"n_samples_public"))
case("DPSIS-selector-unknown", lambda: sel.DPSIS(k=2, mechanism="magic", epsilon=None).fit(X, yreg),
     Raises(ValueError, r"mechanism"))
case("DPSIS-neighbouring-unknown",
     lambda: sel.DPSIS(k=2, neighbouring="swap", epsilon=None).fit(X, yreg),
     Raises(ValueError, r"neighbouring"))
case("DPSIS-y-string", lambda: sel.DPSIS(k=2, epsilon=None).fit(X, y_str),
     Raises(ValueError, r"\by\b must be numeric"))
case("DPSIS-gaussian-delta-none",
     lambda: sel.DPSIS(k=2, epsilon=1.0, mechanism="gaussian").fit(X, yreg),
     Raises(ValueError, r"delta"))
case("DPSIS-gaussian-delta-zero",
     lambda: sel.DPSIS(k=2, epsilon=1.0, delta=0.0, mechanism="gaussian").fit(X, yreg),
     Raises(ValueError, r"delta"))
case("DPSIS-delta-one", lambda: sel.DPSIS(k=2, epsilon=1.0, delta=1.0).fit(X, yreg),
     Raises(ValueError, r"delta"))
case("DPSIS-data_norm-zero",
     lambda: sel.DPSIS(k=2, epsilon=1.0, delta=1e-5, mechanism="gaussian",
                       data_norm=0.0).fit(X, yreg),
     Raises(ValueError, r"data_norm"))
case("DPSIS-data_norm-inf",
     lambda: sel.DPSIS(k=2, epsilon=1.0, delta=1e-5, mechanism="gaussian",
                       data_norm=np.inf).fit(X, yreg),
     Raises(ValueError, r"data_norm"))
case("DPSIS-gaussian-data-bounds",
     lambda: sel.DPSIS(k=2, epsilon=1.0, delta=1e-5, mechanism="gaussian",
                       bounds="data").fit(X, yreg),
     Raises(ValueError, r"bounds='data'"))
case("DPSIS-accountant-wrong-type",
     lambda: sel.DPSIS(k=2, accountant=1.0, epsilon=None).fit(X, yreg),
     Raises(TypeError, r"accountant"))
case("TwoStage-alpha-scale-unknown",
     lambda: sel.TwoStageSelector(k=2, alpha_scale="magic", epsilon=None).fit(X, yreg),
     Raises(ValueError, r"alpha_scale"))
case("TwoStage-n-blocks-zero",
     lambda: sel.TwoStageSelector(k=2, n_blocks=0, epsilon=None).fit(X, yreg),
     Raises(ValueError, r"n_blocks"))
case("TwoStage-lasso-max-iter-zero",
     lambda: sel.TwoStageSelector(k=2, lasso_max_iter=0, epsilon=None).fit(X, yreg),
     Raises(ValueError, r"lasso_max_iter"))
case("TwoStage-block-support-unknown",
     lambda: sel.TwoStageSelector(k=2, block_support="magic", epsilon=None).fit(X, yreg),
     Raises(ValueError, r"block_support"))
case("TwoStage-empty-X", lambda: sel.TwoStageSelector(k=2, epsilon=None).fit(Xd[:0], yreg[:0]),
     Raises(ValueError, r"\bX\b.*sample"))
case("PrivateSelectThenFit-selector-not-selector",
     lambda: sel.PrivateSelectThenFit(3, lm.DPSGDClassifier(epsilon=1.0), epsilon=None).fit(X, y01),
     Raises(TypeError, r"selector"))
case("PrivateSelectThenFit-estimator-not-estimator",
     lambda: sel.PrivateSelectThenFit(sel.DPSIS(k=2, epsilon=None), "sgd",
                                      epsilon=None).fit(X, y01),
     Raises(TypeError, r"estimator"))


# ================================================================ linear_model
#: estimator name -> (factory of a small, quick, valid configuration, target); a
#: discovered estimator without an entry gets its defaults (below)
ESTIMATORS = {
    "FrankWolfe": (lambda **kw: lm.FrankWolfeLassoClassifier(
        **{"epsilon": 1.0, "max_iter": 5, "n_samples_public": N, "random_state": 0, **kw}),
        y01),
    "Sparsifier": (lambda **kw: lm.SparsifiedLassoClassifier(
        **{"epsilon": 1.0, "max_iter": 5, "nonprivate_max_iter": 20, "n_samples_public": N,
           "random_state": 0, **kw}), y01),
    "DPSCDClassifier": (lambda **kw: lm.DPSCDClassifier(
        **{"epsilon": 1.0, "n_epochs": 1, "n_samples_public": N, "random_state": 0, **kw}),
        y01),
    "DPSCDRegressor": (lambda **kw: lm.DPSCDRegressor(
        **{"epsilon": 1.0, "n_epochs": 1, "n_samples_public": N, "random_state": 0, **kw}),
        yreg),
    "DPSGDClassifier": (lambda **kw: lm.DPSGDClassifier(
        **{"epsilon": 1.0, "n_epochs": 1, "n_samples_public": N, "random_state": 0, **kw}),
        y01),
    "DPSGDRegressor": (lambda **kw: lm.DPSGDRegressor(
        **{"epsilon": 1.0, "n_epochs": 1, "n_samples_public": N, "random_state": 0, **kw}),
        yreg),
    "DPNBLogistic": (lambda **kw: lm.DPNBLogisticClassifier(
        **{"epsilon": 1.0, "n_epochs": 1, "k": 5, "n_samples_public": N,
           "random_state": 0, **kw}), y01),
    "DSALLasso": (lambda **kw: lm.DSALLasso(**{"alpha": 0.01, "max_outer": 5,
                                               "random_state": 0, **kw}), yreg),
    "ProxSVRGLasso": (lambda **kw: lm.ProxSVRGLasso(**{"alpha": 0.01, "max_outer": 5,
                                                       "random_state": 0, **kw}), yreg),
    "ProxASAGALasso": (lambda **kw: lm.ProxASAGALasso(**{"alpha": 0.01, "max_outer": 5,
                                                         "random_state": 0, **kw}), yreg),
}


def _generic(cls):
    """A discovered estimator without an entry above: its defaults, private at
    epsilon=1 with the public N where it takes them."""
    import inspect

    taken = inspect.signature(cls).parameters
    base = {k: v for k, v in {"epsilon": 1.0, "n_samples_public": N,
                              "random_state": 0}.items() if k in taken}
    return lambda **kw: cls(**{**base, **kw})


def _discovered_models():
    """The discovered classifiers and regressors that are not meta-estimators (the
    estimators the cases below apply to)."""
    from sklearn.base import ClassifierMixin, MetaEstimatorMixin, RegressorMixin

    from dptoolkit._discovery import all_estimators

    return [cls for _, cls in all_estimators(["classifier", "regressor"])
            if not issubclass(cls, MetaEstimatorMixin)
            and issubclass(cls, (ClassifierMixin, RegressorMixin))]


_COVERED = {type(make()) for make, _ in ESTIMATORS.values()}
for _cls in _discovered_models():       # a new estimator needs no entry
    if _cls not in _COVERED:
        _make = _generic(_cls)
        ESTIMATORS[_cls.__name__] = (_make, y01 if is_classifier(_make()) else yreg)
CLASSIFIERS = {name for name, (make, _) in ESTIMATORS.items() if is_classifier(make())}


def _fit(name, Xa, ya, **kw):
    make, _ = ESTIMATORS[name]
    return make(**kw).fit(Xa, ya)


def _predict_ok(name):
    def check(est):
        pred = est.predict(Xd)
        if name in CLASSIFIERS:
            return set(np.unique(pred)) <= set(np.unique(ESTIMATORS[name][1]))
        return np.all(np.isfinite(pred)) and pred.shape == (N,)
    return check


for _name, (_make, _y) in ESTIMATORS.items():
    case(f"{_name}-X-empty", lambda n=_name, t=_y: _fit(n, Xd[:0], t[:0]),
         Raises(ValueError, r"\bX\b.*sample"))
    case(f"{_name}-X-zero-features", lambda n=_name, t=_y: _fit(n, Xd[:, :0], t),
         Raises(ValueError, r"\bX\b.*feature"))
    if _name in CLASSIFIERS:   # one row holds one class
        case(f"{_name}-X-one-row", lambda n=_name, t=_y: _fit(n, Xd[:1], t[:1]),
             Raises(ValueError, r"(?=.*\by\b)(?=.*class)"))
    else:
        case(f"{_name}-X-one-row", lambda n=_name, t=_y: _fit(n, Xd[:1], t[:1]),
             Accepts(lambda est: np.all(np.isfinite(est.predict(Xd))),
                     "a regression on one example is well defined: finite predictions"))
    case(f"{_name}-X-1d", lambda n=_name, t=_y: _fit(n, Xd[:, 0], t),
         Raises(ValueError, r"\bX\b must be a 2D array"))
    case(f"{_name}-X-3d", lambda n=_name, t=_y: _fit(n, Xd[:, :, None], t),
         Raises(ValueError, r"\bX\b must be a 2D array"))
    case(f"{_name}-X-y-mismatch", lambda n=_name, t=_y: _fit(n, Xd, t[:-3]),
         Raises(ValueError, r"\bX\b.*\by\b.*samples.*40.*37"))
    case(f"{_name}-X-nan", lambda n=_name, t=_y: _fit(n, X_nan, t),
         Raises(ValueError, r"\bX\b.*NaN"))
    case(f"{_name}-X-inf", lambda n=_name, t=_y: _fit(n, X_inf, t),
         Raises(ValueError, r"\bX\b.*infinity"))
    case(f"{_name}-X-numeric-strings", lambda n=_name, t=_y: (_fit(n, Xd.astype(str), t),
                                                              _fit(n, Xd, t)),
         Accepts(lambda pair: np.array_equal(pair[0].predict(Xd), pair[1].predict(Xd)),
                 "numeric strings are parsed as scikit-learn does (dtype=float64): the "
                 "same fit as on the numbers"))
    case(f"{_name}-X-words", lambda n=_name, t=_y: _fit(n, np.full((N, D), "word"), t),
         Raises(ValueError, r"\bX\b must be numeric.*word"))
    case(f"{_name}-y-nan", lambda n=_name, t=_y: _fit(n, Xd, np.where(np.isnan(y_nan), np.nan, t)),
         Raises(ValueError, r"\by\b.*NaN"))
    case(f"{_name}-y-2d", lambda n=_name, t=_y: _fit(n, Xd, np.c_[t, t]),
         Raises(ValueError, r"\by\b.*1d"))
    case(f"{_name}-predict-wrong-features",
         lambda n=_name, t=_y: _fit(n, Xd, t).predict(Xd[:, :5]),
         Raises(ValueError, r"\bX\b has 5 features"))
    case(f"{_name}-predict-1d",
         lambda n=_name, t=_y: _fit(n, Xd, t).predict(Xd[0]),
         Raises(ValueError, r"\bX\b must be a 2D array"))
    case(f"{_name}-random-state-negative", lambda n=_name, t=_y: _fit(n, Xd, t, random_state=-1),
         Raises(ValueError, r"random_state"))
    if _name in CLASSIFIERS:
        case(f"{_name}-y-single-class", lambda n=_name: _fit(n, Xd, np.ones(N)),
             Raises(ValueError, r"(?=.*\by\b)(?=.*class)"))
        case(f"{_name}-y-string-labels", lambda n=_name: _fit(n, Xd, y_str),
             Accepts(lambda est: set(est.predict(Xd)) <= {"pos", "neg"},
                     "string labels are classes; predict returns them"))
    else:
        case(f"{_name}-y-strings", lambda n=_name: _fit(n, Xd, y_str),
             Raises(ValueError, r"\by\b must be numeric"))

_EPS_ESTIMATORS = [name for name, (make, _) in ESTIMATORS.items()
                   if "epsilon" in make().get_params(deep=False)]
for _name in _EPS_ESTIMATORS:
    _t = ESTIMATORS[_name][1]
    case(f"{_name}-epsilon-negative", lambda n=_name, t=_t: _fit(n, Xd, t, epsilon=-1.0),
         Raises(ValueError, r"epsilon"))
    case(f"{_name}-epsilon-inf", lambda n=_name, t=_t: _fit(n, Xd, t, epsilon=math.inf),
         Raises(ValueError, r"epsilon"))
    case(f"{_name}-epsilon-string", lambda n=_name, t=_t: _fit(n, Xd, t, epsilon="1"),
         Raises(TypeError, r"epsilon"))
    case(f"{_name}-delta-one", lambda n=_name, t=_t: _fit(n, Xd, t, delta=1.0),
         Raises(ValueError, r"delta"))
    case(f"{_name}-n-samples-public-zero",
         lambda n=_name, t=_t: _fit(n, Xd, t, n_samples_public=0),
         Raises(ValueError, r"n_samples_public"))
    case(f"{_name}-n-samples-public-float",
         lambda n=_name, t=_t: _fit(n, Xd, t, n_samples_public=40.5),
         Raises(TypeError, r"n_samples_public"))
    case(f"{_name}-accountant-wrong-type",
         lambda n=_name, t=_t: _fit(n, Xd, t, accountant="basic"),
         Raises(TypeError, r"accountant"))
    case(f"{_name}-budget-exceeded",
         lambda n=_name, t=_t: _fit(n, Xd, t, accountant=acc.BudgetAccountant(1e-3, 1e-9)),
         Raises(BudgetExceededError, r"budget|epsilon"))

for _name in ["DPSCDClassifier", "DPSCDRegressor", "DPSGDClassifier", "DPSGDRegressor",
              "DPNBLogistic"]:
    _t = ESTIMATORS[_name][1]
    case(f"{_name}-n-epochs-2**64", lambda n=_name, t=_t: _fit(n, Xd, t, n_epochs=2**64),
         Raises(ValueError, r"n_epochs"))
    case(f"{_name}-n-epochs-zero", lambda n=_name, t=_t: _fit(n, Xd, t, n_epochs=0),
         Raises(ValueError, r"n_epochs"))
    case(f"{_name}-n-epochs-bool", lambda n=_name, t=_t: _fit(n, Xd, t, n_epochs=True),
         Raises(TypeError, r"n_epochs"))
    case(f"{_name}-alpha-negative", lambda n=_name, t=_t: _fit(n, Xd, t, alpha=-1.0),
         Raises(ValueError, r"alpha"))
for _name in ["DPSCDClassifier", "DPSCDRegressor"]:
    _t = ESTIMATORS[_name][1]
    case(f"{_name}-n-epochs-unknown-string",
         lambda n=_name, t=_t: _fit(n, Xd, t, n_epochs="many"),
         Raises(ValueError, r"n_epochs"))
for _name in ["DPSCDClassifier", "DPSCDRegressor", "DPSGDClassifier", "DPSGDRegressor"]:
    _t = ESTIMATORS[_name][1]
    case(f"{_name}-batch-size-zero", lambda n=_name, t=_t: _fit(n, Xd, t, batch_size=0),
         Raises(ValueError, r"batch_size"))
    case(f"{_name}-batch-size-huge", lambda n=_name, t=_t: _fit(n, Xd, t, batch_size=2**64),
         Raises(ValueError, r"batch_size"))
    case(f"{_name}-normalize-unknown", lambda n=_name, t=_t: _fit(n, Xd, t, normalize="l7"),
         Raises(ValueError, r"normalize"))
    case(f"{_name}-fit-intercept-string",
         lambda n=_name, t=_t: _fit(n, Xd, t, fit_intercept="yes"),
         Raises(TypeError, r"fit_intercept"))
case("DPSGDClassifier-learning-rate-negative",
     lambda: _fit("DPSGDClassifier", Xd, y01, learning_rate=-0.1),
     Raises(ValueError, r"learning_rate"))
case("DPSGDClassifier-clip-zero", lambda: _fit("DPSGDClassifier", Xd, y01, clip=0.0),
     Raises(ValueError, r"clip"))
case("DPSCDClassifier-variant-unknown",
     lambda: _fit("DPSCDClassifier", Xd, y01, variant="magic"), Raises(ValueError, r"variant"))
case("DPSCDClassifier-loss-unknown", lambda: _fit("DPSCDClassifier", Xd, y01, loss="magic"),
     Raises(ValueError, r"loss"))
case("FrankWolfe-l1-bound-zero", lambda: _fit("FrankWolfe", Xd, y01, l1_bound=0.0),
     Raises(ValueError, r"l1_bound"))
case("FrankWolfe-max-iter-huge", lambda: _fit("FrankWolfe", Xd, y01, max_iter=2**64),
     Raises(ValueError, r"max_iter"))
case("FrankWolfe-max-iter-string", lambda: _fit("FrankWolfe", Xd, y01, max_iter="many"),
     Raises(TypeError, r"max_iter"))
case("FrankWolfe-solver-unknown", lambda: _fit("FrankWolfe", Xd, y01, solver="magic"),
     Raises(ValueError, r"solver"))
case("FrankWolfe-selector-unknown", lambda: _fit("FrankWolfe", Xd, y01, mechanism="magic"),
     Raises(ValueError, r"mechanism"))
case("FrankWolfe-refresh-tol-negative", lambda: _fit("FrankWolfe", Xd, y01, refresh_tol=-1.0),
     Raises(ValueError, r"refresh_tol"))
case("FrankWolfe-clip-data-string", lambda: _fit("FrankWolfe", Xd, y01, clip_data="yes"),
     Raises(TypeError, r"clip_data"))
case("FrankWolfe-X-out-of-bound-no-clip",
     lambda: _fit("FrankWolfe", Xd * 5.0, y01, clip_data=False),
     Raises(ValueError, r"bound|clip_data"))
case("FrankWolfe-screening-fraction-two",
     lambda: _fit("FrankWolfe", Xd, y01, k="auto", selection_share=2.0),
     Raises(ValueError, r"selection_share"))
# a screening's Gaussian release composes under zCDP only: pure DP (no delta) and
# advanced composition have no place for it (a typed error that composing code catches)
case("FrankWolfe-screening-pure-dp", lambda: _fit("FrankWolfe", Xd, y01, k=10),
     Raises(ScreeningUnavailableError, r"screening.*delta > 0"))
case("FrankWolfe-screening-advanced",
     lambda: _fit("FrankWolfe", Xd, y01, k=10, delta=1e-5, composition="advanced"),
     Raises(ScreeningUnavailableError, r"screening.*zCDP"))
case("FrankWolfe-budget-n-features-zero",
     lambda: lm.FrankWolfeLassoClassifier(epsilon=1.0).budget(0),
     Raises(ValueError, r"n_features"))
case("FrankWolfe-tol-negative", lambda: _fit("FrankWolfe", Xd, y01, tol=-1.0),
     Raises(ValueError, r"\btol\b"))
case("FrankWolfe-verbose-string", lambda: _fit("FrankWolfe", Xd, y01, verbose="loud"),
     Raises(TypeError, r"verbose"))
case("FrankWolfe-nonprivate-string-labels-three-classes",
     lambda: lm.FrankWolfeLassoClassifier(max_iter=5, epsilon=None).fit(
         Xd, np.array(["a", "b", "c", "d"] * 10)),
     Accepts(lambda est: set(est.predict(Xd)) <= {"a", "b", "c", "d"}, "multinomial labels"))
case("Sparsifier-epsilon-count-zero", lambda: _fit("Sparsifier", Xd, y01, epsilon_count=0.0),
     Raises(ValueError, r"epsilon_count"))
case("Sparsifier-count-bounds-unknown",
     lambda: _fit("Sparsifier", Xd, y01, count_bounds="magic"),
     Raises(ValueError, r"count_bounds"))
case("Sparsifier-precision-negative", lambda: _fit("Sparsifier", Xd, y01, precision=-1.0),
     Raises(ValueError, r"precision"))
case("DPIGHT-sparsity-zero", lambda: _fit("DPIGHTClassifier", Xd, y01, sparsity=0),
     Raises(ValueError, r"sparsity"))
case("DPIGHT-sparsity-huge", lambda: _fit("DPIGHTClassifier", Xd, y01, sparsity=2**64),
     Raises(ValueError, r"sparsity"))
case("DPIGHT-max-iter-huge", lambda: _fit("DPIGHTClassifier", Xd, y01, max_iter=2**64),
     Raises(ValueError, r"max_iter"))
case("DPIGHT-data-norm-nan", lambda: _fit("DPIGHTClassifier", Xd, y01, data_norm=math.nan),
     Raises(ValueError, r"data_norm"))
case("DPNBLogistic-release-fraction-one",
     lambda: _fit("DPNBLogistic", Xd, y01, selection_share=1.5),
     Raises(ValueError, r"selection_share"))
case("DPNBLogistic-sampling-rate-zero",
     lambda: _fit("DPNBLogistic", Xd, y01, sampling_rate=0.0),
     Raises(ValueError, r"sampling_rate"))
case("DPNBLogistic-n-features-kept-huge",
     lambda: _fit("DPNBLogistic", Xd, y01, k=2**64),
     Accepts(lambda est: est.feature_indices_.size <= D,
             "more features kept than exist keeps them all (the default 5000 does too)"))
case("DPNBLogistic-n-features-kept-zero",
     lambda: _fit("DPNBLogistic", Xd, y01, k=0),
     Raises(ValueError, r"\bk\b"))
for _name in ["DSALLasso", "ProxSVRGLasso", "ProxASAGALasso"]:
    case(f"{_name}-alpha-negative", lambda n=_name: _fit(n, Xd, yreg, alpha=-1.0),
         Raises(ValueError, r"alpha"))
    case(f"{_name}-max-outer-huge-tol-nan", lambda n=_name: _fit(n, Xd, yreg, tol=math.nan),
         Raises(ValueError, r"\btol\b"))
    case(f"{_name}-n-inner-huge", lambda n=_name: _fit(n, Xd, yreg, n_inner=2**64),
         Raises(ValueError, r"n_inner"))
    case(f"{_name}-step-size-negative", lambda n=_name: _fit(n, Xd, yreg, step_size=-1.0),
         Raises(ValueError, r"step_size"))
    case(f"{_name}-groups-wrong-length",
         lambda n=_name: _fit(n, Xd, yreg, penalty="group_l1", groups=[0, 1]),
         Raises(ValueError, r"groups"))
    case(f"{_name}-n-jobs-zero", lambda n=_name: _fit(n, Xd, yreg, n_jobs=0),
         Raises(ValueError, r"n_jobs"))
    case(f"{_name}-sampling-unknown", lambda n=_name: _fit(n, Xd, yreg, sampling="magic"),
         Raises(ValueError, r"sampling"))
case("lasso_alpha_max-loss-unknown", lambda: lm.lasso_alpha_max(Xd, yreg, loss="magic"),
     Raises(ValueError, r"loss"))
case("lasso_duality_gap-coef-wrong-length",
     lambda: lm.lasso_duality_gap(Xd, yreg, np.zeros(3), 0.1),
     Raises(ValueError, r"coef"))
case("lasso_duality_gap-alpha-zero", lambda: lm.lasso_duality_gap(Xd, yreg, np.zeros(D), 0.0),
     Raises(ValueError, r"alpha"))
case("primal_objective-coef-wrong-length",
     lambda: lm.primal_objective(Xd, yreg, np.zeros(3), loss="squared", alpha=0.1),
     Raises(ValueError, r"coef"))
case("primal_objective-alpha-nan",
     lambda: lm.primal_objective(Xd, yreg, np.zeros(D), loss="squared", alpha=math.nan),
     Raises(ValueError, r"alpha"))
case("transform_rows-normalize-unknown", lambda: lm.transform_rows(X, "l7", False, 1.0),
     Raises(ValueError, r"normalize"))


# ================================================================ model_selection
def _search(**kw):
    base = lm.DPSGDClassifier(n_epochs=1, n_samples_public=N, epsilon=None)
    params = {"estimator": base, "param_distributions": {"alpha": [1e-4, 1e-3]},
              "epsilon": 1.0, "n_runs": 2.0, "random_state": 0, **kw}
    return ms.PrivateHyperparameterSearch(**params)


case("Search-epsilon-zero", lambda: _search(epsilon=0.0).fit(Xd, y01),
     Raises(ValueError, r"epsilon"))
case("Search-n-runs-below-one", lambda: _search(n_runs=0.5).fit(Xd, y01),
     Raises(ValueError, r"n_runs"))
case("Search-n-runs-huge", lambda: _search(n_runs=2.0**64).fit(Xd, y01),
     Raises(ValueError, r"n_runs"))
case("Search-distribution-unknown", lambda: _search(distribution="magic").fit(Xd, y01),
     Raises(ValueError, r"distribution"))
case("Search-validation-fraction-one",
     lambda: _search(validation_fraction=1.0).fit(Xd, y01),
     Raises(ValueError, r"validation_fraction"))
case("Search-param-distributions-empty",
     lambda: _search(param_distributions=[]).fit(Xd, y01),
     Raises(TypeError, r"param_distributions"))
case("Search-param-distributions-sets-epsilon",
     lambda: _search(param_distributions={"epsilon": [1.0]}).fit(Xd, y01),
     Raises(ValueError, r"param_distributions"))
case("Search-param-distributions-unknown-name",
     lambda: _search(param_distributions={"nonsense": [1.0]}).fit(Xd, y01),
     Raises(ValueError, r"param_distributions.*nonsense"))
case("Search-estimator-not-private",
     lambda: _search(estimator=lm.DSALLasso()).fit(Xd, y01),
     Raises(TypeError, r"estimator"))
case("Search-shape-negative", lambda: _search(shape=-1.0).fit(Xd, y01),
     Raises(ValueError, r"shape"))
case("Search-too-few-rows", lambda: _search().fit(Xd[:3], y01[:3]),
     Raises(ValueError, r"\bX\b.*\by\b.*4 examples"))
case("Search-score-noise-unknown", lambda: _search(score_noise="magic").fit(Xd, y01),
     Raises(TypeError, r"score_noise"))
case("Search-score-noise-negative", lambda: _search(score_noise=-1.0).fit(Xd, y01),
     Raises(ValueError, r"score_noise"))


# ================================================================ datasets
case("load_libsvm-missing-file", lambda: ds.load_libsvm(F("missing")),
     Raises(FileNotFoundError, r"does_not_exist"))
case("load_libsvm-directory", lambda: ds.load_libsvm(F("a_folder")),
     Raises(ValueError, r"a_folder"))
case("load_libsvm-truncated-bz2", lambda: ds.load_libsvm(F("truncated.bz2")),
     Raises(ValueError, r"truncated\.bz2"))
case("load_libsvm-garbage-bz2", lambda: ds.load_libsvm(F("garbage.bz2")),
     Raises(ValueError, r"garbage\.bz2"))
case("load_libsvm-prose", lambda: ds.load_libsvm(F("prose.txt")),
     Raises(ValueError, r"prose\.txt.*line 1"))
case("load_libsvm-empty", lambda: ds.load_libsvm(F("empty.txt")),
     Raises(ValueError, r"empty\.txt"))
case("load_libsvm-comments-only", lambda: ds.load_libsvm(F("comments.txt")),
     Raises(ValueError, r"comments\.txt"))
case("load_libsvm-index-99999999999", lambda: ds.load_libsvm(F("huge_index.txt")),
     Raises(ValueError, r"huge_index\.txt.*99999999999"))
case("load_libsvm-index-zero", lambda: ds.load_libsvm(F("zero_index.txt")),
     Raises(ValueError, r"zero_index\.txt"))
case("load_libsvm-binary-file", lambda: ds.load_libsvm(F("binary.bin")),
     Raises(ValueError, r"binary\.bin"))
case("load_libsvm-n-features-2**64", lambda: ds.load_libsvm(F("good.txt"), n_features=2**64),
     Raises(ValueError, r"n_features"))
case("load_libsvm-n-features-too-small", lambda: ds.load_libsvm(F("good.txt"), n_features=1),
     Raises(ValueError, r"good\.txt.*n_features"))
case("load_libsvm-n-features-zero", lambda: ds.load_libsvm(F("good.txt"), n_features=0),
     Raises(ValueError, r"n_features"))
case("load_libsvm-n-features-float", lambda: ds.load_libsvm(F("good.txt"), n_features=5.0),
     Raises(TypeError, r"n_features"))
case("load_libsvm-good-file",
     lambda: ds.load_libsvm(F("good.txt"), n_features=4),
     Accepts(lambda r: r[0].shape == (20, 4) and set(np.unique(r[1])) == {0.0, 1.0}
             and r[0][3, 0] == 0.3, "the file's values"))
case("load_text_corpus-missing", lambda: ds.load_text_corpus(F("missing")),
     Raises(FileNotFoundError, r"does_not_exist"))
case("load_text_corpus-subset-unknown", lambda: ds.load_text_corpus(F("dir"), subset="magic"),
     Raises(ValueError, r"subset"))
case("load_text_corpus-n-features-2**64",
     lambda: ds.load_text_corpus(F("dir"), n_features=2**64),
     Raises(ValueError, r"n_features"))
case("load_text_corpus-ngram-range-reversed",
     lambda: ds.load_text_corpus(F("dir"), ngram_range=(2, 1)),
     Raises(ValueError, r"ngram_range"))
case("load_text_corpus-empty-folder", lambda: ds.load_text_corpus(F("a_folder")),
     Raises(ValueError, r"a_folder"))
case("load_text_corpus-a-file", lambda: ds.load_text_corpus(F("prose.txt")),
     Raises(ValueError, r"prose\.txt"))
case("load_text_corpus-test-size-one",
     lambda: ds.load_text_corpus(F("dir"), test_size=1.0),
     Raises(ValueError, r"test_size"))
case("clip_rows-bound-zero", lambda: ds.clip_rows(X, bound=0.0), Raises(ValueError, r"bound"))
case("clip_rows-norm-unknown", lambda: ds.clip_rows(X, norm="l7"), Raises(ValueError, r"norm"))
case("clip_rows-X-nan", lambda: ds.clip_rows(X_nan), Raises(ValueError, r"\bX\b.*NaN"))
case("scale_by_max_abs-X-empty", lambda: ds.scale_by_max_abs(Xd[:0]),
     Raises(ValueError, r"\bX\b"))
case("scale_by_max_abs-per-feature-string",
     lambda: ds.scale_by_max_abs(X, per_feature="yes"), Raises(TypeError, r"per_feature"))
case("make_sparse-n-samples-zero", lambda: ds.make_sparse_classification(n_samples=0),
     Raises(ValueError, r"n_samples"))
case("make_sparse-n-features-2**64",
     lambda: ds.make_sparse_classification(n_samples=10, n_features=2**64),
     Raises(ValueError, r"n_features"))
case("make_sparse-n-samples-huge",
     lambda: ds.make_sparse_classification(n_samples=10**12, n_features=100),
     Raises(ValueError, r"n_samples"))
case("make_sparse-avg-nnz-above-features",
     lambda: ds.make_sparse_classification(n_samples=10, n_features=10, avg_nnz=50,
                                           n_informative=2, random_state=0),
     Accepts(lambda r: r[0].shape == (10, 10) and np.diff(r[0].indptr).max() <= 10,
             "documented: at most n_features draws per row"))
case("make_sparse-avg-nnz-below-one",
     lambda: ds.make_sparse_classification(n_samples=10, n_features=10, avg_nnz=0.5,
                                           n_informative=2),
     Raises(ValueError, r"avg_nnz"))
case("make_sparse-values-unknown",
     lambda: ds.make_sparse_classification(n_samples=10, n_features=100, values="magic"),
     Raises(ValueError, r"values"))
case("make_sparse-n-informative-above-features",
     lambda: ds.make_sparse_classification(n_samples=10, n_features=10, n_informative=20,
                                           avg_nnz=5),
     Raises(ValueError, r"n_informative"))
case("make_correlated-correlation-one",
     lambda: ds.make_correlated_classification(n_samples=10, correlation=1.5),
     Raises(ValueError, r"correlation"))
case("make_correlated-n-features-below-coef",
     lambda: ds.make_correlated_classification(n_samples=10, n_features=3),
     Raises(ValueError, r"n_features"))
case("make_correlated-scaling-unknown",
     lambda: ds.make_correlated_classification(n_samples=10, scaling="magic"),
     Raises(ValueError, r"scaling"))
case("get_data_path-not-a-string", lambda: ds.get_data_path(3),
     Raises(TypeError, r"name"))


# ================================================================ kernels' public wrappers
for _heap in (kernels.heap.PairingHeap, kernels.heap.FibonacciHeap):
    _hn = _heap.__name__
    case(f"{_hn}-n-items-negative", lambda h=_heap: h(-1), Raises(ValueError, r"n_items"))
    case(f"{_hn}-n-items-huge", lambda h=_heap: h(2**62), Raises(ValueError, r"n_items"))
    case(f"{_hn}-push-out-of-range", lambda h=_heap: h(3).py_push(5, 1.0),
         Raises(IndexError, r"item"))
    case(f"{_hn}-push-nan-key", lambda h=_heap: h(3).py_push(0, float("nan")),
         Raises(ValueError, r"key"))
    case(f"{_hn}-pop-empty", lambda h=_heap: h(3).py_pop(), Raises(IndexError, r"empty"))
case("LazyMaxQueue-kind-unknown", lambda: kernels.heap.LazyMaxQueue("magic", 3),
     Raises(ValueError, r"heap_kind"))
case("GroupedExpSampler-n-items-zero", lambda: kernels.grouped_sampler.GroupedExpSampler(0),
     Raises(ValueError, r"n_items"))
case("GroupedExpSampler-group-size-huge",
     lambda: kernels.grouped_sampler.GroupedExpSampler(10, group_size=2**64),
     Raises(ValueError, r"group_size"))
case("GroupedExpSampler-rel-tol-negative",
     lambda: kernels.grouped_sampler.GroupedExpSampler(10, rel_tol=-1.0),
     Raises(ValueError, r"rel_tol"))
case("GroupedExpSampler-draw-before-weights",
     lambda: kernels.grouped_sampler.GroupedExpSampler(10).draw(random_state=0),
     Raises(ValueError, r"weight"))
case("GroupedExpSampler-log-weights-wrong-length",
     lambda: kernels.grouped_sampler.GroupedExpSampler(10).set_log_weights(np.zeros(3)),
     Raises(ValueError, r"log_weights"))
case("GroupedExpSampler-log-weights-plus-inf",
     lambda: kernels.grouped_sampler.GroupedExpSampler(3).set_log_weights([0.0, np.inf, 1.0]),
     Raises(ValueError, r"log_weights"))
case("GroupedExpSampler-update-item-out-of-range",
     lambda: kernels.grouped_sampler.GroupedExpSampler(3).update_item(7, 0.0),
     Raises(ValueError, r"item"))
case("GroupedExpSampler-draw-size-negative",
     lambda: _sampler().draw(size=-1, random_state=0), Raises(ValueError, r"size"))


def _sampler():
    s = kernels.grouped_sampler.GroupedExpSampler(3)
    s.set_log_weights([0.0, 1.0, 2.0])
    return s


# ================================================================ command line
case("cli-no-command", lambda: _cli(), Exits(2, r"command|required|usage"))
case("cli-unknown-command", lambda: _cli("fly"), Exits(2, r"fly"))
case("cli-train-epsilon-negative", lambda: _cli("train", "--epsilon", "-1"),
     Exits(2, r"--epsilon"))
case("cli-train-epsilon-nan", lambda: _cli("train", "--epsilon", "nan"),
     Exits(2, r"--epsilon"))
case("cli-train-epsilon-text", lambda: _cli("train", "--epsilon", "lots"),
     Exits(2, r"--epsilon"))
case("cli-train-delta-one", lambda: _cli("train", "--epsilon", "1", "--delta", "1"),
     Exits(2, r"--delta"))
case("cli-train-model-unknown", lambda: _cli("train", "--model", "magic"),
     Exits(2, r"--model"))
case("cli-train-missing-data", lambda: _cli("train", "--epsilon", "1", "--data", F("missing")),
     Exits(2, r"does_not_exist"))
case("cli-train-prose-data",
     lambda: _cli("train", "--epsilon", "1", "--data", F("prose.txt"), "--n-features", "10"),
     Exits(1, r"prose\.txt"))
case("cli-train-truncated-data",
     lambda: _cli("train", "--epsilon", "1", "--data", F("truncated.bz2"),
                  "--n-features", "10"),
     Exits(1, r"truncated\.bz2"))
case("cli-train-test-size-two", lambda: _cli("train", "--test-size", "2"),
     Exits(2, r"--test-size"))
case("cli-train-n-runs-zero",
     lambda: _cli("train", "--search-model", "dpsgd", "--n-runs", "0"),
     Exits(2, r"--n-runs"))
case("cli-train-synthetic-features-2**64",
     lambda: _cli("train", "--synthetic-features", str(2**64)),
     Exits(2, r"--synthetic-features"))
case("cli-train-save-into-missing-folder",
     lambda: _cli("train", "--epsilon", "1", "--synthetic-samples", "50",
                  "--synthetic-features", "20", "--save", F("missing") + "/m.skops"),
     Exits(2, r"does_not_exist|--save"))
case("cli-train-seed-negative", lambda: _cli("train", "--seed", "-1"), Exits(2, r"--seed"))
case("cli-account-n-samples-2**64",
     lambda: _cli("account", "--epsilon", "1", "--n-samples", str(2**64),
                  "--n-features", "10"),
     Exits(2, r"--n-samples"))
case("cli-account-n-classes-zero",
     lambda: _cli("account", "--epsilon", "1", "--n-samples", "100", "--n-features", "10",
                  "--n-classes", "0"),
     Exits(2, r"--n-classes"))
case("cli-train-n-features-2**31",
     lambda: _cli("train", "--data", F("good.txt"), "--n-features", str(2**31)),
     Exits(2, r"--n-features"))
case("cli-account-n-samples-zero",
     lambda: _cli("account", "--n-samples", "0", "--n-features", "10"),
     Exits(2, r"--n-samples"))
case("cli-account-n-features-2**64",
     lambda: _cli("account", "--epsilon", "1", "--n-samples", "100",
                  "--n-features", str(2**64)),
     Exits(2, r"--n-features"))
case("cli-account-missing-n-features", lambda: _cli("account", "--n-samples", "100"),
     Exits(2, r"--n-features"))
case("cli-predict-missing-model",
     lambda: _cli("predict", "--model-file", F("missing"), "--data", F("good.txt")),
     Exits(2, r"does_not_exist"))
case("cli-predict-not-a-model",
     lambda: _cli("predict", "--model-file", F("not_a_model.skops"), "--data", F("good.txt")),
     Exits(2, r"--model-file.*not_a_model\.skops"))
case("cli-evaluate-model-is-folder",
     lambda: _cli("evaluate", "--model-file", F("a_folder"), "--data", F("good.txt")),
     Exits(2, r"a_folder"))


# ================================================================ persistence
case("load_model-missing", lambda: _persistence.load_model(F("missing")),
     Raises(FileNotFoundError, r"does_not_exist"))
case("load_model-text-file", lambda: _persistence.load_model(F("not_a_model.skops")),
     Raises(ValueError, r"not_a_model\.skops"))
case("load_model-empty-zip", lambda: _persistence.load_model(F("zip_not_model.skops")),
     Raises(ValueError, r"zip_not_model\.skops"))
case("load_model-libsvm-file", lambda: _persistence.load_model(F("good.txt")),
     Raises(ValueError, r"good\.txt"))
case("load_model-folder", lambda: _persistence.load_model(F("a_folder")),
     Raises(ValueError, r"a_folder.*folder"))
case("save_model-missing-folder",
     lambda: _persistence.save_model(lm.DPSGDClassifier(epsilon=None), F("missing") + "/m.skops"),
     Raises(FileNotFoundError, r"does_not_exist"))
case("untrusted_types-text-file", lambda: _persistence.untrusted_types(F("prose.txt")),
     Raises(ValueError, r"prose\.txt"))


# ================================================================ more (second pass)
case("load_libsvm-nan-value", lambda: ds.load_libsvm(F("nan_value.txt")),
     Raises(ValueError, r"nan_value\.txt.*example 1.*non-finite"))
case("load_libsvm-inf-value", lambda: ds.load_libsvm(F("inf_value.txt")),
     Raises(ValueError, r"inf_value\.txt.*example 2"))
case("load_libsvm-nan-label", lambda: ds.load_libsvm(F("nan_label.txt")),
     Raises(ValueError, r"nan_label\.txt.*label"))
case("load_libsvm-unsorted-indices", lambda: ds.load_libsvm(F("unsorted.txt")),
     Raises(ValueError, r"unsorted\.txt.*line 1"))
case("load_libsvm-truncated-gz", lambda: ds.load_libsvm(F("truncated.gz")),
     Raises(ValueError, r"truncated\.gz"))
case("load_libsvm-n-features-bool", lambda: ds.load_libsvm(F("good.txt"), n_features=True),
     Raises(TypeError, r"n_features"))
case("load_libsvm-binary-labels-string",
     lambda: ds.load_libsvm(F("good.txt"), binary_labels="yes"),
     Raises(TypeError, r"binary_labels"))
case("is_tsv_corpus-str-missing", lambda: ds.is_tsv_corpus(F("missing")),
     Accepts(lambda r: r is False, "a missing path is not a TSV corpus"))
case("is_tsv_corpus-int", lambda: ds.is_tsv_corpus(3), Raises(TypeError, r"path"))
case("corpus_has_own_split-missing", lambda: ds.corpus_has_own_split(F("missing")),
     Raises(FileNotFoundError, r"does_not_exist"))
case("make_correlated-n-samples-2**64",
     lambda: ds.make_correlated_classification(n_samples=2**64),
     Raises(ValueError, r"n_samples"))
case("make_correlated-bound-negative",
     lambda: ds.make_correlated_classification(n_samples=10, bound=-1.0),
     Raises(ValueError, r"bound"))
case("make_correlated-coef-nan",
     lambda: ds.make_correlated_classification(n_samples=10, coef=(np.nan,) * 8),
     Raises(ValueError, r"coef"))
case("clip_rows-bound-bool", lambda: ds.clip_rows(Xd, bound=True), Raises(TypeError, r"bound"))
case("DPSCDClassifier-n-samples-public-2**64",
     lambda: _fit("DPSCDClassifier", Xd, y01, n_samples_public=2**64),
     Raises(ValueError, r"n_samples_public"))
case("DPSGDClassifier-tiny-batch-many-steps",
     lambda: _fit("DPSGDClassifier", Xd, y01, n_samples_public=10**12, batch_size=1),
     Raises(ValueError, r"n_epochs.*batch_size"))
case("DPSGDClassifier-batch-size-bool", lambda: _fit("DPSGDClassifier", Xd, y01,
                                                      batch_size=True),
     Raises(TypeError, r"batch_size"))
case("FrankWolfe-max-iter-bool", lambda: _fit("FrankWolfe", Xd, y01, max_iter=True),
     Raises(TypeError, r"max_iter"))
case("DPSGDClassifier-predict-before-fit", lambda: lm.DPSGDClassifier(epsilon=None).predict(Xd),
     Raises(Exception, r"DPSGDClassifier.*not fitted"))
case("FrankWolfe-X-complex", lambda: _fit("FrankWolfe", Xd.astype(complex), y01),
     Raises(ValueError, r"\bX\b must be real-valued"))
case("DPSGDClassifier-lists",
     lambda: (_fit("DPSGDClassifier", Xd.tolist(), y01.tolist()),
              _fit("DPSGDClassifier", Xd, y01)),
     Accepts(lambda pair: np.array_equal(pair[0].coef_, pair[1].coef_),
             "lists are array-like: the same fit"))
case("FrankWolfe-sparse-coo-nan", lambda: _fit("FrankWolfe", sp.coo_array(X_nan), y01),
     Raises(ValueError, r"\bX\b.*NaN"))
case("FrankWolfe-sparse-lil-nan", lambda: _fit("FrankWolfe", sp.lil_array(X_nan), y01),
     Raises(ValueError, r"\bX\b.*NaN"))
case("FrankWolfe-sparse-dok-inf", lambda: _fit("FrankWolfe", sp.dok_array(X_inf), y01),
     Raises(ValueError, r"\bX\b.*infinity"))


def _duplicates_summing_to_inf(fmt):
    """X with entry (0, 0) stored twice as the largest double: every stored value
    is finite (what scikit-learn checks), their sum is not."""
    big = np.finfo(np.float64).max
    coo = sp.coo_array(Xd)
    data = np.r_[big, big, coo.data]
    rows, cols = np.r_[0, 0, coo.row], np.r_[0, 0, coo.col]
    if fmt == "coo":
        return sp.coo_array((data, (rows, cols)), shape=Xd.shape)
    # CSR / CSC arrays built directly, so the duplicates stay stored
    major, minor = (rows, cols) if fmt == "csr" else (cols, rows)
    order = np.argsort(major, kind="stable")
    ptr = np.r_[0, np.cumsum(np.bincount(major, minlength=Xd.shape[fmt == "csc"]))]
    cls = sp.csr_array if fmt == "csr" else sp.csc_array
    return cls((data[order], minor[order], ptr), shape=Xd.shape)


for _fmt in ("csr", "csc", "coo"):
    case(f"FrankWolfe-sparse-{_fmt}-duplicates-sum-to-inf",
         lambda f=_fmt: _fit("FrankWolfe", _duplicates_summing_to_inf(f), y01),
         Raises(ValueError, r"\bX\b.*infinity"))
case("FrankWolfe-sparse-int8",
     lambda: (_fit("FrankWolfe", sp.csr_array(Xd > 0.5).astype(np.int8), y01),
              _fit("FrankWolfe", (Xd > 0.5).astype(float), y01)),
     Accepts(lambda pair: np.array_equal(pair[0].coef_, pair[1].coef_),
             "integer sparse data: the same fit as float64"))
case("DPSGDClassifier-three-classes-hinge",
     lambda: _fit("DPSGDClassifier", Xd, np.arange(N) % 3, loss="hinge"),
     Raises(ValueError, r"loss='hinge' is binary only"))
case("DPSGDClassifier-one-class", lambda: _fit("DPSGDClassifier", Xd, np.zeros(N)),
     Raises(ValueError, r"at least two classes"))
case("DPSCDClassifier-one-class", lambda: _fit("DPSCDClassifier", Xd, np.zeros(N)),
     Raises(ValueError, r"at least two classes"))
case("DPSGDClassifier-score-length-mismatch",
     lambda: _fit("DPSGDClassifier", Xd, y01).score(Xd, y01[:-1]),
     Raises(ValueError, r"samples|inconsistent"))
case("DPSIS-bounds-nan", lambda: sel.DPSIS(k=2, bounds=(np.nan, 1.0), epsilon=None).fit(X, yreg),
     Raises(ValueError, r"bounds"))
case("DPSIS-center-outside-bounds", lambda: sel.DPSIS(k=2, center=5.0, epsilon=None).fit(X, yreg),
     Raises(ValueError, r"center"))
case("peeling_top_k-k-above-d", lambda: sel.peeling_top_k([1.0, 2.0], 3, epsilon=1.0),
     Raises(ValueError, r"\bk\b"))
case("BudgetAccountant-delta-slack-two",
     lambda: acc.BudgetAccountant(1.0, 1e-5, composition="advanced", delta_slack=2.0),
     Raises(ValueError, r"delta_slack"))
case("BudgetAccountant-check-nan", lambda: acc.BudgetAccountant(1.0).check(np.nan),
     Raises(ValueError, r"epsilon"))
case("PrivacyAccountant-orders-below-one", lambda: acc.PrivacyAccountant(orders=[0.5]),
     Raises(ValueError, r"orders"))
case("epsilon_of_event-orders-huge",
     lambda: acc.epsilon_of_event(ev.GaussianEvent(1.0), 1e-5, orders=[1e9]),
     Raises(ValueError, r"orders"))
case("rdp_to_epsilon-conversion-unknown",
     lambda: acc.rdp_to_epsilon([2.0], [1.0], 1e-5, conversion="magic"),
     Raises(ValueError, r"conversion"))
case("advanced_composition-delta-one",
     lambda: acc.advanced_composition(epsilon=0.1, delta=1.0, k=10, delta_slack=1e-6),
     Raises(ValueError, r"delta"))
case("Search-param-values-scalar",
     lambda: _search(param_distributions={"alpha": 0.1}).fit(Xd, y01),
     Raises(TypeError, r"param_distributions\['alpha'\]"))
case("Search-param-values-empty",
     lambda: _search(param_distributions={"alpha": []}).fit(Xd, y01),
     Raises(ValueError, r"param_distributions\['alpha'\]"))
case("Search-param-values-string",
     lambda: _search(param_distributions={"alpha": "0.1"}).fit(Xd, y01),
     Raises(TypeError, r"param_distributions\['alpha'\]"))


# ================================================================ more (third pass)
case("Exponential-size-huge",
     lambda: mech.Exponential(epsilon=1.0, sensitivity=1.0, random_state=0).select(
         [1.0, 2.0], size=2**40),
     Raises(ValueError, r"size must be in \[1, 2147483647\]"))
case("ReportNoisyMax-size-huge",
     lambda: mech.ReportNoisyMax(epsilon=1.0, sensitivity=1.0, random_state=0).select(
         [1.0, 2.0], size=2**40),
     Raises(ValueError, r"size must be in"))
case("peeling_top_k-size-huge",
     lambda: sel.peeling_top_k([1.0, 2.0, 3.0], 1, epsilon=1.0, size=2**40),
     Raises(ValueError, r"size must be in"))
case("canonical_top_k-size-huge",
     lambda: sel.canonical_lipschitz_top_k([1.0, 2.0, 3.0], 1, epsilon=1.0, size=2**40),
     Raises(ValueError, r"size must be in"))
case("GroupedExpSampler-draw-size-huge", lambda: _sampler().draw(size=2**40, random_state=0),
     Raises(ValueError, r"size must be in"))
case("Exponential-log-probabilities-nan",
     lambda: mech.Exponential(epsilon=1.0, sensitivity=1.0).log_probabilities([np.nan, 1.0]),
     Raises(ValueError, r"utilities"))
for _comp in ("basic", "advanced", "events"):
    case(f"BudgetAccountant-{_comp}-remaining-k-2**64",
         lambda c=_comp: acc.BudgetAccountant(1.0, 1e-5, composition=c).remaining(2**64),
         Accepts(lambda r: 0 < r[0] < 1e-9 and 0 <= r[1] < 1e-20,
                 "a tiny positive share per spend, computed without a list of k spends"))
case("BudgetAccountant-events-remaining-then-spend",
     lambda: (lambda b: (b, b.spend(*b.remaining(10**9))))(
         acc.BudgetAccountant(1.0, 1e-5, composition="events")),
     Accepts(lambda r: r[0].spent[0] <= 1.0 + 1e-9, "spending remaining() stays in budget"))
case("DPSIS-bounds-three-items",
     lambda: sel.DPSIS(k=2, bounds=(0, 1, 2), epsilon=None).fit(X, yreg),
     Raises(ValueError, r"bounds"))
case("TwoStage-gamma-nan",
     lambda: sel.TwoStageSelector(k=2, gamma=np.nan, epsilon=None).fit(X, yreg),
     Raises(ValueError, r"gamma"))
case("SIS-k-bool", lambda: sel.SIS(k=True).fit(X, yreg), Raises(TypeError, r"\bk\b"))
case("FrankWolfe-classes-one-label", lambda: _fit("FrankWolfe", Xd, y01, classes=[0]),
     Raises(ValueError, r"classes"))
case("FrankWolfe-y-outside-classes",
     lambda: _fit("FrankWolfe", Xd, y01, classes=["a", "b"]),
     Raises(ValueError, r"(?=.*\by\b)(?=.*classes)"))
case("DPSGDClassifier-classes-duplicates",
     lambda: _fit("DPSGDClassifier", Xd, y01, classes=[0, 0]),
     Raises(ValueError, r"classes"))
case("Search-n-runs-nan", lambda: _search(n_runs=np.nan).fit(Xd, y01),
     Raises(ValueError, r"n_runs"))
case("PrivateSelectThenFit-selector-k-huge",
     lambda: sel.PrivateSelectThenFit(sel.DPSIS(k=2**64, epsilon=1.0),
                                      lm.DPSGDClassifier(epsilon=1.0, n_epochs=1,
                                                         n_samples_public=N),
                                                             epsilon=None).fit(Xd, y01),
     Raises(ValueError, r"\bk\b"))
case("DSALLasso-warm-start-string", lambda: _fit("DSALLasso", Xd, yreg, warm_start="yes"),
     Raises(TypeError, r"warm_start"))
case("DSALLasso-loss-unknown", lambda: _fit("DSALLasso", Xd, yreg, loss="magic"),
     Raises(ValueError, r"loss"))
case("DSALLasso-max-outer-2**64",
     lambda: _fit("DSALLasso", Xd, yreg, max_outer=2**64, tol=1e-3),
     Accepts(lambda est: est.n_iter_ < 10**6 and np.all(np.isfinite(est.coef_)),
             "max_outer is an upper bound: the fit stops at tol"))
case("cli-train-select-fraction-zero", lambda: _cli("train", "--selection-share", "0"),
     Exits(2, r"--selection-share"))
case("cli-train-n-samples-public-zero",
     lambda: _cli("train", "--epsilon", "1", "--n-samples-public", "0"),
     Exits(2, r"--n-samples-public"))
case("cli-train-option-of-another-model",
     lambda: _cli("train", "--epsilon", "1", "--model", "dp-sgd", "--sparsity", "5"),
     Exits(2, r"--sparsity"))
case("cli-train-verbose-text", lambda: _cli("train", "--verbose", "loud"),
     Exits(2, r"--verbose"))
case("cli-train-epsilon-inf", lambda: _cli("train", "--epsilon", "inf"),
     Exits(2, r"--epsilon"))
case("cli-train-data-folder-of-nothing",
     lambda: _cli("train", "--epsilon", "1", "--data", F("a_folder")),
     Exits(1, r"--data.*a_folder"))
case("cli-predict-output-missing-folder",
     lambda: _cli("predict", "--model-file", F("good.txt"), "--data", F("good.txt"),
                  "--output", F("missing") + "/o.csv"),
     Exits(2, r"--output.*does_not_exist"))
case("cli-evaluate-missing-data", lambda: _cli("evaluate", "--model-file", F("good.txt")),
     Exits(2, r"--data"))


# ================================================================ huge budgets
# A huge finite epsilon, or a delta next to 0 or 1, must be a fast fit (the
# calibrations stop at a documented floor of the noise) or an error naming the
# argument: never a hang (the runner kills a case after TIMEOUT seconds).
def _estimator_classes():
    """Every estimator class the linear_model package exports (new ones included)."""
    from sklearn.base import BaseEstimator

    return {n: getattr(lm, n) for n in lm.__all__
            if isinstance(getattr(lm, n), type) and issubclass(getattr(lm, n), BaseEstimator)}


def _factory_of(cls):
    """The ESTIMATORS entry configuring ``cls`` (a KeyError names a missing one)."""
    for name, (make, _) in ESTIMATORS.items():
        if type(make()) is cls:
            return name
    raise KeyError(f"{cls.__name__} has no configuration in ESTIMATORS")


def test_every_estimator_is_configured():
    """A new estimator must get a configuration here, so every kind of case covers it."""
    for cls in _estimator_classes().values():
        _factory_of(cls)


_PRIVATE = [n for n, (make, _) in ESTIMATORS.items() if "epsilon" in make().get_params()]


def _finite_fit(target_epsilon=None):
    """Check: finite predictions and, for a private fit, a spend within the target."""
    def check(est):
        if not np.all(np.isfinite(est.decision_function(Xd) if hasattr(
                est, "decision_function") else est.predict(Xd))):
            return False
        if target_epsilon is None:
            return True
        eps, _ = est.privacy_spent_
        return np.isfinite(eps) and 0 <= eps <= target_epsilon
    return check


#: Estimators whose delta is spent by a pure-DP selector's floating-point bound:
#: a delta below that bound (~1e-14) is refused by name.
_DELTA_FLOOR = {"FrankWolfe", "Sparsifier"}
for _name in _PRIVATE:
    _t = ESTIMATORS[_name][1]
    for _huge in (1e300, 1e12):
        case(f"{_name}-epsilon-{_huge:g}",
             lambda n=_name, t=_t, e=_huge: _fit(n, Xd, t, epsilon=e),
             Accepts(_finite_fit(_huge), "a fast fit spending at most epsilon"))
    case(f"{_name}-delta-near-one",
         lambda n=_name, t=_t: _fit(n, Xd, t, delta=1.0 - 1e-16),
         Accepts(_finite_fit(1.0), "a valid (weak) guarantee"))
    case(f"{_name}-delta-1e-300",
         lambda n=_name, t=_t: _fit(n, Xd, t, delta=1e-300),
         Raises(ValueError, r"delta") if _name in _DELTA_FLOOR
         else Accepts(_finite_fit(1.0), "a fit with much noise"))
    case(f"{_name}-epsilon-1e300-delta-1e-300",
         lambda n=_name, t=_t: _fit(n, Xd, t, epsilon=1e300, delta=1e-300),
         Raises(ValueError, r"delta") if _name in _DELTA_FLOOR
         else Accepts(_finite_fit(1e300), "a fast fit"))

case("calibrate_noise_multiplier-epsilon-1e300",
     lambda: acc.calibrate_noise_multiplier(target_epsilon=1e300, delta=1e-5,
                                            sampling_rate=0.01, steps=1),
     Accepts(lambda s: s == acc.MIN_NOISE_MULTIPLIER,
             "the documented floor of the noise multiplier"))
case("calibrate_noise_multiplier-delta-1e-300",
     lambda: acc.calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-300,
                                            sampling_rate=0.01, steps=100),
     Accepts(lambda s: acc.RDPAccountant().compose_subsampled_gaussian(
         noise_multiplier=s, sampling_rate=0.01, steps=100).get_epsilon(1e-300) <= 1.0,
         "a noise multiplier meeting the target"))
case("calibrate_noise_multiplier-min-above-max",
     lambda: acc.calibrate_noise_multiplier(target_epsilon=1.0, delta=1e-5,
                                            sampling_rate=0.01, steps=1,
                                            min_noise_multiplier=10.0,
                                            max_noise_multiplier=1.0),
     Raises(ValueError, r"min_noise_multiplier"))
case("calibrate_noise_multiplier-moments-epsilon-1e300",
     lambda: acc.calibrate_noise_multiplier(target_epsilon=1e300, delta=1e-5,
                                            sampling_rate=0.01, steps=1,
                                            accountant="moments"),
     Accepts(lambda s: 0 < s < 1e-3, "the floor, fast"))
case("calibrate_parameter-epsilon-1e300",
     lambda: acc.calibrate_parameter(lambda s: ev.GaussianEvent(s), target_epsilon=1e300,
                                     delta=1e-5, low=1e-3, high=1e6, increasing=False,
                                     composition="rdp"),
     Accepts(lambda s: s == 1e-3, "the low end of the bracket"))
case("calibrate_parameter-delta-one",
     lambda: acc.calibrate_parameter(lambda s: ev.GaussianEvent(s), target_epsilon=1.0,
                                     delta=1.0, low=1e-3, high=1e6, increasing=False),
     Raises(ValueError, r"delta"))
case("talwar_noise_scale-epsilon-1e300-delta-1e-300",
     lambda: acc.talwar_noise_scale(epsilon=1e300, delta=1e-300, max_iter=10),
     Accepts(lambda s: np.isfinite(s) and s >= 0, "a finite noise scale"))
case("laplace_report_noisy_max_scale-epsilon-1e300",
     lambda: acc.laplace_report_noisy_max_scale(epsilon=1e300, sensitivity=1.0),
     Accepts(lambda s: np.isfinite(s) and s >= 0, "a finite noise scale"))
case("per_step_epsilon-epsilon-total-1e300",
     lambda: acc.per_step_epsilon(epsilon_total=1e300, delta_slack=1e-300, k=10),
     Accepts(lambda e: np.isfinite(e) and e > 0, "a finite per-step epsilon"))
for _cls in (mech.Laplace, mech.DoubleGeometric, mech.GaussianAnalytic):
    _d = 1e-300 if _cls is mech.GaussianAnalytic else 0.0
    case(f"{_cls.__name__}-epsilon-1e300",
         lambda c=_cls, d=_d: c(epsilon=1e300, delta=d, sensitivity=1.0,
                                random_state=0).randomise(3),
         Accepts(lambda v: np.isfinite(v) and abs(v - 3) < 1e-6, "the value, unperturbed"))
for _cls in (mech.Gaussian, mech.GaussianAnalytic):
    case(f"{_cls.__name__}-delta-1e-300",
         lambda c=_cls: c(epsilon=0.5, delta=1e-300, sensitivity=1.0,
                          random_state=0).randomise(0.0),
         Accepts(np.isfinite, "a finite value"))
    case(f"{_cls.__name__}-delta-near-one",
         lambda c=_cls: c(epsilon=0.5, delta=1.0 - 1e-16, sensitivity=1.0,
                          random_state=0).randomise(0.0),
         Accepts(np.isfinite, "a finite value"))
for _cls in (mech.Exponential, mech.ReportNoisyMax):
    case(f"{_cls.__name__}-epsilon-1e300",
         lambda c=_cls: c(epsilon=1e300, sensitivity=1.0, random_state=0).select([1.0, 3.0,
                                                                                  2.0]),
         Accepts(lambda i: i == 1, "the top utility"))
for _cls in (mech.Laplace, mech.Gaussian, mech.GaussianAnalytic):
    _d = 0.0 if _cls is mech.Laplace else 1e-5
    case(f"{_cls.__name__}-randomise-overflow",
         lambda c=_cls, d=_d: c(epsilon=0.5, delta=d, sensitivity=1e308,
                                random_state=0).randomise([1e308, -1e308]),
         Raises(ValueError, r"value"))


# ================================================================ every parameter
# A value outside a parameter's range is refused by name in a fit without
# epsilon as well, for every estimator and every parameter (validated whether
# or not the fit uses it).
BAD_VALUES = {
    "delta": -0.1, "n_samples_public": 0, "accountant": "basic", "random_state": 1.5,
    "classes": 3, "l1_bound": -1.0, "max_iter": 0, "solver": "magic",
    "mechanism": "magic", "composition": "magic",
    "neighbouring": "magic", "loss": "magic",
    "penalty": "magic", "sampling": "magic", "subproblem_solver": "magic",
    "nonprivate_solver": "magic", "count_bounds": "magic", "variant": "magic", "multi_class": "magic",
    "normalize": "l7", "refresh_tol": -1.0, "k": 0, "selection_share": 2.0,
    "start": "magic", "start_steps": -1,
    "clip_data": "yes", "tol": -1.0, "verbose": -1,
    "epsilon_count": 0.0, "precision": -1.0, "nonprivate_max_iter": 0,
    "memory": 5, "alpha": -1.0, "batch_size": 0, "clip": -1.0,
    "n_epochs": 0, "perturb_dual": "yes", "fit_intercept": "yes",
    "learning_rate": -0.1,
    "sparsity": 0, "data_norm": -1.0,
    "sampling_rate": 0.0, "averaging_fraction": 0.0,
    "groups": "x", "n_jobs": 0, "step_size": -1.0, "n_inner": 0, "max_outer": 0,
    "warm_start": "yes", "working_set": "yes", "variance_reduction": "yes",
    "screening": "yes",   # DSAL's Gap Safe rule (a bool)
}
#: Further bad values of the parameters the audit found accepted without epsilon.
MORE_BAD_VALUES = [("l1_bound", math.nan), ("l1_bound", True), ("delta", math.nan),
                   ("delta", 1.0), ("delta", "magic"), ("max_iter", -1.0),
                   ("refresh_tol", math.nan), ("composition", 0),
                   ("neighbouring", 1.5),
                   ("clip_data", 0), ("random_state", "magic"),
                   ("selection_share", "magic"), ("start", 0), ("start_steps", 1.5)]


def test_every_parameter_has_a_bad_value():
    """A new parameter must get a bad value here (and a constraint in its class)."""
    for cls in _estimator_classes().values():
        params = cls().get_params()
        missing = sorted(set(params) - {"epsilon"} - set(BAD_VALUES))
        assert not missing, f"{cls.__name__}: add bad values of {missing}"
        assert set(params) <= set(cls._parameter_constraints), cls.__name__


def _nonprivate(name, **kw):
    make, t = ESTIMATORS[name]
    if "epsilon" in make().get_params():
        kw = {"epsilon": None, **kw}
    return make(**kw).fit(Xd, t)


for _name, (_make, _t) in ESTIMATORS.items():
    _params = _make().get_params()
    for _p in sorted(set(_params) - {"epsilon"}):
        case(f"{_name}-nonprivate-{_p}-invalid",
             lambda n=_name, p=_p: _nonprivate(n, **{p: BAD_VALUES[p]}),
             Raises(ValueError, rf"\b{_p}\b"))
    for _p, _v in MORE_BAD_VALUES:
        if _p in _params:
            case(f"{_name}-nonprivate-{_p}-{_v!r}",
                 lambda n=_name, p=_p, v=_v: _nonprivate(n, **{p: v}),
                 Raises(ValueError, rf"\b{_p}\b"))


# ================================================================ huge feature values
# Finite but huge entries of X (or targets y): a fit with finite outputs, or an
# error naming the argument; never an IndexError or a message about a step size.
def _fit_or_refusal(name, Xa, ya, **kw):
    try:
        return _fit(name, Xa, ya, **kw)
    except ValueError as exc:
        return ("refused", str(exc))


def _finite_or_named(arg):
    def check(r):
        if isinstance(r, tuple):
            return re.search(rf"\b{arg}\b", r[1]) is not None
        return _finite_fit()(r)
    return check


for _name, (_make, _t) in ESTIMATORS.items():
    _modes = {"private": {}, "nonprivate": {"epsilon": None}} if _name in _PRIVATE \
        else {"nonprivate": {}}
    for _mode, _kw in _modes.items():
        for _big in (1e300, 1e200, 1e30):
            _Xb = Xd.copy()
            _Xb[0, 0] = _big
            _Xb[5, 3] = -_big
            case(f"{_name}-{_mode}-X-entry-{_big:g}",
                 lambda n=_name, t=_t, Xb=_Xb, kw=_kw: _fit_or_refusal(n, Xb, t, **kw),
                 Accepts(_finite_or_named("X"), "finite outputs or an error naming X"))
        case(f"{_name}-{_mode}-X-sparse-inf",
             lambda n=_name, t=_t, kw=_kw: _fit(n, sp.csr_array(X_inf), t, **kw),
             Raises(ValueError, r"\bX\b.*(NaN|infinity)"))
        case(f"{_name}-{_mode}-X-sparse-nan",
             lambda n=_name, t=_t, kw=_kw: _fit(n, sp.csr_array(X_nan), t, **kw),
             Raises(ValueError, r"\bX\b.*NaN"))
        case(f"{_name}-{_mode}-X-float32-max",
             lambda n=_name, t=_t, kw=_kw: _fit_or_refusal(
                 n, np.full((N, D), np.finfo(np.float32).max, dtype=np.float32), t, **kw),
             Accepts(_finite_or_named("X"), "finite outputs or an error naming X"))
        if _name not in CLASSIFIERS:
            case(f"{_name}-{_mode}-y-1e300",
                 lambda n=_name, t=_t, kw=_kw: _fit_or_refusal(n, Xd, t * 1e300, **kw),
                 Accepts(_finite_or_named("y"), "finite outputs or an error naming y"))
            case(f"{_name}-{_mode}-y-inf",
                 lambda n=_name, t=_t, kw=_kw: _fit(n, Xd, np.where(np.arange(N) == 2,
                                                                    np.inf, t), **kw),
                 Raises(ValueError, r"\by\b.*(NaN|infinity)"))


# ================================================================ the test
_IDS = [c.id for c in CASES]
assert len(set(_IDS)) == len(_IDS), [i for i in _IDS if _IDS.count(i) > 1]


def test_enough_cases():
    assert len(CASES) >= 150


def _sleep_forever():
    import time

    while True:
        time.sleep(1.0)


def _killed():
    import signal

    os.kill(os.getpid(), signal.SIGKILL)  # as a segfault would (without a core dump)


@pytest.mark.parametrize("c, verdict", [
    (Case("hang", _sleep_forever, Raises(ValueError, "x")), "hang"),
    (Case("crash", _killed, Raises(ValueError, "x")), "crash"),
    (Case("exit", lambda: os._exit(3), Raises(ValueError, "x")), "crash"),
    (Case("silent", lambda: 1.0, Raises(ValueError, "x")), "silent acceptance"),
    (Case("wrong-type", lambda: int("x"), Raises(TypeError, "x")), "wrong exception"),
    (Case("unnamed", lambda: math.sqrt(-1), Raises(ValueError, "epsilon")),
     "does not match"),
    (Case("wrong-answer", lambda: 2.0, Accepts(lambda r: r == 1.0)), "wrong answer"),
    (Case("memory", lambda: np.ones(2**40), Raises(ValueError, "n")), "wrong exception"),
    (Case("cli-status", lambda: _cli("account"), Exits(1, "")), "exit status"),
])
def test_runner_reports_each_failure(c, verdict):
    """The runner itself: each kind of failure is caught and named."""
    failure = run_case(c, timeout=2.0)
    assert failure is not None and verdict in failure, failure


@pytest.mark.parametrize("c", CASES, ids=_IDS)
def test_bad_input(c):
    failure = run_case(c)
    if failure is not None:
        pytest.fail(f"{c.id}: {failure}", pytrace=False)
