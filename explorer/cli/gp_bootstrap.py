"""``learning-curve``, ``distribution`` and ``holdout``: the GP-regression bootstrap of seed 000, theory vs MC.

Each builds its problem with :func:`explorer.gp_bootstrap.problems.regression_problem` (as the app's
:mod:`explorer.views.gp_bootstrap.state` does) and prints the comparison of
:mod:`explorer.gp_bootstrap.experiments`: Fig. 1 (learning curve ε(S)), Fig. 3-5 (L1 distances between the
bootstrap distribution and eq. (60)) and Fig. 2 (mean and variance at held-out inputs).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from explorer import datasets, kernels, lowrank
from explorer.cli import common
from explorer.gp_bootstrap import evidence_lowrank, experiments, paths, problems

__all__ = ["register", "COMMANDS"]

#: Held-out rows (Fig. 2 uses 50); the app's bound.
HOLDOUT = common.IntRange(0, 1000, "the number of held-out rows")
#: Histogram bin width of ``distribution``: narrower bins than 1e-3 give millions of bins per input.
BIN_WIDTH = common.FloatRange(1e-3, 1e3, "a bin width", "Narrower bins would make millions of bins per input.")
#: ε of the ε-insensitive loss (≥ 0) and its β (> 0).
LOSS_EPS = common.FloatRange(0.0, 1e6, "ε")
LOSS_BETA = common.FloatRange(1e-6, 1e6, "β")

#: Seconds of one Monte-Carlo sample on boston (N = 506; explorer.engine), growing as N³ with the rows: the
#: estimate by which a run over :data:`MAX_SECONDS` is refused before it starts.
SAMPLE_SECONDS = 2e-3
BOSTON_ROWS = 506
MAX_SECONDS = 3600.0

#: The rank m of a low-rank kernel (``--rank``).
RANK = common.IntRange(1, lowrank.MAX_RANK, "the rank m of the low-rank kernel",
                       "Larger ranks cost as much as the dense path: use fewer features.")
#: Rows the low-rank path takes: Φ and the N×m arrays the theory holds at once cost 8·N·m bytes each, about three at
#: the peak (benchmarks/bench_scale.py: 2.1·8·N·m bytes beyond Φ at every N; 2.5 GB at 200,000 rows and m = 512);
#: N·m is bounded by :data:`MAX_LOW_RANK_ENTRIES` and N by this.
MAX_LOW_RANK_ROWS = 1_000_000
#: Largest N·m of the low-rank path: 0.8 GB per N×m array.
MAX_LOW_RANK_ENTRIES = 100_000_000
#: Seconds of one low-rank Monte-Carlo sample per N·m² (a weighted m×m solve after forming ΦᵀWΦ; measured 0.09 s at
#: N = 53,940 and m = 256 on two cores): the estimate by which a low-rank run over :data:`MAX_SECONDS` is refused.
LOW_RANK_SAMPLE_SECONDS_PER_NM2 = 2.5e-11

_TOL_HELP = ("ADATAP stopping tolerance: largest relative change of Δλ(i) (default 1e-3, the paper's; "
            "it gives ε(S) to about 1e-6 relative)")
_VG_TOL_HELP = ("stopping tolerance of ADATAP and VG: largest relative change of Δλ(i) (default 1e-3, "
                "the paper's; it gives ADATAP's ε(S) to about 1e-6 relative, VG's to about 1e-4 on boston; "
                "MF is a linear solve)")


def register(sub) -> None:
    """Add ``learning-curve``, ``distribution`` and ``holdout`` to the CLI's subparsers."""
    common.register(sub, COMMANDS)


def _add_gp_options(p: argparse.ArgumentParser, s_default: str, mc_default: int, tol_help: str = _TOL_HELP) -> None:
    """The data, model and bootstrap options every GP-bootstrap command has."""
    _add_data_options(p), _add_model_options(p), _add_low_rank_options(p)
    _add_run_options(p, s_default, mc_default, tol_help)


def _add_low_rank_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(f"low-rank kernel K ≈ ΦΦᵀ, for more than {common.MAX_DENSE_ROWS:,} rows (theory and "
                             "Monte-Carlo both use the low-rank model; VG and MF are dense only)")
    g.add_argument("--rank", type=RANK, default=None, metavar="M",
                   help=f"use a low-rank kernel with M features, M from {RANK} and at most N, N·M at most "
                        f"{MAX_LOW_RANK_ENTRIES:,} (up to {MAX_LOW_RANK_ROWS:,} rows; e.g. --rank 256). Without "
                        "--kernel the kernel's hyperparameters and σ² are those of largest evidence of that low-rank "
                        "GP, fitted on the data and printed")
    g.add_argument("--features", choices=lowrank.FEATURE_METHODS, default=None,
                   help="the feature map of --rank: nystrom (default; M landmark rows drawn with --seed, "
                        "Φ = K_nL C⁻ᵀ with C the Cholesky factor of K_LL + 1e-8·mean(diag K_LL)·I) or rff (random "
                        "Fourier features of a stationary kernel: se, rq, exponential, matern32, matern52)")


