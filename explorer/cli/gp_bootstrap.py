"""``learning-curve``, ``distribution`` and ``holdout``: the GP-regression bootstrap of [MO03], theory vs MC.

Each builds its problem with :func:`explorer.gp_bootstrap.problem.regression_problem` (as the app's
:mod:`explorer.views.gp_bootstrap.state` does) and prints the comparison of
:mod:`explorer.gp_bootstrap.experiments`: Fig. 1 (learning curve ε(S)), Fig. 3-5 (L1 distances between the
bootstrap distribution and eq. (60)) and Fig. 2 (mean and variance at held-out inputs).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from explorer import datasets, kernels, lowrank
from explorer.cli import common, distributed_comparisons, distributed_options
from explorer.gp_bootstrap import evidence, experiments, montecarlo, stages
from explorer.gp_bootstrap import problem as problems

__all__ = ["register", "COMMANDS"]

#: Held-out rows (Fig. 2 uses 50); the app's bound.
HOLDOUT = common.IntRange(0, 1000, "the number of held-out rows")
#: Histogram bin width of ``distribution``: narrower bins than 1e-3 give millions of bins per input.
BIN_WIDTH = common.FloatRange(1e-3, 1e3, "a bin width", "Narrower bins would make millions of bins per input.")
#: ε of the ε-insensitive loss (≥ 0) and its β (> 0).
LOSS_EPS = common.FloatRange(0.0, 1e6, "ε")
LOSS_BETA = common.FloatRange(1e-6, 1e6, "β")

#: Seconds of one Monte-Carlo sample on boston (N = 506; explorer.runtime.engine), growing as N³ with the rows: the
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
#: Seconds of one low-rank Monte-Carlo sample per N·m²: the estimate by which a low-rank run over
#: :data:`MAX_SECONDS` is refused (the core's, which the app states too).
LOW_RANK_SAMPLE_SECONDS_PER_NM2 = montecarlo.SAMPLE_SECONDS_PER_NM2

#: Rows of ``--subsample`` (the dense path takes at most ``common.MAX_DENSE_ROWS`` of them).
SUBSAMPLE = common.IntRange(3, MAX_LOW_RANK_ROWS, "the number of rows of the random subsample")

#: Where a run's model comes from: the paper preset, the options, or maximum evidence on the data.
PRESET, GIVEN, FITTED = "paper preset", "given", "maximum evidence"
#: The options that set a hyperparameter of ``--kernel``, by attribute.
_KERNEL_OPTIONS = {"lengthscale": "--lengthscale", "signal_var": "--signal-var", "alpha": "--alpha",
                   "period": "--period"}
#: The kernel whose own hyperparameter an option is (any other kernel does not use it).
_OWN_KERNEL = {"alpha": "rq", "period": "periodic"}

_TOL_HELP = ("ADATAP stopping tolerance: largest relative change of Δλ(i) (default 1e-3, the paper's; "
            "it gives ε(S) to about 1e-6 relative)")
_VG_TOL_HELP = ("stopping tolerance of ADATAP and VG: largest relative change of Δλ(i) (default 1e-3, "
                "the paper's; it gives ADATAP's ε(S) to about 1e-6 relative, VG's to about 1e-4 on boston; "
                "MF is a linear solve)")


def register(sub) -> None:
    """Add ``learning-curve``, ``distribution`` and ``holdout`` to the CLI's subparsers."""
    common.register(sub, COMMANDS)


def _add_gp_options(p: argparse.ArgumentParser, s_default: str, mc_default: int, tol_help: str = _TOL_HELP,
                    csv_type=None) -> None:
    """The data, model and bootstrap options every GP-bootstrap command has."""
    _add_data_options(p, csv_type), _add_model_options(p), _add_low_rank_options(p)
    _add_run_options(p, s_default, mc_default, tol_help)


