"""Benchmark: the low-rank (K ≈ ΦΦᵀ) replica/ADATAP theory at scale, against Monte-Carlo and a scikit-learn refit.

For N ∈ {1,000, 4,000, 16,000 (synthetic), 53,940 (diamonds), 200,000 (synthetic)} × rank m ∈ {128, 256, 512}, at
S/N = 1, prints one markdown table of ratios measured in one run (never compare absolute seconds across machines):

- the ADATAP theory (``solve_replica_lowrank``, tol 1e-3, cold start): seconds, iterations, and its peak memory —
  the tracemalloc peak during the solve above what existed before it (Φ, y), in MB and in units of N·m·8 bytes;
  tracemalloc counts numpy's array buffers (numpy reports them to it), not the interpreter or BLAS workspaces;
- the approximate ADATAP (``approximate_replica_lowrank``): seconds;
- one Monte-Carlo sample (one refit ``posterior_weights`` on Poisson(1) occupations plus the predictor Φμ at the N
  inputs): seconds, and the theory in MC samples; the Monte-Carlo learning curve's own wall time per sample beside it;
- theory − Monte-Carlo (Efron's estimator eq. 17 with B samples, ``bootstrap_learning_curve_lowrank``) in MC standard
  errors (a gap of a few SE is the low-rank theory's bias showing at that B, not noise);
- where N ≤ 4,000, the dense theory (``solve_replica``) on the exact kernel matrix K and on ΦΦᵀ, and the relative
  difference between the low-rank ε and the dense ε on ΦΦᵀ (the same model: it should be at the solver's tolerance);
- the user's alternative: scikit-learn ``Nystroem(kernel="rbf", gamma=1/(2ℓ²), n_components=m)`` transform (once) and
  one bootstrap refit ``Ridge(alpha=σ²/σ_f², fit_intercept=False).fit(Z, y, sample_weight=s)``, s ~ Poisson(1), on
  the precomputed Z (alpha = σ²/σ_f² makes it the same model as ΦΦᵀ + σ²I: Nystroem's rbf has k(x, x) = 1), and
  the theory in such refits.

Then the targets (diamonds, m = 256: theory ≤ 100 refits, goal 20; N = 200,000, m = 256: theory finishes in O(N m)
memory; the ``explorer learning-curve --dataset diamonds --rank 256 --mc-samples 20 --json`` command under 1.5 GB
peak RSS, measured with ``/usr/bin/time -v``) and the total run time.

Synthetic data: 8 standard-normal inputs, y = sin(x1) + 0.5 x2² + 0.5 x3 x4 + 0.3 noise, inputs and target
standardised; squared exponential ℓ = 2.5, σ_f² = 1, σ² = 0.1. Diamonds: the maximum-evidence ℓ, σ_f², σ² of the
rank-256 Nyström GP (``maximum_evidence_lowrank``, landmark seed 0), fitted once and reused for every m.

One BLAS thread per process (the explorer command's policy), for every method including scikit-learn's. Timings are
best of --repeats cold runs at N ≤ 100,000 and one run above. Run from the repository root:
.venv/bin/python benchmarks/bench_scale.py [--quick] [--sizes 1000,4000,diamonds] [--ranks 128,256] [--mc-samples B]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info

from explorer import datasets
from explorer.bootstrap.replica import (
    ConvergenceError,
    approximate_replica_lowrank,
    bootstrap_test_error,
    solve_replica,
    solve_replica_lowrank,
)
from explorer.gp_bootstrap.evidence import maximum_evidence_lowrank
from explorer.gp_bootstrap.montecarlo import bootstrap_learning_curve_lowrank, posterior_weights
from explorer.kernels import SquaredExponential
from explorer.lowrank import nystrom_features
from explorer.runtime.engine import use_single_threaded_blas

ROOT = Path(__file__).resolve().parent.parent
DIAMONDS = "diamonds"
SIZES = ("1000", "4000", "16000", DIAMONDS, "200000")
RANKS = (128, 256, 512)
QUICK_SIZES, QUICK_RANKS = ("1000", "4000", "16000"), (128, 256)
DENSE_MAX_N = 4000
REPEAT_MAX_N = 100_000
SYNTHETIC_LENGTHSCALE, SYNTHETIC_NOISE = 2.5, 0.1
EVIDENCE_RANK = 256
TARGET_REFITS, GOAL_REFITS, TARGET_RSS_GB = 100.0, 20.0, 1.5
SOLVE_LIMIT_S = 600.0
CLI = [str(ROOT / ".venv/bin/explorer"), "learning-curve", "--dataset", DIAMONDS, "--rank", "256",
       "--mc-samples", "20", "--json"]
CLI_FALLBACK = [*CLI, "--s-over-n", "1"]
#: The modules measured (they were being edited while this benchmark was written: their hashes identify the run).
MODULES = ("explorer/lowrank.py", "explorer/bootstrap/replica.py",
           "explorer/gp_bootstrap/montecarlo.py", "explorer/gp_bootstrap/evidence.py",
           "explorer/cli/gp_bootstrap.py")


class TimeLimit(Exception):
    """A measured call ran past its time limit (``--solve-limit``)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise :class:`TimeLimit` in the main thread after ``seconds`` (SIGALRM; the solvers' loops are Python)."""
    def expire(_signum, _frame):
        raise TimeLimit(f"stopped after {seconds:g} s (--solve-limit)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0.0)
        signal.signal(signal.SIGALRM, previous)


@dataclass(frozen=True)
class Problem:
    """One data set with its squared-exponential kernel and noise variance."""

    name: str
    X: np.ndarray
    y: np.ndarray
    kernel: SquaredExponential
    noise_var: float

    @property
    def n(self) -> int:
        return self.y.size


@dataclass
class Row:
    """The measurements of one (N, m); NaN where not measured."""

    name: str
    n: int
    m: int
    B: int
    theory_s: float = np.nan
    n_iter: int | str = "-"
    approx_s: float = np.nan
    peak_mb: float = np.nan
    mc_sample_s: float = np.nan
    mc_curve_s: float = np.nan
    eps_theory: float = np.nan
    eps_mc: float = np.nan
    se_mc: float = np.nan
    dense_K_s: float = np.nan
    dense_phi_s: float = np.nan
    dense_rel: float = np.nan
    nystroem_s: float = np.nan
    refit_s: float = np.nan
    converged: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def k_mem(self) -> float:
        return self.peak_mb * 1e6 / (8.0 * self.n * self.m)


# ----------------------------------------------------------------------------- machine and timing

def blas_line() -> str:
    libs = [f"{i.get('internal_api')} {i.get('version')} ({i.get('architecture', '?')}, {i.get('num_threads')} "
            f"thread{'s' if i.get('num_threads') != 1 else ''})" for i in threadpool_info() if i["user_api"] == "blas"]
    return "; ".join(libs) or "none found"


def load_line() -> str:
    return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg()) + " (1, 5, 15 min)"


def fingerprint() -> str:
    return ", ".join(f"{name.removeprefix('explorer/')} {hashlib.sha1((ROOT / name).read_bytes()).hexdigest()[:8]}"
                     for name in MODULES if (ROOT / name).exists())


def print_machine() -> None:
    import scipy
    import sklearn
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()} {platform.processor() or ''}, {cores} cores "
          f"usable of {os.cpu_count()}; Python {platform.python_version()}, numpy {np.__version__}, "
          f"scipy {scipy.__version__}, scikit-learn {sklearn.__version__}")
    print(f"BLAS: {blas_line()}")
    print(f"at start: {load_line()}")
    print(f"modules (sha1): {fingerprint()}")