def _learning_curve_arguments(p: argparse.ArgumentParser) -> None:
    _add_gp_options(p, "0.5,1,2", 2000, _VG_TOL_HELP)
    p.add_argument("--loss", choices=["square", "eps-insensitive"], default="square",
                   help="test loss (default square; eps-insensitive is §5's with --eps and --beta). VG, MF and IJ are "
                        "defined for the square loss only: with eps-insensitive their columns are null (n/a)")
    p.add_argument("--eps", type=LOSS_EPS, default=0.1, help=f"ε of the ε-insensitive loss, {LOSS_EPS} (default 0.1)")
    p.add_argument("--beta", type=LOSS_BETA, default=0.1,
                   help=f"β of the ε-insensitive loss, {LOSS_BETA} (default 0.1)")


def _distribution_arguments(p: argparse.ArgumentParser) -> None:
    _add_gp_options(p, "1", 20000)
    p.add_argument("--bin-width", type=BIN_WIDTH, default=None,
                   help=f"histogram bin width, {BIN_WIDTH} (default: 0.2 × sd(target) / sd(boston's medv); 0.2 on "
                        "boston, Fig. 5)")


def _holdout_arguments(p: argparse.ArgumentParser) -> None:
    _add_gp_options(p, "1", 5000)
    p.set_defaults(holdout=50)


def _add_data_options(p: argparse.ArgumentParser) -> None:
    g = common.add_data_source(p, dataset_default="boston", target_help="name of the target column in --csv",
                               dataset_help=f"a shipped or generated dataset: {', '.join(datasets.available())} "
                                            "(default: boston)")
    g.add_argument("--holdout", type=HOLDOUT, default=0, metavar="K",
                   help=f"keep the first K rows as test inputs, bootstrap the rest; K from {HOLDOUT} "
                        "(Fig. 2 uses 50)")
    g.add_argument("--standardize", action="store_true",
                   help="scale every input column and the target to mean 0 and sample sd 1 over all rows "
                        "(datasets.standardization, as the app's 'Standardise' box)")


def _add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model: --preset paper, or an explicit kernel")
    g.add_argument("--preset", choices=["paper"], default=None,
                   help="seed 000's Boston setting: σ² = 0.01, K = exp(−Σ_j (x_j−x'_j)²/(v_j l²)), l² = 73.54, "
                        "v_j = sample sd of input j, raw targets. The default when no --kernel is given.")
    g.add_argument("--kernel", choices=kernels.KERNEL_NAMES, default=None,
                   help="covariance function: squared exponential (se), rational quadratic (rq), exponential, "
                        "Matérn 3/2 or 5/2, periodic")
    g.add_argument("--lengthscale", type=common.LENGTHSCALES, default=None, metavar="L[,L2,...]",
                   help=f"lengthscale(s); one value per input column for ARD ({common.LENGTHSCALES}; default 1)")
    g.add_argument("--signal-var", type=common.POSITIVE, default=None,
                   help=f"signal variance of the kernel, {common.POSITIVE} (default 1)")
    g.add_argument("--alpha", type=common.POSITIVE, default=None,
                   help=f"shape parameter of the rational quadratic kernel, {common.POSITIVE}")
    g.add_argument("--period", type=common.POSITIVE, default=None,
                   help=f"period of the periodic kernel, {common.POSITIVE}")
    g.add_argument("--l2", type=common.POSITIVE, default=problems.PAPER_L2,
                   help=f"l² of the paper preset, {common.POSITIVE} (default 73.54)")
    g.add_argument("--noise-var", type=common.POSITIVE, default=problems.PAPER_NOISE_VAR,
                   help=f"noise variance σ² of the GP, {common.POSITIVE} (default 0.01, the paper's)")