def _add_low_rank_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(f"low-rank kernel K ≈ ΦΦᵀ, for more than {common.MAX_DENSE_ROWS:,} rows (theory and "
                             "Monte-Carlo both use the low-rank model; VG and MF are dense only)")
    g.add_argument("--rank", type=RANK, default=None, metavar="M",
                   help=f"use a low-rank kernel with M features, M from {RANK} and at most N, N·M at most "
                        f"{MAX_LOW_RANK_ENTRIES:,} (up to {MAX_LOW_RANK_ROWS:,} rows; e.g. --rank 256). Without "
                        "--kernel or --preset the kernel's hyperparameters and σ² (one ℓ per input with --ard) are "
                        "those of largest evidence of that low-rank GP on the training rows, fitted and printed")
    g.add_argument("--features", choices=lowrank.FEATURE_METHODS, default=None,
                   help="the feature map of --rank: nystrom (default; M landmark rows drawn with --seed, "
                        "Φ = K_nL C⁻ᵀ with C the Cholesky factor of K_LL + 1e-8·mean(diag K_LL)·I) or rff (random "
                        "Fourier features of a stationary kernel: se, rq, exponential, matern32, matern52)")


def _learning_curve_arguments(p: argparse.ArgumentParser) -> None:
    _add_gp_options(p, "0.5,1,2", 2000, _VG_TOL_HELP, csv_type=distributed_options.large_csv_path)
    distributed_options.add_options(p)
    p.add_argument("--methods", type=_methods, default=None, metavar="M[,M2,...]",
                   help=f"the methods to run, from {', '.join(stages.CURVE_METHODS)} (ADATAP, approximate ADATAP, "
                        "VG, MF, infinitesimal jackknife, leave-one-out limit, Monte-Carlo; e.g. adatap,approx,mc). "
                        f"Default: all of them up to {stages.ALL_METHODS_ROWS:,} training rows; above, "
                        f"{','.join(stages.FAST_METHODS)} (VG, MF and IJ cost further O(N³) solves per S; "
                        "--methods all runs every one). A method not run is null in the JSON, n/a in the text")
    p.add_argument("--loss", choices=["square", "eps-insensitive"], default="square",
                   help="test loss (default square; eps-insensitive is §5's with --eps and --beta). VG, MF and IJ are "
                        "defined for the square loss only: with eps-insensitive their columns are null (n/a)")
    p.add_argument("--eps", type=LOSS_EPS, default=0.1, help=f"ε of the ε-insensitive loss, {LOSS_EPS} (default 0.1)")
    p.add_argument("--beta", type=LOSS_BETA, default=0.1,
                   help=f"β of the ε-insensitive loss, {LOSS_BETA} (default 0.1)")