def timed(fn):
    """(fn(), seconds)."""
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def best_of(fn, repeats: int):
    """(the first result, the least seconds of ``repeats`` calls)."""
    out, best = timed(fn)
    for _ in range(repeats - 1):
        best = min(best, timed(fn)[1])
    return out, best


def peak_mb(fn) -> float:
    """tracemalloc peak during fn() above the traced memory before it, in MB (numpy buffers, not the interpreter)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        return (tracemalloc.get_traced_memory()[1] - base) / 1e6
    finally:
        tracemalloc.stop()


# ----------------------------------------------------------------------------- data

def synthetic(n: int, seed: int = 0) -> Problem:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 8))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.5 * X[:, 2] * X[:, 3] + 0.3 * rng.standard_normal(n)
    X = (X - X.mean(axis=0)) / X.std(axis=0, ddof=1)
    y = (y - y.mean()) / y.std(ddof=1)
    return Problem(f"synthetic {n:,}", X, y, SquaredExponential(SYNTHETIC_LENGTHSCALE, 1.0), SYNTHETIC_NOISE)


def diamonds() -> Problem:
    data = datasets.load(DIAMONDS)
    X, y = np.asarray(data.inputs, dtype=float), np.asarray(data.targets, dtype=float)
    fit, seconds = timed(lambda: maximum_evidence_lowrank(X, y, rank=EVIDENCE_RANK, rng=0))
    print(f"diamonds (N = {y.size:,}): maximum evidence at m = {EVIDENCE_RANK}: ℓ = {fit.lengthscale:.4g}, "
          f"σ_f² = {fit.signal_var:.4g}, σ² = {fit.noise_var:.4g}, log p = {fit.log_evidence:.6g}; "
          f"{fit.n_iter} L-BFGS-B iterations, {fit.n_evaluations} evaluations, converged {fit.converged}, "
          f"{seconds:.1f} s. Reused for every m.")
    return Problem(f"diamonds {y.size:,}", X, y, SquaredExponential(fit.lengthscale, fit.signal_var), fit.noise_var)


def problem(size: str) -> Problem:
    return diamonds() if size == DIAMONDS else synthetic(int(size))


def default_mc_samples(n: int, quick: bool) -> int:
    """B of the Monte-Carlo curve: 200 at N ≤ 16,000, 40 up to diamonds, 10 above (a quarter with --quick)."""
    B = 200 if n <= 16_000 else 40 if n <= 60_000 else 10
    return max(B // 4, 10) if quick else B


# ----------------------------------------------------------------------------- measurements

def measure_theory(row: Row, p: Problem, phi: np.ndarray, repeats: int, limit: float) -> None:
    S = float(p.n)
    try:
        with time_limit(limit):
            sol, row.theory_s = best_of(lambda: solve_replica_lowrank(phi, p.y, p.noise_var, S), repeats)
        row.n_iter, row.converged = sol.n_iter, sol.converged
    except ConvergenceError as err:
        row.notes.append(f"theory: {err}")
        sol = err.last
        row.n_iter = f"{getattr(sol, 'n_iter', '?')}, failed"
    except TimeLimit as err:
        row.notes.append(f"theory: {err}")
        row.n_iter, sol = "stopped", None
    if sol is not None:
        row.eps_theory = bootstrap_test_error(sol)
        row.peak_mb = peak_mb(lambda: _limited(lambda: solve_replica_lowrank(phi, p.y, p.noise_var, S), limit))
    try:
        with time_limit(limit):
            row.approx_s = best_of(lambda: approximate_replica_lowrank(phi, p.y, p.noise_var, S), repeats)[1]
    except (ConvergenceError, TimeLimit) as err:
        row.notes.append(f"approximate ADATAP: {err}")


def _limited(fn, limit: float) -> None:
    """fn() under the time limit; its failures are reported by the timed run, not again here."""
    with contextlib.suppress(ConvergenceError, TimeLimit), time_limit(limit):
        fn()


def measure_montecarlo(row: Row, p: Problem, phi: np.ndarray, repeats: int) -> None:
    rng = np.random.default_rng(1)
    draws = [rng.poisson(1.0, p.n) for _ in range(repeats + 2)]

    def one_sample():
        s = draws.pop()
        return phi @ posterior_weights(phi, p.y, p.noise_var, s)

    row.mc_sample_s = best_of(one_sample, repeats + 2)[1]
    curve, seconds = timed(lambda: bootstrap_learning_curve_lowrank(phi, p.y, p.noise_var, [float(p.n)], row.B,
                                                                    rng=0))
    row.mc_curve_s = seconds / row.B
    row.eps_mc, row.se_mc = float(curve.errors[0].value), float(curve.errors[0].se)


def dense_exact(p: Problem, cache: dict) -> tuple[float, float]:
    """(seconds, ε) of the dense theory on the exact K, once per data set."""
    if p.name not in cache:
        K = p.kernel(p.X)
        sol, seconds = timed(lambda: solve_replica(K, p.y, p.noise_var, float(p.n)))
        cache[p.name] = (seconds, bootstrap_test_error(sol))
    return cache[p.name]


def measure_dense(row: Row, p: Problem, phi: np.ndarray, cache: dict) -> None:
    row.dense_K_s, eps_exact = dense_exact(p, cache)
    K_phi = phi @ phi.T
    sol, row.dense_phi_s = timed(lambda: solve_replica(K_phi, p.y, p.noise_var, float(p.n)))
    row.dense_rel = abs(row.eps_theory / bootstrap_test_error(sol) - 1.0)
    row.notes.append(f"ε on the exact K {eps_exact:.4f} (the Nyström model's own error: "
                     f"{row.eps_theory / eps_exact - 1:+.1%})")


def measure_sklearn(row: Row, p: Problem, repeats: int) -> None:
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import Ridge

    ell, signal_var = float(p.kernel.params["lengthscale"]), float(p.kernel.params["signal_var"])
    nystroem = Nystroem(kernel="rbf", gamma=1.0 / (2.0 * ell**2), n_components=row.m, random_state=0)
    Z, row.nystroem_s = timed(lambda: nystroem.fit_transform(p.X))
    rng = np.random.default_rng(2)
    ridge = Ridge(alpha=p.noise_var / signal_var, fit_intercept=False)
    ridge.fit(Z, p.y, sample_weight=rng.poisson(1.0, p.n).astype(float))  # warm-up (first-call imports)
    draws = [rng.poisson(1.0, p.n).astype(float) for _ in range(repeats + 2)]
    row.refit_s = best_of(lambda: ridge.fit(Z, p.y, sample_weight=draws.pop()), repeats + 2)[1]


def measure(p: Problem, m: int, B: int, repeats: int, dense_cache: dict, limit: float) -> Row:
    row = Row(p.name, p.n, m, B)
    if m > p.n:
        row.notes.append("m > N: skipped")
        return row
    phi = nystrom_features(p.kernel, p.X, m, rng=0).phi
    measure_theory(row, p, phi, repeats, limit)
    measure_montecarlo(row, p, phi, repeats)
    if p.n <= DENSE_MAX_N:
        measure_dense(row, p, phi, dense_cache)
    measure_sklearn(row, p, repeats)
    return row


# ----------------------------------------------------------------------------- report

def fmt(value: float, spec: str) -> str:
    return "–" if value is None or (isinstance(value, float) and np.isnan(value)) else format(value, spec)


HEADER = ("| data | N | m | theory s | iter | approx s | peak MB | peak/(8Nm) | MC sample s | theory in MC | "
          "MC curve s/sample | ε theory | ε MC ± SE | B | theory−MC in SE | dense K s | dense ΦΦᵀ s | "
          "\\|ε/ε_dense(ΦΦᵀ) − 1\\| | Nystroem s | Ridge refit s | theory in refits |")


def table_line(r: Row) -> str:
    gap = (r.eps_theory - r.eps_mc) / r.se_mc
    cells = [r.name, f"{r.n:,}", str(r.m), fmt(r.theory_s, ".3g"), str(r.n_iter), fmt(r.approx_s, ".3g"),
             fmt(r.peak_mb, ".0f"), fmt(r.k_mem, ".2f"), fmt(r.mc_sample_s, ".3g"),
             fmt(r.theory_s / r.mc_sample_s, ".1f"), fmt(r.mc_curve_s, ".3g"), fmt(r.eps_theory, ".4f"),
             f"{fmt(r.eps_mc, '.4f')} ± {fmt(r.se_mc, '.4f')}", str(r.B), fmt(gap, "+.1f"),
             fmt(r.dense_K_s, ".3g"), fmt(r.dense_phi_s, ".3g"), fmt(r.dense_rel, ".1e"),
             fmt(r.nystroem_s, ".3g"), fmt(r.refit_s, ".3g"), fmt(r.theory_s / r.refit_s, ".1f")]
    return "| " + " | ".join(cells) + " |"


def print_table(rows: list[Row]) -> None:
    print("\n" + HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|")
    for r in rows:
        print(table_line(r))
    print("\npeak MB: tracemalloc peak during one theory solve above the memory traced before it (Φ and y, "
          "N·m·8 bytes, are not counted); it counts numpy array buffers (numpy reports them to tracemalloc), not the "
          "interpreter, imported modules or BLAS workspaces. MC sample: one refit plus Φμ (best of a few); MC curve: "
          "the learning curve's wall time / B (draws, refits and Efron's estimator).")
    rel = [r.dense_rel for r in rows if not np.isnan(r.dense_rel)]
    if rel:
        print(f"The low-rank ε equals the dense ε on ΦΦᵀ to within {max(rel):.1e} (relative, largest over "
              f"N ≤ {DENSE_MAX_N:,}; both solved to the default tol 1e-3).")
    for r in rows:
        for note in r.notes:
            print(f"  {r.name}, m = {r.m}: {note}")


def find(rows: list[Row], n: int | None, m: int, name: str | None = None) -> Row | None:
    return next((r for r in rows if r.m == m and (r.n == n or (name and r.name.startswith(name)))), None)


def verdict(met: bool, by: str) -> str:
    return "met" if met else f"missed by {by}"


def print_targets(rows: list[Row], cli: list[dict] | None) -> None:
    print("\nTargets:")
    r = find(rows, None, 256, DIAMONDS)
    if r is None or np.isnan(r.refit_s):
        print("- diamonds, m = 256: ADATAP ≤ 100 refits of the scikit-learn alternative (goal 20): not measured")
    else:
        x = r.theory_s / r.refit_s
        print(f"- diamonds, m = 256: ADATAP ≤ 100 refits of the scikit-learn alternative (goal 20): measured "
              f"{x:.1f} refits ({r.theory_s:.2f} s / {r.refit_s:.3f} s) — target "
              f"{verdict(x <= TARGET_REFITS, f'×{x / TARGET_REFITS:.2f}')}, goal {verdict(x <= GOAL_REFITS, f'×{x / GOAL_REFITS:.2f}')}"
              f"; with the Nystroem transform in every refit: {r.theory_s / (r.refit_s + r.nystroem_s):.1f} refits")
    print_memory_target(rows)
    print_cli_target(cli)


def print_memory_target(rows: list[Row]) -> None:
    r = find(rows, 200_000, 256)
    if r is None or np.isnan(r.peak_mb):
        print("- N = 200,000, m = 256: theory finished, peak memory O(N m): not measured")
        return
    others = [f"{o.k_mem:.2f} at N = {o.n:,}" for o in rows if o.m == 256 and o.n != r.n and not np.isnan(o.peak_mb)]
    small = [o.k_mem for o in rows if o.m == 256 and o.n != r.n and not np.isnan(o.peak_mb)]
    linear = not small or r.k_mem <= 1.5 * max(small)
    met = r.converged and linear
    why = ("the theory did not converge" if not r.converged else
           f"peak/(8Nm) grew ×{r.k_mem / max(small):.2f} from the smaller N")
    print(f"- N = 200,000, m = 256: theory finished ({r.n_iter} iterations, {r.theory_s:.1f} s, converged "
          f"{r.converged}), peak {r.peak_mb:.0f} MB ≈ {r.k_mem:.2f}·N·m·8 bytes beyond Φ (memory O(N m); "
          f"peak/(8Nm) {', '.join(others) or 'not measured at other N'}) — {verdict(met, why)}")


def print_cli_target(cli: list[dict] | None) -> None:
    if cli is None:
        print("- `explorer learning-curve --dataset diamonds --rank 256 --mc-samples 20 --json`: not run")
        return
    for run in cli:
        line = f"- `{' '.join(['explorer', *run['cmd'][1:]])}`: "
        if "rss_mb" not in run:
            print(line + run["error"])
            continue
        gb = run["rss_mb"] / 1e3
        status = "finished" if "error" not in run else f"FAILED ({run['error']})"
        met = verdict(gb < TARGET_RSS_GB and "error" not in run,
                      f"{(gb - TARGET_RSS_GB) * 1e3:.0f} MB" if gb >= TARGET_RSS_GB else "the failure")
        print(line + f"{status}; wall {run['wall_s']:.1f} s, peak RSS {run['rss_mb']:.0f} MB ({run['how']}); "
              f"target under {TARGET_RSS_GB} GB — {met}")


# ----------------------------------------------------------------------------- the command's memory

def run_cli() -> list[dict]:
    """Wall time and peak RSS of the explorer command on diamonds at rank 256, and at S/N = 1 only if that fails."""
    help_text = subprocess.run([CLI[0], "learning-curve", "--help"], capture_output=True, text=True).stdout
    if "--rank" not in help_text:
        return [{"cmd": CLI, "error": "the command has no --rank option yet: not measured"}]
    runs = [run_command(CLI)]
    if "error" in runs[0]:
        runs.append(run_command(CLI_FALLBACK))
    return runs


def run_command(cli: list[str]) -> dict:
    """One run under ``/usr/bin/time -v`` (else ``getrusage(RUSAGE_CHILDREN)``): wall s, peak RSS MB, any error."""
    gnu_time = shutil.which("time", path="/usr/bin")
    t0 = time.perf_counter()
    done = subprocess.run([gnu_time, "-v", *cli] if gnu_time else cli, capture_output=True, text=True, cwd=ROOT)
    run = {"cmd": cli, "wall_s": time.perf_counter() - t0}
    if gnu_time:
        found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
        if found:
            run.update(rss_mb=int(found.group(1)) / 1e3, how="/usr/bin/time -v, maximum resident set size")
    else:
        import resource
        run.update(rss_mb=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1e3,
                   how="getrusage(RUSAGE_CHILDREN).ru_maxrss, the largest child so far")
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.startswith("explorer:")]
        run["error"] = f"exit status {done.returncode}: {said[-1] if said else done.stderr.strip()[-300:]}"
    return run


# ----------------------------------------------------------------------------- main

def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: N ≤ 16,000, m ∈ {128, 256}, a quarter of the MC samples, no CLI run")
    parser.add_argument("--sizes", help=f"comma-separated N (synthetic) or '{DIAMONDS}' (default {','.join(SIZES)})")
    parser.add_argument("--ranks", help="comma-separated ranks m (default 128,256,512)")
    parser.add_argument("--mc-samples", type=int, help="B for every N (default 200 at N ≤ 16,000, 40 at diamonds, "
                                                         "10 above; a quarter with --quick)")
    parser.add_argument("--repeats", type=int, default=2, help="timing repeats at N ≤ 100,000 (best of; default 2)")
    parser.add_argument("--solve-limit", type=float, default=SOLVE_LIMIT_S,
                        help=f"seconds after which a theory solve is stopped and reported (default {SOLVE_LIMIT_S:g})")
    parser.add_argument("--cli", action=argparse.BooleanOptionalAction, default=None,
                        help="run the explorer command on diamonds for its peak memory (default: yes unless --quick)")
    args = parser.parse_args()
    args.sizes = args.sizes.split(",") if args.sizes else list(QUICK_SIZES if args.quick else SIZES)
    args.ranks = [int(m) for m in args.ranks.split(",")] if args.ranks else list(QUICK_RANKS if args.quick else RANKS)
    args.cli = not args.quick if args.cli is None else args.cli
    return args


def main() -> None:
    args = parse_args()
    start = time.perf_counter()
    use_single_threaded_blas()
    print_machine()
    modules = fingerprint()
    rows, dense_cache = [], {}
    for size in args.sizes:
        p = problem(size)
        B = args.mc_samples or default_mc_samples(p.n, args.quick)
        repeats = args.repeats if p.n <= REPEAT_MAX_N else 1
        for m in args.ranks:
            rows.append(measure(p, m, B, repeats, dense_cache, args.solve_limit))
            print(f"  done {p.name}, m = {m} ({time.perf_counter() - start:.0f} s, {load_line()})", file=sys.stderr,
                  flush=True)
    cli = run_cli() if args.cli else None
    print_table(rows)
    print_targets(rows, cli)
    if fingerprint() != modules:
        print(f"\nWARNING: a measured module changed during the run (this process measured the hashes above; the command, started later, may have run the new ones): now {fingerprint()}")
    print(f"\nat end: {load_line()}; total {time.perf_counter() - start:.0f} s "
          f"({(time.perf_counter() - start) / 60:.1f} min)")


if __name__ == "__main__":
    main()