def _add_run_options(p: argparse.ArgumentParser, s_default: str, mc_default: int, tol_help: str = _TOL_HELP) -> None:
    g = p.add_argument_group(f"bootstrap (a run estimated at more than {MAX_SECONDS / 3600:g} hour — "
                             f"{SAMPLE_SECONDS * 1e3:g} ms a sample on boston's {BOSTON_ROWS} rows, growing as N³ "
                             "— is refused before it starts)")
    g.add_argument("--s-over-n", type=common.S_OVER_N, default=common.S_OVER_N(s_default), metavar="V[,V2,...]",
                   help=f"bootstrap size(s) S/N, {common.S_OVER_N}; S is the mean sample size (default {s_default})")
    g.add_argument("--mc-samples", type=common.MC_SAMPLES, default=mc_default,
                   help=f"number of Monte-Carlo bootstrap samples, {common.MC_SAMPLES} (default {mc_default})")
    common.add_seed_option(g)
    g.add_argument("--tol", type=common.TOLERANCE, default=1e-3, help=f"{tol_help}; {common.TOLERANCE}")
    common.add_engine_options(p)
    common.add_json_option(p)


# ----------------------------------------------------------------------------- settings → problem


def _kernel(args, X: np.ndarray) -> kernels.Kernel:
    if args.kernel is None:
        return kernels.paper_rbf(X, l2=args.l2, scale="sd")
    if args.preset is not None:
        raise ValueError("Give either --preset or --kernel, not both.")
    hyper = {k: v for k, v in (("lengthscale", args.lengthscale), ("signal_var", args.signal_var),
                               ("alpha", args.alpha), ("period", args.period)) if v is not None}
    if "lengthscale" in hyper:
        ls = hyper["lengthscale"]
        hyper["lengthscale"] = ls[0] if len(ls) == 1 else np.array(ls)
    return kernels.make_kernel(args.kernel, X.shape[1], **hyper)


@dataclass(frozen=True)
class _Run:
    """A command's problem and, on the low-rank path without --kernel, the evidence fit that chose its model."""

    problem: paths.Problem
    fit: evidence_lowrank.LowRankEvidenceFit | None = None

    def record(self, payload: dict) -> dict:
        """``payload`` with ``low_rank`` (what rebuilds ΦΦᵀ; None on the dense path) and, on the low-rank path,
        ``model``: the kernel, σ² and how they were chosen."""
        payload = {**payload, "low_rank": paths.low_rank_record(self.problem)}
        if paths.is_low_rank(self.problem):
            payload["model"] = {"kernel": repr(self.problem.kernel), "noise_var": self.problem.noise_var,
                                "fitted": None if self.fit is None else self.fit.note}
        return payload

    def header(self) -> str:
        """One or two lines that name the low-rank model ('' on the dense path)."""
        if not paths.is_low_rank(self.problem):
            return ""
        f = self.problem.features
        how = (f"{f.rank} Nyström landmarks drawn with --seed, jitter {f.jitter:.2g} on K_LL" if f.method == "nystrom"
               else f"{f.rank} random Fourier features")
        chosen = "given" if self.fit is None else self.fit.note
        return (f"low-rank kernel K ≈ ΦΦᵀ: {how}; VG and MF: dense path only\n"
                f"model: {self.problem.kernel!r}, σ² = {self.problem.noise_var:.4g} ({chosen})\n")


def _run(args) -> _Run:
    """The problem of the command's options (dense, or low-rank with ``--rank``)."""
    if args.rank is None:
        if args.features is not None:
            raise ValueError("--features chooses the feature map of --rank: give --rank M too, or drop --features.")
        data = common.load_dataset(args, advice=f"Add --rank M (e.g. --rank 256) for a low-rank kernel, which takes "
                                                f"up to {MAX_LOW_RANK_ROWS:,} rows, or use a random subset of the rows.")
    else:
        data = common.load_dataset(args, MAX_LOW_RANK_ROWS, "Use a random subset of the rows.")
    n = data.n - args.holdout
    _check_rank(args, n)
    _check_duration(args, n)
    data = data.standardized(targets=True) if args.standardize else data
    X = data.inputs[args.holdout:]
    if args.rank is None:
        return _Run(problems.regression_problem(data, _kernel(args, X), args.noise_var, holdout=args.holdout))
    fit = _evidence_fit(args, X, data.targets[args.holdout:])
    kernel, noise_var = (_kernel(args, X), args.noise_var) if fit is None else (fit.kernel, fit.noise_var)
    return _Run(problems.low_rank_problem(data, kernel, noise_var, rank=args.rank, method=args.features or "nystrom",
                                          rng=args.seed, holdout=args.holdout), fit)