def _methods(text: str) -> tuple[str, ...] | None:
    """Argument type of ``--methods``: names of ``stages.CURVE_METHODS`` separated by commas, or ``all``."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    if names == ["all"]:
        return stages.CURVE_METHODS
    unknown = [n for n in names if n not in stages.CURVE_METHODS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"expected methods from {', '.join(stages.CURVE_METHODS)} (or all), "
                                         f"separated by commas, got {common.shown(text)}")
    return stages.curve_methods(names, 0)


def _distribution_arguments(p: argparse.ArgumentParser) -> None:
    _add_gp_options(p, "1", 20000, csv_type=distributed_options.large_csv_path)
    distributed_options.add_options(p)
    p.add_argument("--bin-width", type=BIN_WIDTH, default=None,
                   help=f"histogram bin width, {BIN_WIDTH} (default: 0.2 × sd(target) / sd(boston's medv); 0.2 on "
                        "boston, Fig. 5)")


def _holdout_arguments(p: argparse.ArgumentParser) -> None:
    _add_gp_options(p, "1", 5000, csv_type=distributed_options.large_csv_path)
    distributed_options.add_options(p)
    p.set_defaults(holdout=50)


def _add_data_options(p: argparse.ArgumentParser, csv_type=None) -> None:
    g = common.add_data_source(p, dataset_default="boston", target_help="name of the target column in --csv",
                               csv_type=csv_type,
                               dataset_help=f"a shipped or generated dataset: {', '.join(datasets.available())} "
                                            "(default: boston)")
    g.add_argument("--holdout", type=HOLDOUT, default=0, metavar="K",
                   help=f"keep the first K rows as test inputs, bootstrap the rest; K from {HOLDOUT} "
                        "(Fig. 2 uses 50)")
    g.add_argument("--standardize", action="store_true",
                   help="scale every input column and the target to mean 0 and sample sd 1 over all rows "
                        "(datasets.standardization, as the app's 'Standardise' box; after --subsample)")
    g.add_argument("--subsample", type=SUBSAMPLE, default=None, metavar="N",
                   help=f"use N rows of the data drawn at random with --seed (kept in their file order; the app's "
                        f"'Use a random subsample' is N = 1,000 with seed {evidence.SUBSAMPLE_SEED}), N from "
                        f"{SUBSAMPLE}, at most {common.MAX_DENSE_ROWS:,} without --rank; the output names the rows "
                        "used")


def _add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "model: the paper preset, an explicit --kernel, or maximum evidence. Without --kernel, --preset, --evidence "
        "and --ard the model is the app's default: the paper preset for the shipped and generated sets (boston, toy, "
        "teacher), maximum evidence for a --csv (with --rank: maximum evidence of the low-rank GP for any data). An "
        "option the model does not use is an error (e.g. --lengthscale without --kernel). The text and the JSON's "
        "`model` name the kernel, every value and how it was obtained")
    g.add_argument("--preset", choices=["paper"], default=None,
                   help="[MO03]'s Boston setting: σ² = 0.01, K = exp(−Σ_j (x_j−x'_j)²/(v_j l²)), l² = 73.54, "
                        "v_j = sample sd of input j, raw targets (--l2 and --noise-var change l² and σ²)")
    g.add_argument("--kernel", choices=kernels.KERNEL_NAMES, default=None,
                   help="an explicit covariance function: squared exponential (se), rational quadratic (rq), "
                        "exponential, Matérn 3/2 or 5/2, periodic, with --lengthscale, --signal-var, --alpha (rq), "
                        "--period (periodic) and --noise-var")
    g.add_argument("--evidence", action="store_true",
                   help=f"a squared-exponential kernel whose ℓ, σ_f² and σ² maximise the evidence on at most "
                        f"{evidence.EVIDENCE_ROWS} rows drawn at random (seed {evidence.SUBSAMPLE_SEED}), the app's "
                        "fit of an uploaded file (all rows, held-out ones included); the default for --csv")
    g.add_argument("--ard", action="store_true",
                   help="as --evidence with one lengthscale per input column (automatic relevance determination); "
                        "with --rank, of the low-rank GP")
    g.add_argument("--lengthscale", type=common.LENGTHSCALES, default=None, metavar="L[,L2,...]",
                   help=f"lengthscale(s) of --kernel; one value per input column for ARD ({common.LENGTHSCALES}; "
                        "default 1)")
    g.add_argument("--signal-var", type=common.POSITIVE, default=None,
                   help=f"signal variance of --kernel, {common.POSITIVE} (default 1)")
    g.add_argument("--alpha", type=common.POSITIVE, default=None,
                   help=f"shape parameter of --kernel rq, {common.POSITIVE} (default 1)")
    g.add_argument("--period", type=common.POSITIVE, default=None,
                   help=f"period of --kernel periodic, {common.POSITIVE} (default 1)")
    g.add_argument("--l2", type=common.POSITIVE, default=None,
                   help=f"l² of the paper preset, {common.POSITIVE} (default 73.54)")
    g.add_argument("--noise-var", type=common.POSITIVE, default=None,
                   help=f"noise variance σ² of --kernel or the paper preset, {common.POSITIVE} (default 0.01, the "
                        "paper's; maximum evidence fits it)")


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


def _source(args) -> str:
    """Where the model comes from: :data:`PRESET`, :data:`GIVEN` or :data:`FITTED` (the app's default without
    --kernel, --preset, --evidence and --ard: the preset for a shipped or generated set, the fit for a CSV; the fit
    on the low-rank path)."""
    fitted = "--ard" if args.ard else "--evidence" if args.evidence else None
    if args.preset is not None and args.kernel is not None:
        raise ValueError("Give either --preset or --kernel, not both.")
    if fitted and (args.preset is not None or args.kernel is not None):
        other = "--kernel" if args.kernel is not None else "--preset"
        raise ValueError(f"{fitted} chooses a squared-exponential kernel by maximum evidence; {other} sets the model "
                         f"yourself: give one of them.")
    if fitted:
        return FITTED
    if args.kernel is not None:
        return GIVEN
    return PRESET if args.preset is not None or (args.rank is None and not args.csv) else FITTED


def _check_options(args, source: str) -> None:
    """A ValueError naming every model option the model of ``source`` does not use, and what to do instead."""
    given = [a for a in _KERNEL_OPTIONS if getattr(args, a) is not None]
    if source == PRESET:
        unused = [_KERNEL_OPTIONS[a] for a in given]
        why = ("the model is the paper preset (l² on inputs scaled by their sd, σ² = 0.01), the default for "
               "--dataset; add --kernel se (or another kernel) to set {it}, or drop {it}")
    elif source == GIVEN:
        unused = [_KERNEL_OPTIONS[a] for a in given if _OWN_KERNEL.get(a, args.kernel) != args.kernel]
        unused += ["--l2"] if args.l2 is not None else []
        why = (f"--kernel {args.kernel} has no such hyperparameter (--alpha is rq's, --period periodic's, --l2 the "
               "paper preset's); drop {it} or pick the kernel that has {it}")
    else:
        unused = [_KERNEL_OPTIONS[a] for a in given] + [o for o, v in (("--l2", args.l2),
                                                                        ("--noise-var", args.noise_var)) if v is not None]
        why = ("the kernel's ℓ, σ_f² and σ² are chosen by maximum evidence (the default for --csv and --rank); "
               "add --kernel se (or another kernel) to set them yourself, or --preset paper")
    if unused:
        it = "it" if len(unused) == 1 else "them"
        raise ValueError(f"{', '.join(unused)} {'is' if len(unused) == 1 else 'are'} not used: "
                         f"{why.format(it=it)}.")


def _kernel(args, X: np.ndarray) -> kernels.Kernel:
    """The kernel of the options: the paper preset's on the training inputs ``X``, or ``--kernel``'s."""
    if args.kernel is None:
        return kernels.paper_rbf(X, l2=_l2(args), scale="sd")
    hyper = {k: v for k, v in (("lengthscale", args.lengthscale), ("signal_var", args.signal_var),
                               ("alpha", args.alpha), ("period", args.period)) if v is not None}
    if "lengthscale" in hyper:
        ls = hyper["lengthscale"]
        hyper["lengthscale"] = ls[0] if len(ls) == 1 else np.array(ls)
    return kernels.make_kernel(args.kernel, X.shape[1], **hyper)


def _l2(args) -> float:
    return problems.PAPER_L2 if args.l2 is None else args.l2


def _noise_var(args) -> float:
    return problems.PAPER_NOISE_VAR if args.noise_var is None else args.noise_var


@dataclass(frozen=True)
class _Model:
    """The model of a run: its kernel and σ², where they come from (:data:`PRESET`, :data:`GIVEN`, :data:`FITTED`)
    and the evidence fit that chose them (dense or low-rank), with the data's scaling and subsample."""

    kernel: kernels.Kernel
    noise_var: float
    source: str
    name: str
    fit: evidence.EvidenceFit | evidence.LowRankEvidenceFit | None
    obtained: dict
    standardized: bool
    subsample: dict | None
    l2: float | None = None

    def record(self) -> dict:
        """The JSON's ``model``: kernel name and class, every hyperparameter value (a list under ARD), σ², whether
        inputs and target were standardised, the rows subsample, how each value was obtained and the evidence fit."""
        fit = self.fit.as_dict() if isinstance(self.fit, evidence.EvidenceFit) else (
            None if self.fit is None else {"note": self.fit.note, "log_evidence": self.fit.log_evidence})
        return {"kernel": self.name, "source": self.source, "class": type(self.kernel).__name__,
                "hyperparameters": self.hyperparameters(),
                "noise_var": self.noise_var, "standardized": self.standardized, "subsample": self.subsample,
                "obtained": self.obtained, "evidence": fit, "fitted": None if self.fit is None else self.fit.note,
                "repr": repr(self.kernel)}

    def hyperparameters(self) -> dict:
        """Every hyperparameter of the kernel by name (``l2`` first for the paper preset), lists under ARD."""
        values = {} if self.l2 is None else {"l2": self.l2}
        return values | {k: np.asarray(v).tolist() for k, v in self.kernel.params.items()}

    def header(self) -> str:
        """The lines that name the model, above the results."""
        values = ", ".join(f"{_SYMBOLS.get(k, k)} = {_value(v)}" for k, v in self.hyperparameters().items())
        how = self._how()
        rows = "" if self.subsample is None else (f"; rows: {self.subsample['rows']:,} of {self.subsample['of']:,} "
                                                  f"drawn at random, seed {self.subsample['seed']}")
        return (f"model: kernel {self.name} ({values}), σ² = {self.noise_var:.4g} ({how}); inputs and target "
                f"standardised: {'yes' if self.standardized else 'no'}{rows}\n")


    def _how(self) -> str:
        """How the values were obtained, in a few words."""
        if self.source == FITTED:
            return self.fit.note
        named = [k for k, v in self.obtained.items() if v == ("given" if self.source == PRESET else "default")]
        if self.source == PRESET:
            return "paper preset" + (f" with {', '.join(named)} given" if named else "")
        return "given" + (f"; defaults: {', '.join(named)}" if named else "")


