"""Command-line interface: ``explorer <command> [options]``; ``--json`` prints machine-readable results.

Commands: ``learning-curve`` (seed 000 Fig. 1), ``distribution`` (Fig. 3-5, L1 distances),
``holdout`` (Fig. 2, mean/variance at held-out inputs), ``datasets`` (what can be loaded),
``serve`` (the interactive dashboard, ``explorer.app``), ``svm-curve`` (seed 004 Fig. 1: hard-margin SVM
bootstrap classification error, theory vs MC), ``select`` (seed 001: GP hyperparameters under each model-selection
criterion), ``select-experiment`` (seed 001's experiments at small repetition counts) and ``fast-bootstrap``
(seed 002: full vs fast bootstrap model-structure selection, with the replica optimism for the LS-SVM).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

import numpy as np

from explorer.cli import fast_bootstrap as cli_fastboot
from explorer.gp_bootstrap import experiments
from explorer.gp_bootstrap import replica
from explorer.model_selection import criteria as selection
from explorer.model_selection import experiments as selection_experiments
from explorer.svm_bootstrap import experiments as svm_experiments
from explorer import datasets, kernels
from explorer.blas import use_single_threaded_blas
from explorer.progress import Hooks

KERNEL_NAMES = ("se", "rq", "exponential", "matern32", "matern52", "periodic")


def _floats(text: str) -> list[float]:
    try:
        return [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _add_data_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("data (choose one)")
    src = g.add_mutually_exclusive_group()
    src.add_argument("--dataset", default="boston",
                     help=f"a shipped or generated dataset: {', '.join(datasets.available())} (default: boston)")
    src.add_argument("--csv", metavar="PATH", help="a CSV file of your own (one header row); needs --target")
    g.add_argument("--target", metavar="COLUMN", help="name of the target column in --csv")
    g.add_argument("--holdout", type=int, default=0, metavar="K",
                   help="keep the first K rows as test inputs, bootstrap the rest (Fig. 2 uses 50)")


def _add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model: --preset paper, or an explicit kernel")
    g.add_argument("--preset", choices=["paper"], default=None,
                   help="seed 000's Boston setting: σ² = 0.01, K = exp(−Σ_j (x_j−x'_j)²/(v_j l²)), l² = 73.54, "
                        "v_j = sample sd of input j, raw targets. The default when no --kernel is given.")
    g.add_argument("--kernel", choices=KERNEL_NAMES, default=None,
                   help="covariance function: squared exponential (se), rational quadratic (rq), exponential, "
                        "Matérn 3/2 or 5/2, periodic")
    g.add_argument("--lengthscale", type=_floats, default=None, metavar="L[,L2,...]",
                   help="lengthscale(s); one value per input column for ARD (default 1)")
    g.add_argument("--signal-var", type=float, default=None, help="signal variance of the kernel (default 1)")
    g.add_argument("--alpha", type=float, default=None, help="shape parameter of the rational quadratic kernel")
    g.add_argument("--period", type=float, default=None, help="period of the periodic kernel")
    g.add_argument("--l2", type=float, default=experiments.PAPER_L2,
                   help="l² of the paper preset (default 73.54)")
    g.add_argument("--noise-var", type=float, default=experiments.PAPER_NOISE_VAR,
                   help="noise variance σ² of the GP (default 0.01, the paper's)")


def _add_run_options(p: argparse.ArgumentParser, s_default: str, mc_default: int) -> None:
    g = p.add_argument_group("bootstrap")
    g.add_argument("--s-over-n", type=_floats, default=_floats(s_default), metavar="V[,V2,...]",
                   help=f"bootstrap size(s) S/N; S is the mean sample size (default {s_default})")
    g.add_argument("--mc-samples", type=int, default=mc_default,
                   help=f"number of Monte-Carlo bootstrap samples (default {mc_default})")
    g.add_argument("--seed", type=int, default=0, help="seed of the random generator (default 0)")
    g.add_argument("--tol", type=float, default=1e-3,
                   help="ADATAP stopping tolerance: largest relative change of Δλ(i) (default 1e-3, the paper's; "
                        "it gives ε(S) to about 1e-6 relative)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object on stdout")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="explorer",
        description="Resampling Explorer: analytical (replica/ADATAP) bootstrap averages vs Monte-Carlo.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("learning-curve", help="bootstrap learning curve ε(S): theory vs MC (seed 000 Fig. 1)",
                       description="Efron's bootstrap test error ε(S) from the ADATAP theory (eq. 45/46), "
                                   "the approximate ADATAP and Monte-Carlo with standard errors.")
    _add_data_options(p), _add_model_options(p), _add_run_options(p, "0.5,1,2", 2000)
    p.add_argument("--loss", choices=["square", "eps-insensitive"], default="square",
                   help="test loss (default square; eps-insensitive is §5's with --eps and --beta)")
    p.add_argument("--eps", type=float, default=0.1, help="ε of the ε-insensitive loss (default 0.1)")
    p.add_argument("--beta", type=float, default=0.1, help="β of the ε-insensitive loss (default 0.1)")
    p = sub.add_parser("distribution", help="bootstrap distribution of the predictor: L1 theory vs MC (Fig. 3-5)",
                       description="L1 distance between MC histograms (bin width 0.2) and the eq. (60) mixture "
                                   "at every training input, with the MC noise floor.")
    _add_data_options(p), _add_model_options(p), _add_run_options(p, "1", 20000)
    p.add_argument("--bin-width", type=float, default=0.2, help="histogram bin width (default 0.2, Fig. 5)")
    p = sub.add_parser("holdout", help="bootstrap mean/variance at held-out inputs (Fig. 2)",
                       description="Theory (eq. 48) vs MC mean and variance of the predictor at the first "
                                   "--holdout rows (default 50), bootstrapping the others.")
    _add_data_options(p), _add_model_options(p), _add_run_options(p, "1", 5000)
    p.set_defaults(holdout=50)
    sub.add_parser("datasets", help="list the datasets that --dataset accepts").add_argument(
        "--json", action="store_true", help="print JSON")
    p = sub.add_parser("serve", help="serve the interactive explorer in the browser (Panel)",
                       description="Serve the Resampling Explorer dashboard: learning curve, predictive "
                                   "distribution, L1 map and test inputs, theory vs Monte-Carlo, live.")
    p.add_argument("--port", type=int, default=5006, help="port to listen on (default 5006)")
    p.add_argument("--address", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1, this machine only; 0.0.0.0 exposes it to the network)")
    p.add_argument("--allow-websocket-origin", action="append", default=None, metavar="HOST[:PORT]",
                   help="extra origin allowed to connect, e.g. myhost.example.org:5006 behind a proxy (repeatable)")
    p.add_argument("--data-dir", default=None, metavar="DIR",
                   help="folder whose *.csv files are offered as datasets (default: $EXPLORER_DATA_DIR)")
    p.add_argument("--show", action=argparse.BooleanOptionalAction, default=False,
                   help="open the page in a web browser (default --no-show)")
    _add_svm_curve_parser(sub)
    _add_select_parsers(sub)
    cli_fastboot.add_parser(sub)
    return parser


def _add_svm_curve_parser(sub) -> None:
    p = sub.add_parser("svm-curve", help="hard-margin SVM bootstrap error ε(S): theory vs MC (seed 004 Fig. 1)",
                       description="Efron's bootstrap classification error of the hard-margin SVM without bias: "
                                   "replica/ADATAP theory (eq. 17) vs Monte-Carlo with standard errors, the S → ∞ "
                                   "limits (eq. 20 and literal leave-one-out), and the cost of the theory in SVM "
                                   "fits. Inputs are standardised; K = exp(−|x − x'|²/(2L²)).")
    g = p.add_argument_group("data (choose one)")
    src = g.add_mutually_exclusive_group()
    src.add_argument("--dataset", default="crabs", help="a shipped classification dataset: crabs, pima, wisconsin "
                                                        "(default: crabs)")
    src.add_argument("--csv", metavar="PATH", help="a CSV file of your own (one header row); needs --target")
    g.add_argument("--target", metavar="COLUMN", help="name of the two-class target column in --csv")
    g = p.add_argument_group("model and bootstrap")
    g.add_argument("--lengthscale", type=_floats, default=[svm_experiments.BROAD_LENGTHSCALE], metavar="L[,L2,...]",
                   help="RBF lengthscale(s) on standardised inputs, one or one per input (default √10 ≈ 3.1623)")
    g.add_argument("--s-over-n", type=_floats, default=_floats("0.25,0.5,1,2,4"), metavar="V[,V2,...]",
                   help="bootstrap sizes S/N (default 0.25,0.5,1,2,4)")
    g.add_argument("--mc-samples", type=int, default=1000, help="Monte-Carlo samples per S (default 1000)")
    g.add_argument("--seed", type=int, default=0, help="seed of the random generator (default 0)")
    g.add_argument("--tol", type=float, default=1e-6, help="ADATAP tolerance on the moment mismatch (default 1e-6)")
    g.add_argument("--exact-loo", action=argparse.BooleanOptionalAction, default=True,
                   help="also retrain for the literal leave-one-out error (one SVM per support vector)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object on stdout")


def _load_dataset(args) -> datasets.Dataset:
    if args.csv:
        if not args.target:
            raise ValueError("--csv needs --target COLUMN (the name of the target column).")
        return datasets.load_csv(args.csv, args.target)
    return datasets.load(args.dataset)


def _kernel(args, X: np.ndarray):
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


def _problem(args) -> experiments.RegressionProblem:
    data = _load_dataset(args)
    X = data.inputs[args.holdout:]
    return experiments.regression_problem(data, _kernel(args, X), args.noise_var, holdout=args.holdout)


def _hooks() -> Hooks | None:
    """Progress on stderr when it is a terminal (the core's :class:`~explorer.progress.Hooks`)."""
    if not sys.stderr.isatty():
        return None

    def show(fraction: float, message: str) -> None:
        sys.stderr.write(f"\r[{fraction:6.1%}] {message:<60}")
        sys.stderr.flush()

    return Hooks(progress=show)


def _run(args) -> tuple[dict, str]:
    if args.command == "datasets":
        names = list(datasets.available())
        return {"datasets": names}, "\n".join(names)
    if args.command == "svm-curve":
        return _svm_curve(args)
    if args.command == "fast-bootstrap":
        return cli_fastboot.run(args, _hooks())
    if args.command in ("select", "select-experiment"):
        return _select(args)
    if args.mc_samples < 1:
        raise ValueError(f"--mc-samples must be at least 1, got {args.mc_samples}.")
    problem = _problem(args)
    if args.command == "learning-curve":
        params = {"eps": args.eps, "beta": args.beta} if args.loss == "eps-insensitive" else {}
        res = experiments.learning_curve_comparison(
            problem, args.s_over_n, args.mc_samples, loss=args.loss, loss_params=params, rng=args.seed,
            tol=args.tol, hooks=_hooks())
        return res.as_dict(), _format_curve(res)
    if len(args.s_over_n) != 1:
        raise ValueError(f"`{args.command}` takes one --s-over-n value, got {args.s_over_n}.")
    if args.command == "distribution":
        res = experiments.distribution_comparison(problem, args.s_over_n[0], args.mc_samples,
                                                  bin_width=args.bin_width, rng=args.seed, tol=args.tol,
                                                  hooks=_hooks())
        return res.as_dict(), _format_distribution(res)
    res = experiments.holdout_comparison(problem, args.s_over_n[0], args.mc_samples, rng=args.seed,
                                         tol=args.tol, hooks=_hooks())
    return res.as_dict(), _format_holdout(res)


def _svm_curve(args) -> tuple[dict, str]:
    if args.mc_samples < 1:
        raise ValueError(f"--mc-samples must be at least 1, got {args.mc_samples}.")
    data = _load_dataset(args)
    ls = args.lengthscale[0] if len(args.lengthscale) == 1 else np.array(args.lengthscale)
    problem = svm_experiments.svm_problem(data, ls)
    res = svm_experiments.svm_learning_curve(problem, args.s_over_n, args.mc_samples, rng=args.seed, tol=args.tol,
                                             exact_loo=args.exact_loo, hooks=_hooks())
    return res.as_dict(), _format_svm_curve(res)


def _format_svm_curve(res: svm_experiments.SVMLearningCurve) -> str:
    lines = [f"{res.problem}: N = {res.n} ({res.n_sites} distinct inputs), hard-margin SVM, L = {res.lengthscale}",
             f"{'S/N':>6} {'theory':>10} {'MC':>10} {'± se':>8} {'(th−MC)/se':>10} {'sweeps':>6} {'residual':>9}"]
    for r in res.rows:
        theory = f"{r.theory:10.4g}" if r.theory is not None else f"{'failed':>10}"
        gap = f"{(r.theory - r.mc_mean) / r.mc_se:10.1f}" if r.theory is not None and r.mc_se > 0 else f"{'':>10}"
        lines.append(f"{r.s_over_n:6.3g} {theory} {r.mc_mean:10.4g} {r.mc_se:8.2g} {gap} {r.n_iter:6d} "
                     f"{r.residual:9.1e}")
    exact = "not computed" if res.loo_exact is None else f"{res.loo_exact:.4g}"
    lines.append(f"S → ∞: approximate leave-one-out (eq. 20, the theory's limit) {res.loo_approximate:.4g}, "
                 f"literal leave-one-out (the bootstrap's limit) {exact}")
    lines.append(f"theory solve at S = N: {res.theory_s * 1e3:.1f} ms = {res.theory_s / res.svm_train_s:.1f} SVM fits "
                 f"on D0 ({res.svm_train_s * 1e3:.2f} ms each)")
    return "\n".join(lines)


def _format_curve(res: experiments.LearningCurveComparison) -> str:
    lines = [f"{res.problem}: N = {res.n}, loss = {res.loss}",
             f"{'S/N':>6} {'theory':>10} {'approx':>10} {'MC':>10} {'± se':>8} {'iter':>5}"]
    for r in res.rows:
        lines.append(f"{r.s_over_n:6.3g} {r.theory:10.4g} {r.theory_approx:10.4g} {r.mc_mean:10.4g} "
                     f"{r.mc_se:8.2g} {r.n_iter:5d}")
    lines.append(f"theory solve at S = N: {res.theory_s * 1e3:.1f} ms = "
                 f"{res.theory_s / res.mc_sample_s:.1f} MC samples ({res.mc_sample_s * 1e3:.2f} ms each)")
    return "\n".join(lines)


def _format_distribution(res: experiments.DistributionComparison) -> str:
    s, f = res.l1, res.noise_floor
    return (f"{res.problem}: N = {res.solution.n}, S/N = {res.solution.s_over_n:g}, {s.n_samples} MC samples\n"
            f"L1 ≤ 0.1: {s.frac_le_0_1:.1%}   L1 ≥ 0.2: {s.frac_ge_0_2:.1%}   max L1: {s.max:.4f}\n"
            f"noise floor (theory vs its own samples): L1 ≤ 0.1: {f.frac_le_0_1:.1%}, max {f.max:.4f}\n"
            f"worst inputs: {', '.join(map(str, s.worst(10)))}")


def _format_holdout(res: experiments.HoldoutComparison) -> str:
    lines = [f"{'x':>4} {'mean th':>9} {'mean MC':>9} {'± se':>7} {'var th':>9} {'var MC':>9} {'± se':>7}"]
    for j in range(res.theory_mean.size):
        lines.append(f"{j:4d} {res.theory_mean[j]:9.4g} {res.mc_mean[j]:9.4g} {res.mc_mean_se[j]:7.2g} "
                     f"{res.theory_var[j]:9.4g} {res.mc_var[j]:9.4g} {res.mc_var_se[j]:7.2g}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- select (seed 001)

SELECT_CRITERIA = "evidence,loo,kfold,asc-boltzmann,asc-beta-noise,asc-bayes"


def _add_select_parsers(sub) -> None:
    p = sub.add_parser("select", help="GP model selection: optimise a kernel under each criterion (seed 001)",
                       description="Optimise the kernel hyperparameters and the noise under each criterion: negative "
                                   "log evidence (eq. 2.11), LOO and K-fold CV (eq. 2.12), approximation set coding "
                                   "(Boltzmann, β-noise, Bayesian; eqs. 4.1-4.4) and the replica bootstrap .632 "
                                   "error (bootstrap632); L-BFGS-B from Cauchy-distributed restarts (§5.1.1).")
    g = p.add_argument_group("data (choose one source)")
    src = g.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", help=f"a shipped or generated data set: {', '.join(datasets.available())} "
                                       "(generated ones are drawn with --seed)")
    src.add_argument("--csv", metavar="PATH", help="a CSV file of your own (one header row); needs --target")
    g.add_argument("--target", metavar="COLUMN", help="target column of --csv (and --test-csv)")
    g.add_argument("--inputs", metavar="COL[,COL2,...]", help="input columns (default: every other column)")
    g.add_argument("--test-csv", metavar="PATH", help="test data with the same columns: adds the test SMSE "
                                                      "(eq. 5.1) and MSLL of each selected model")
    g.add_argument("--standardize", action="store_true",
                   help="shift and scale inputs and targets to mean 0, sd 1 with the training statistics "
                        "(default: use them as given; hyperparameters are then in standardized units)")
    g = p.add_argument_group("model and criteria")
    g.add_argument("--kernel", choices=KERNEL_NAMES, default="se", help="covariance function (default se)")
    g.add_argument("--criteria", default=SELECT_CRITERIA,
                   help=f"comma-separated criteria (default {SELECT_CRITERIA}; also bootstrap632)")
    g.add_argument("--rank", metavar="K1,K2,...",
                   help="rank these covariance functions instead (§5.3), e.g. se,rq,exponential,periodic,matern52: "
                        "each is optimised by --select-by, then ranked by every --criteria (and test SMSE)")
    g.add_argument("--select-by", choices=selection.CRITERIA, default="loo",
                   help="with --rank: the criterion that optimises each covariance function (default loo)")
    _add_selection_options(p, objects=8)
    p = sub.add_parser("select-experiment", help="seed 001 model-selection experiments at small repetition counts",
                       description="Experiment 2 (curves), 3/4 (hyperparameters: test SMSE per criterion), 6/7/8 "
                                   "(functional-forms: rankings) and 10 (beta: ASC mutual information vs β) of "
                                   "Fischer (2016), on GP teacher draws or, with --temperature-csv, on the "
                                   "day-of-year temperature series (Experiments 4 and 8).")
    p.add_argument("experiment", choices=["curves", "hyperparameters", "functional-forms", "beta"])
    p.add_argument("--teacher", choices=list(selection_experiments.TEACHERS), default="squared_exponential",
                   help="teacher covariance (default squared_exponential)")
    p.add_argument("--repetitions", type=int, default=4, help="data sets or random splits (default 4; thesis 256)")
    p.add_argument("--criteria", default=",".join(selection_experiments.SYNTHETIC_CRITERIA),
                   help="comma-separated criteria compared (curves, hyperparameters) or ranking by (functional-forms)")
    p.add_argument("--parameter", choices=["lengthscale", "signal_std", "noise_std"], default="lengthscale",
                   help="hyperparameter swept by `curves` (default lengthscale)")
    p.add_argument("--select-by", choices=selection.CRITERIA, default="loo",
                   help="criterion optimising each functional form (default loo: Experiment 6; evidence: 7)")
    p.add_argument("--noise-std", type=float, default=0.1, help="teacher noise σ_n (default 0.1)")
    p.add_argument("--temperature-csv", metavar="PATH",
                   help="CSV with day_of_year and mean_anomaly_by_file_doy columns: Experiments 4 and 8")
    _add_selection_options(p, objects=None)


def _add_selection_options(p, objects) -> None:
    g = p.add_argument_group("optimisation and criterion settings")
    g.add_argument("--seed", type=int, default=0, help="seed of every random part (default 0)")
    g.add_argument("--restarts", type=int, default=16, help="L-BFGS-B runs from Cauchy starts (default 16)")
    g.add_argument("--max-iter", type=int, default=16, help="iterations per run (default 16)")
    g.add_argument("--folds", type=int, default=10, help="K of K-fold CV (default 10)")
    g.add_argument("--partitions", type=int, default=32, help="ASC partitions J (default 32)")
    g.add_argument("--subsets", type=int, default=2, help="ASC subsets L per partition (default 2)")
    g.add_argument("--objects", type=int, default=objects,
                   help="ASC objects M (default " + ("8" if objects else "the experiment's: 4 or 8") + ")")
    g.add_argument("--asc-entropy", choices=["zero", "prior"], default="zero",
                   help="ASC h(τ): 0 (eq. 3.3) or the prior entropy (eq. 4.2) (default zero)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object on stdout")


def _criteria_list(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in selection.CRITERIA]
    if bad or not names:
        raise ValueError(f"--criteria: unknown {', '.join(map(repr, bad)) or 'empty list'}; choose from "
                         f"{', '.join(selection.CRITERIA)}.")
    return names


def _selection_data(args):
    """(name, X, y, X_test, y_test, input names, target name) for `select`, standardized if asked."""
    if args.csv:
        if not args.target:
            raise ValueError("--csv needs --target COLUMN (the name of the target column).")
        data = datasets.load_csv(args.csv, args.target)
    else:
        name = args.dataset.strip().lower()
        data = datasets.load(name, rng=args.seed) if name in datasets._GENERATORS else datasets.load(name)
    if data.task != "regression":
        raise ValueError(f"{data.name!r} has a classification target; GP regression model selection needs "
                         "real-valued targets. Choose a regression data set or another --target.")
    cols = data.feature_names if not args.inputs else tuple(c.strip() for c in args.inputs.split(",") if c.strip())
    missing = [c for c in cols if c not in data.feature_names]
    if missing:
        raise ValueError(f"--inputs names unknown column(s) {missing}; available: {', '.join(data.feature_names)}.")
    X, y = data.inputs[:, [data.feature_names.index(c) for c in cols]], data.targets
    Xt = yt = None
    if args.test_csv:
        test = datasets.load_csv(args.test_csv, data.target_name, task="regression")
        absent = [c for c in cols if c not in test.feature_names]
        if absent:
            raise ValueError(f"--test-csv lacks the input column(s) {absent} of the training data.")
        Xt, yt = test.inputs[:, [test.feature_names.index(c) for c in cols]], test.targets
    if args.standardize:
        mx, sx = X.mean(axis=0), np.where(X.std(axis=0, ddof=1) > 0, X.std(axis=0, ddof=1), 1.0)
        my, sy = y.mean(), y.std(ddof=1)
        X, y = (X - mx) / sx, (y - my) / sy
        if Xt is not None:
            Xt, yt = (Xt - mx) / sx, (yt - my) / sy
    return data.name, X, y, Xt, yt, cols, data.target_name


def _select(args) -> tuple[dict, str]:
    for flag in ("restarts", "max_iter", "partitions", "subsets", "folds"):
        if getattr(args, flag) < 1:
            raise ValueError(f"--{flag.replace('_', '-')} must be at least 1, got {getattr(args, flag)}.")
    if args.command == "select-experiment":
        return _select_experiment(args)
    criteria = _criteria_list(args.criteria)
    name, X, y, Xt, yt, cols, target = _selection_data(args)
    data = {"name": name, "n": int(y.size), "d": int(X.shape[1]), "inputs": list(cols), "target": target,
            "standardized": bool(args.standardize), "n_test": None if yt is None else int(yt.size)}
    if args.rank:
        return _select_ranking(args, criteria, data, X, y, Xt, yt)
    start = selection.initial_hyperparameters(args.kernel, X, y)
    results = selection.select_hyperparameters(
        X, y, start.kernel, criteria, noise_var=start.noise_var, rng=args.seed, n_restarts=args.restarts,
        max_iter=args.max_iter, X_test=Xt, y_test=yt, n_folds=args.folds, n_partitions=args.partitions,
        n_subsets=args.subsets, n_objects=args.objects, entropy=args.asc_entropy)
    per = {}
    for r in results:
        per[r.criterion] = {"label": selection.CRITERION_LABELS[r.criterion], "hyperparameters": r.hyperparameters,
                            "value": r.value, "converged": r.converged, "n_restarts": r.n_restarts,
                            "n_failed": r.n_failed, "n_evaluations": r.n_evaluations, "n_excluded": r.n_excluded}
        if r.test is not None:
            per[r.criterion].update(smse=r.test.smse, msll=r.test.msll)
    payload = {"data": data, "kernel": args.kernel, "seed": args.seed, "criteria": per}
    return payload, _format_select(payload)


def _select_ranking(args, criteria, data, X, y, Xt, yt) -> tuple[dict, str]:
    names = [k.strip() for k in args.rank.split(",") if k.strip()]
    bad = [k for k in names if k not in KERNEL_NAMES]
    if bad or not names:
        raise ValueError(f"--rank: unknown covariance function(s) {bad or 'none given'}; choose from "
                         f"{', '.join(KERNEL_NAMES)}.")
    rows = selection.rank_functional_forms(
        X, y, names, select_by=args.select_by, rank_by=criteria, rng=args.seed, n_restarts=args.restarts,
        max_iter=args.max_iter, X_test=Xt, y_test=yt, n_folds=args.folds, n_partitions=args.partitions,
        n_subsets=args.subsets, n_objects=args.objects, entropy=args.asc_entropy)
    ranking = [{"kernel": r.kernel_name, "hyperparameters": r.selection.hyperparameters, "values": r.values,
                "ranks": r.ranks, **({"smse": r.test.smse, "msll": r.test.msll} if r.test else {})} for r in rows]
    payload = {"data": data, "select_by": args.select_by, "seed": args.seed, "ranking": ranking}
    keys = list(rows[0].ranks)
    lines = [f"{data['name']}: N = {data['n']}; each covariance function optimised by {args.select_by}; rank (value)",
             f"{'kernel':<12}" + "".join(f" {k:>22}" for k in keys)]
    for r in rows:
        lines.append(f"{r.kernel_name:<12}" + "".join(f" {r.ranks[k]:>3} ({r.values[k]:>15.6g})" for k in keys))
    return payload, "\n".join(lines)


def _format_select(payload: dict) -> str:
    d = payload["data"]
    lines = [f"{d['name']}: N = {d['n']}, inputs {', '.join(d['inputs'])} -> {d['target']}, kernel {payload['kernel']}"
             + (" (standardized)" if d["standardized"] else "")]
    for name, r in payload["criteria"].items():
        hyper = ", ".join(f"{k} = {np.round(v, 4).tolist() if isinstance(v, list) else f'{v:.4g}'}"
                          for k, v in r["hyperparameters"].items())
        test = f"   SMSE {r['smse']:.4g}, MSLL {r['msll']:.4g}" if "smse" in r else ""
        flag = "" if r["converged"] else " (not converged)"
        lines.append(f"{name:<15} value {r['value']:<11.5g} {hyper}{test}{flag}")
    return "\n".join(lines)


def _select_experiment(args) -> tuple[dict, str]:
    sx = selection_experiments
    if args.repetitions < 1:
        raise ValueError(f"--repetitions must be at least 1, got {args.repetitions}.")
    data = sx.load_temperature(args.temperature_csv) if args.temperature_csv else None
    common = dict(n_partitions=args.partitions, entropy=args.asc_entropy, rng=args.seed, hooks=_hooks())
    if args.objects is not None:
        common["n_objects"] = args.objects
    criteria = _criteria_list(args.criteria)
    fit = dict(n_restarts=args.restarts, max_iter=args.max_iter)
    if args.experiment == "curves":
        res = sx.curves_experiment(args.parameter, criteria, n_datasets=args.repetitions, **common)
    elif args.experiment == "hyperparameters":
        res = sx.hyperparameter_experiment(criteria, teacher=args.teacher, data=data, n_datasets=args.repetitions,
                                           sigma_n=args.noise_std, **fit, **common)
    elif args.experiment == "functional-forms":
        teachers = {} if data is not None else {"teachers": (args.teacher,) if args.teacher != "squared_exponential"
                                                 else tuple(sx.TEACHERS)}
        res = sx.functional_form_experiment(args.select_by, criteria, data=data, n_datasets=args.repetitions,
                                            **({"n": 64} if data is not None else {}), **teachers, **fit, **common)
    else:
        common.pop("n_partitions")
        res = sx.beta_experiment(args.teacher, n_datasets=args.repetitions, **common)
    payload = res.as_dict()
    return payload, json.dumps(payload, indent=1, default=_jsonable)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        if args.data_dir is not None and not os.path.isdir(args.data_dir):
            print(f"explorer: error: --data-dir {args.data_dir!r} is not a directory.", file=sys.stderr)
            return 2
        from explorer.app import serve  # the UI stack is imported only for this command
        serve(port=args.port, address=args.address, allow_websocket_origin=args.allow_websocket_origin,
              data_dir=args.data_dir, show=args.show)
        return 0
    try:
        payload, text = _run(args)
    except replica.ConvergenceError as err:
        print(f"explorer: the theory did not converge: {err}", file=sys.stderr)
        return 3
    except (ValueError, OSError, np.linalg.LinAlgError, FloatingPointError) as err:
        print(f"explorer: error: {err}", file=sys.stderr)
        return 2
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    print(json.dumps(payload, default=_jsonable) if getattr(args, "json", False) else text)
    return 0


def _jsonable(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def run() -> int:
    """The installed ``explorer`` command: one BLAS thread per process (see explorer.blas), then main."""
    use_single_threaded_blas()
    return main()


if __name__ == "__main__":
    sys.exit(run())