def _check_rank(args, n: int) -> None:
    """Refuse a rank above N or an N·M above :data:`MAX_LOW_RANK_ENTRIES` before any kernel value is computed."""
    if args.rank is None:
        return
    if args.rank > n:
        raise ValueError(f"--rank {args.rank:,} is above the {n:,} training rows; take M ≤ N (at M = N the dense "
                         "path is exact and no slower: drop --rank).")
    if n * args.rank > MAX_LOW_RANK_ENTRIES:
        raise ValueError(f"N·M = {n:,}·{args.rank:,} is above {MAX_LOW_RANK_ENTRIES:,} (each N×M array would take "
                         f"{8 * n * args.rank / 1e9:.1f} GB); use --rank {MAX_LOW_RANK_ENTRIES // n:,} or less.")
    if args.features == "rff" and args.rank % 2:
        raise ValueError(f"random Fourier features come in cos/sin pairs: --rank must be even, got {args.rank}.")


def _evidence_fit(args, X: np.ndarray, y: np.ndarray) -> evidence_lowrank.LowRankEvidenceFit | None:
    """None when the options name the model (``--kernel``, ``--preset``); else the squared-exponential ℓ, σ_f², σ² of
    largest evidence of the rank-M Nyström GP on the training rows, landmarks drawn with ``--seed`` (the default of
    the low-rank path: the paper preset is boston's)."""
    if args.kernel is not None or args.preset is not None:
        return None
    return evidence_lowrank.maximum_evidence_lowrank(X, y, rank=args.rank, rng=args.seed, hooks=common.progress())


def _check_duration(args, n: int) -> None:
    """Refuse a Monte-Carlo run estimated at more than :data:`MAX_SECONDS`: :data:`SAMPLE_SECONDS` · (N/506)³ a
    sample on the dense path, :data:`LOW_RANK_SAMPLE_SECONDS_PER_NM2` · N·M² on the low-rank path."""
    samples = args.mc_samples * len(args.s_over_n)
    seconds = samples * (SAMPLE_SECONDS * max(n / BOSTON_ROWS, 1.0) ** 3 if args.rank is None
                         else LOW_RANK_SAMPLE_SECONDS_PER_NM2 * n * args.rank**2)
    if seconds > MAX_SECONDS:
        raise ValueError(f"{samples:,} Monte-Carlo samples on N = {n:,} rows would take about {seconds / 3600:.1f} "
                         f"hours; at most {MAX_SECONDS / 3600:g} hour is started. Use fewer --mc-samples or "
                         "--s-over-n values, or fewer rows.")


def _one_size(args) -> float:
    if len(args.s_over_n) != 1:
        raise ValueError(f"`{args.command}` takes one --s-over-n value, got {args.s_over_n}.")
    return args.s_over_n[0]


# ----------------------------------------------------------------------------- commands


def learning_curve(args) -> common.Output:
    """Efron's bootstrap test error ε(S) from the ADATAP theory (eq. 45/46), the approximate ADATAP, the
    variational-Gaussian (VG) and mean-field (MF) approximations, the infinitesimal jackknife (IJ, linear response
    in the bootstrap weights), the closed-form leave-one-out error at noise σ²N/S (its S → ∞ limit) and Monte-Carlo
    with standard errors (docs/linear_response.md)."""
    run = _run(args)
    params = {"eps": args.eps, "beta": args.beta} if args.loss == "eps-insensitive" else {}
    with common.engine_executor(args) as executor:
        res = experiments.learning_curve_comparison(
            run.problem, args.s_over_n, args.mc_samples, loss=args.loss, loss_params=params, rng=args.seed,
            tol=args.tol, executor=executor, hooks=common.progress())
    return common.Output(run.record(res.as_dict()), run.header() + format_curve(res))


def distribution(args) -> common.Output:
    """L1 distance between MC histograms and the eq. (60) mixture at every training input, with the MC noise floor.
    The bins follow the target's scale, as in the app: 0.2 × sd(target) / sd(boston's medv), so boston keeps Fig.
    5's 0.2."""
    run = _run(args)
    with common.engine_executor(args) as executor:
        res = experiments.distribution_comparison(run.problem, _one_size(args), args.mc_samples,
                                                  bin_width=args.bin_width, rng=args.seed, tol=args.tol,
                                                  executor=executor, hooks=common.progress())
    return common.Output(run.record(res.as_dict()), run.header() + format_distribution(res))


def holdout(args) -> common.Output:
    """Theory (eq. 48), first-order infinitesimal jackknife (IJ) and MC mean and variance of the predictor at the
    first --holdout rows (default 50), bootstrapping the others."""
    run = _run(args)
    with common.engine_executor(args) as executor:
        res = experiments.holdout_comparison(run.problem, _one_size(args), args.mc_samples, rng=args.seed,
                                             tol=args.tol, executor=executor, hooks=common.progress())
    return common.Output(run.record(res.as_dict()), run.header() + format_holdout(res))