_SYMBOLS = {"l2": "l²", "lengthscale": "ℓ", "signal_var": "σ_f²", "alpha": "α", "period": "p"}


def _value(v) -> str:
    """A hyperparameter for the text: 4 significant digits, a list of them under ARD."""
    a = np.asarray(v, dtype=float)
    return f"{float(a):.4g}" if a.ndim == 0 else "[" + ", ".join(f"{x:.4g}" for x in a) + "]"


def _model(args, data: datasets.Dataset, subsample: dict | None) -> _Model:
    """The dense model of the options on ``data`` (already scaled): preset, given kernel or the app's evidence fit
    (:func:`explorer.gp_bootstrap.evidence.fit_to_data` on all rows, held-out ones included, as the app does)."""
    source = _source(args)
    _check_options(args, source)
    X, common_ = data.inputs[args.holdout:], {"standardized": args.standardize, "subsample": subsample}
    if source == FITTED:
        fit = evidence.fit_to_data(data.inputs, data.targets, ard=args.ard, hooks=common.progress())
        obtained = dict.fromkeys(("lengthscale", "signal_var", "noise_var"), fit.note)
        return _Model(fit.kernel, fit.noise_var, source, "se", fit, obtained, **common_)
    noise = {"noise_var": "given" if args.noise_var is not None else "default" if source == GIVEN else PRESET}
    if source == PRESET:
        obtained = {"l2": "given" if args.l2 is not None else PRESET,
                    "lengthscale": "ℓ_j = sqrt(v_j l² / 2), v_j the sample sd of training input j",
                    "signal_var": PRESET, **noise}
        return _Model(_kernel(args, X), _noise_var(args), source, "paper", None, obtained, **common_, l2=_l2(args))
    kernel = _kernel(args, X)
    obtained = {k: "given" if getattr(args, k, None) is not None else "default" for k in kernel.params} | noise
    return _Model(kernel, _noise_var(args), source, args.kernel, None, obtained, **common_)


def _low_rank_model(args, data: datasets.Dataset, subsample: dict | None) -> _Model:
    """The low-rank model: the given kernel or preset, or the evidence maximum of the rank-M Nyström GP on the
    training rows (landmarks drawn with --seed)."""
    source = _source(args)
    _check_options(args, source)
    X, y, common_ = data.inputs[args.holdout:], data.targets[args.holdout:], {"standardized": args.standardize,
                                                                             "subsample": subsample}
    if source != FITTED:
        model = _model(args, data, subsample)
        return model
    fit = evidence.maximum_evidence_lowrank(X, y, rank=args.rank, rng=args.seed, ard=args.ard,
                                            hooks=common.progress())
    obtained = dict.fromkeys(("lengthscale", "signal_var", "noise_var"), fit.note)
    return _Model(fit.kernel, fit.noise_var, source, "se", fit, obtained, **common_)


@dataclass(frozen=True)
class _Run:
    """A command's problem and the model behind it."""

    problem: problems.RegressionProblem
    model: _Model

    def record(self, payload: dict) -> dict:
        """``payload`` with ``low_rank`` (what rebuilds ΦΦᵀ; None on the dense path) and ``model`` (the kernel,
        every value, σ², the scaling, the rows and how each was obtained)."""
        return {**payload, "low_rank": self.problem.features_record(), "model": self.model.record()}

    def header(self) -> str:
        """The lines that name the model (and, for a low-rank kernel, the features: ``kernel_note``)."""
        note = self.problem.kernel_note("--seed")
        return self.model.header() if note is None else f"{note}\n{self.model.header()}"