def format_curve(res: experiments.LearningCurveComparison) -> str:
    """The learning curve as a table: S/N, theory, approximate theory, VG, MF, IJ, LOO limit, MC ± se, ADATAP
    iterations."""
    lines = [f"{res.problem}: N = {res.n}, loss = {res.loss}",
             f"{'S/N':>6} {'theory':>10} {'approx':>10} {'VG':>10} {'MF':>10} {'IJ':>10} {'LOO lim':>10} {'MC':>10} "
             f"{'± se':>8} {'iter':>5}"]
    for r in res.rows:
        lines.append(f"{r.s_over_n:6.3g} {r.theory:10.4g} {r.theory_approx:10.4g} {_number(r.theory_vg, 10)} "
                     f"{_number(r.theory_mf, 10)} {_number(r.ij, 10)} {_number(r.loo_limit, 10)} {r.mc_mean:10.4g} "
                     f"{r.mc_se:8.2g} {r.n_iter:5d}")
    lines.append(f"theory solve at S = N: {res.theory_s * 1e3:.1f} ms = "
                 f"{res.theory_s / res.mc_sample_s:.1f} MC samples ({res.mc_sample_s * 1e3:.2f} ms each)")
    if res.loss != "square":
        lines.append(f"VG, MF and IJ: n/a (defined for the square loss only, not {res.loss})")
    elif res.vg_s is None or res.mf_s is None:
        lines.append("VG and MF: n/a (dense path only)")
    else:
        lines.append(f"VG solve at S = N: {res.vg_s * 1e3:.1f} ms, MF solve: {res.mf_s * 1e3:.1f} ms")
    if res.ij_s is not None:
        lines.append(f"IJ and LOO limit at S = N (one factorisation): {res.ij_s * 1e3:.1f} ms")
    return "\n".join(lines)


def _number(value: float | None, width: int) -> str:
    """``value`` in ``width`` characters (4 significant digits), or n/a for None."""
    return f"{'n/a':>{width}}" if value is None else f"{value:{width}.4g}"


def format_distribution(res: experiments.DistributionComparison) -> str:
    """Fractions of inputs with small and large L1 distance, the noise floor and the worst inputs."""
    s, f = res.l1, res.noise_floor
    mapped = "" if res.inputs.size == res.n else f", L1 at {res.inputs.size:,} inputs drawn at random"
    return (f"{res.problem}: N = {res.n}, S/N = {res.solution.s_over_n:g}, {s.n_samples} MC samples{mapped}\n"
            f"L1 ≤ 0.1: {s.frac_le_0_1:.1%}   L1 ≥ 0.2: {s.frac_ge_0_2:.1%}   max L1: {s.max:.4f}\n"
            f"noise floor (theory vs its own samples): L1 ≤ 0.1: {f.frac_le_0_1:.1%}, max {f.max:.4f}\n"
            f"worst inputs: {', '.join(map(str, res.inputs[s.worst(10)]))}")


def format_holdout(res: experiments.HoldoutComparison) -> str:
    """Mean and variance at each held-out input: theory (eq. 48), first-order IJ and MC ± se."""
    lines = [f"{'x':>4} {'mean th':>9} {'mean IJ':>9} {'mean MC':>9} {'± se':>7} {'var th':>9} {'var IJ':>9} "
             f"{'var MC':>9} {'± se':>7}"]
    for j in range(res.theory_mean.size):
        lines.append(f"{j:4d} {res.theory_mean[j]:9.4g} {res.ij_mean[j]:9.4g} {res.mc_mean[j]:9.4g} "
                     f"{res.mc_mean_se[j]:7.2g} {res.theory_var[j]:9.4g} {res.ij_var[j]:9.4g} {res.mc_var[j]:9.4g} "
                     f"{res.mc_var_se[j]:7.2g}")
    return "\n".join(lines)


#: The module's commands, in the order of ``explorer --help`` (:func:`register`).
COMMANDS = (
    common.Command.computing("learning-curve", "bootstrap learning curve ε(S): theory vs MC (seed 000 Fig. 1)",
                             _learning_curve_arguments, learning_curve),
    common.Command.computing("distribution", "bootstrap distribution of the predictor: L1 theory vs MC (Fig. 3-5)",
                             _distribution_arguments, distribution),
    common.Command.computing("holdout", "bootstrap mean/variance at held-out inputs (Fig. 2)", _holdout_arguments,
                             holdout),
)