def _data(args) -> tuple[datasets.Dataset, dict | None]:
    """The data of the options, after ``--subsample`` and ``--standardize``, and the subsample's record (None
    without one)."""
    if args.rank is None and args.features is not None:
        raise ValueError("--features chooses the feature map of --rank: give --rank M too, or drop --features.")
    if args.rank is None and args.subsample is not None and args.subsample > common.MAX_DENSE_ROWS:
        raise ValueError(f"--subsample {args.subsample:,} is above the {common.MAX_DENSE_ROWS:,} rows of the dense "
                         f"path; use --subsample {common.MAX_DENSE_ROWS:,} or less, or add --rank M.")
    if getattr(args, "rows", None) is not None:  # --dataset teacher --rows N that the rule keeps in memory
        data = distributed_options.generated(args)
    elif args.rank is None and args.subsample is None:
        data = common.load_dataset(args, advice=f"Add --rank M (e.g. --rank 256) for a low-rank kernel, which takes "
                                                f"up to {MAX_LOW_RANK_ROWS:,} rows, or --subsample "
                                                f"{common.MAX_DENSE_ROWS:,} for a random subset of the rows.")
    else:
        data = common.load_dataset(args, MAX_LOW_RANK_ROWS, "Use --subsample N for a random subset of the rows.")
    record = None
    if args.subsample is not None and args.subsample < data.n:
        record = {"rows": args.subsample, "of": data.n, "seed": args.seed}
        data = common.subsample(data, args.subsample, args.seed)
    return (data.standardized(targets=True) if args.standardize else data), record


def _run(args) -> _Run:
    """The problem of the command's options (dense, or low-rank with ``--rank``)."""
    _check_options(args, _source(args))  # before any data is read
    data, subsample = _data(args)
    n = data.n - args.holdout
    if n < 3:
        raise ValueError(f"--holdout {args.holdout} leaves {max(n, 0)} training rows of {data.n}; keep at least 3.")
    _check_rank(args, n)
    _check_duration(args, n)
    if args.rank is None:
        model = _model(args, data, subsample)
        return _Run(problems.regression_problem(data, model.kernel, model.noise_var, holdout=args.holdout), model)
    model = _low_rank_model(args, data, subsample)
    return _Run(problems.regression_problem(data, model.kernel, model.noise_var, rank=args.rank,
                                          method=args.features or "nystrom", rng=args.seed, holdout=args.holdout),
                model)


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


def _check_duration(args, n: int) -> None:
    """Refuse a Monte-Carlo run estimated at more than :data:`MAX_SECONDS`: :data:`SAMPLE_SECONDS` · (N/506)³ a
    sample on the dense path, :data:`LOW_RANK_SAMPLE_SECONDS_PER_NM2` · N·M² on the low-rank path."""
    methods = getattr(args, "methods", None)
    samples = args.mc_samples * len(args.s_over_n) * (methods is None or "mc" in methods)
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
    chosen = distributed_options.plan(args)  # beyond one machine: the rows in chunks on Dask, or None
    if chosen is not None and chosen.chunked:
        return distributed_options.learning_curve(args, chosen)
    run = _run(args)
    params = {"eps": args.eps, "beta": args.beta} if args.loss == "eps-insensitive" else {}
    with common.engine_executor(args) as executor:
        res = experiments.learning_curve_comparison(
            run.problem, args.s_over_n, args.mc_samples, loss=args.loss, loss_params=params, rng=args.seed,
            tol=args.tol, executor=executor, hooks=common.progress(), methods=args.methods)
    if chosen is not None:  # the rule kept the rows in memory: say so
        return common.Output(run.record(res.as_dict()) | {"path": "in memory", "rule": chosen.reason},
                             f"path: in memory ({chosen.reason})\n{run.header()}{format_curve(res)}")
    return common.Output(run.record(res.as_dict()), run.header() + format_curve(res))


def distribution(args) -> common.Output:
    """L1 distance between MC histograms and the eq. (60) mixture at every training input, with the MC noise floor.
    The bins follow the target's scale, as in the app: 0.2 × sd(target) / sd(boston's medv), so boston keeps Fig.
    5's 0.2. Beyond one machine (--chunk-rows, --parquet, a large --csv or --dataset teacher --rows N above the memory
    rule) the theory and the Monte-Carlo run on the rows in chunks, and the L1 map covers 2,000 rows drawn at random
    above 5,000 (as in memory)."""
    chosen = distributed_options.plan(args)  # beyond one machine: the rows in chunks on Dask, or None
    if chosen is not None and chosen.chunked:
        return distributed_comparisons.distribution(args, chosen, _one_size(args), _chunked_duration(args))
    run = _run(args)
    with common.engine_executor(args) as executor:
        res = experiments.distribution_comparison(run.problem, _one_size(args), args.mc_samples,
                                                  bin_width=args.bin_width, rng=args.seed, tol=args.tol,
                                                  executor=executor, hooks=common.progress())
    return _in_memory(run, res, chosen, format_distribution(res))


def holdout(args) -> common.Output:
    """Theory (eq. 48), first-order infinitesimal jackknife (IJ) and MC mean and variance of the predictor at the
    first --holdout rows (default 50), bootstrapping the others. Beyond one machine (the options and the rule of
    learning-curve) all three run on the rows in chunks."""
    chosen = distributed_options.plan(args)  # beyond one machine: the rows in chunks on Dask, or None
    if chosen is not None and chosen.chunked:
        return distributed_comparisons.holdout(args, chosen, _one_size(args), _chunked_duration(args))
    run = _run(args)
    with common.engine_executor(args) as executor:
        res = experiments.holdout_comparison(run.problem, _one_size(args), args.mc_samples, rng=args.seed,
                                             tol=args.tol, executor=executor, hooks=common.progress())
    return _in_memory(run, res, chosen, format_holdout(res))


def _in_memory(run: _Run, res, chosen: distributed_options.Plan | None, text: str) -> common.Output:
    """The output of an in-memory run; when the rule of the chunked options chose memory, it says so."""
    if chosen is None:
        return common.Output(run.record(res.as_dict()), run.header() + text)
    return common.Output(run.record(res.as_dict()) | {"path": "in memory", "rule": chosen.reason},
                         f"path: in memory ({chosen.reason})\n{run.header()}{text}")


def _chunked_duration(args):
    """The Monte-Carlo estimate of the chunked path, once the training rows are known: :func:`_check_duration` on
    the low-rank path."""
    return lambda n: _check_duration(args, n)


def format_curve(res: experiments.LearningCurveComparison) -> str:
    """The learning curve as a table: S/N, theory, approximate theory, VG, MF, IJ, LOO limit, MC ± se, ADATAP
    iterations."""
    lines = [f"{res.problem}: N = {res.n}, loss = {res.loss}",
             f"{'S/N':>6} {'theory':>10} {'approx':>10} {'VG':>10} {'MF':>10} {'IJ':>10} {'LOO lim':>10} {'MC':>10} "
             f"{'± se':>8} {'iter':>5}"]
    for r in res.rows:
        lines.append(f"{r.s_over_n:6.3g} {_number(r.theory, 10)} {_number(r.theory_approx, 10)} "
                     f"{_number(r.theory_vg, 10)} {_number(r.theory_mf, 10)} {_number(r.ij, 10)} "
                     f"{_number(r.loo_limit, 10)} {_number(r.mc_mean, 10)} {_number(r.mc_se, 8, '.2g')} "
                     f"{'n/a' if r.n_iter is None else r.n_iter:>5}")
    lines.extend(_timing_lines(res))
    return "\n".join(lines)


def _timing_lines(res: experiments.LearningCurveComparison) -> list[str]:
    """The timings of the methods that ran, and which did not run and why."""
    lines = []
    if res.theory_s is not None and res.mc_sample_s is not None:
        lines.append(f"theory solve at S = N: {res.theory_s * 1e3:.1f} ms = "
                     f"{res.theory_s / res.mc_sample_s:.1f} MC samples ({res.mc_sample_s * 1e3:.2f} ms each)")
    elif res.theory_s is not None:
        lines.append(f"theory solve at S = N: {res.theory_s * 1e3:.1f} ms")
    not_run = [m for m in stages.CURVE_METHODS if m not in res.methods]
    if not_run:
        why = (f"above {stages.ALL_METHODS_ROWS:,} training rows the default leaves them out; --methods all runs "
               "them" if set(res.methods) == set(stages.FAST_METHODS) else "--methods")
        lines.append(f"not run: {', '.join(not_run)} ({why})")
    if res.loss != "square":
        lines.append(f"VG, MF and IJ: n/a (defined for the square loss only, not {res.loss})")
    elif ("vg" in res.methods or "mf" in res.methods) and res.vg_s is None and res.mf_s is None:
        lines.append("VG and MF: n/a (dense path only)")
    elif res.vg_s is not None or res.mf_s is not None:
        lines.append(f"VG solve at S = N: {_ms(res.vg_s)}, MF solve: {_ms(res.mf_s)}")
    if res.ij_s is not None:
        lines.append(f"IJ and LOO limit at S = N (one factorisation): {res.ij_s * 1e3:.1f} ms")
    return lines


def _ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:.1f} ms"


def _number(value: float | None, width: int, spec: str = ".4g") -> str:
    """``value`` in ``width`` characters (4 significant digits), or n/a for None."""
    return f"{'n/a':>{width}}" if value is None else f"{value:{width}{spec}}"


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
        ij_mean = f"{'n/a':>9}" if res.ij_mean is None else f"{res.ij_mean[j]:9.4g}"
        ij_var = f"{'n/a':>9}" if res.ij_var is None else f"{res.ij_var[j]:9.4g}"
        lines.append(f"{j:4d} {res.theory_mean[j]:9.4g} {ij_mean} {res.mc_mean[j]:9.4g} "
                     f"{res.mc_mean_se[j]:7.2g} {res.theory_var[j]:9.4g} {ij_var} {res.mc_var[j]:9.4g} "
                     f"{res.mc_var_se[j]:7.2g}")
    if res.ij_mean is None:
        lines.append("IJ: n/a (its derivatives at every training row would take more than 800 MB: 8·M·N bytes)")
    return "\n".join(lines)


#: The module's commands, in the order of ``explorer --help`` (:func:`register`).
COMMANDS = (
    common.Command.computing("learning-curve", "bootstrap learning curve ε(S): theory vs MC ([MO03] Fig. 1)",
                             _learning_curve_arguments, learning_curve),
    common.Command.computing("distribution", "bootstrap distribution of the predictor: L1 theory vs MC (Fig. 3-5)",
                             _distribution_arguments, distribution),
    common.Command.computing("holdout", "bootstrap mean/variance at held-out inputs (Fig. 2)", _holdout_arguments,
                             holdout),
)
