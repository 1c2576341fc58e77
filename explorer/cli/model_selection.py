"""``select`` and ``select-experiment``: GP model selection of [Fis16].

``select`` builds its :class:`~explorer.model_selection.problem.SelectionProblem` with the core's
:func:`~explorer.model_selection.problem.selection_problem` (as the app's model-selection tab does), so
``--standardize`` scales the data exactly as the tab's "Standardise" box; ``select-experiment`` runs the thesis
experiments of :mod:`explorer.model_selection.experiments`.
"""
from __future__ import annotations

import argparse

import numpy as np

from explorer import datasets
from explorer.cli import common
from explorer.kernels import KERNEL_NAMES
from explorer.model_selection import experiments as selection_experiments
from explorer.model_selection import stages
from explorer.model_selection.criterion import CRITERIA, CRITERION_LABELS
from explorer.model_selection.problem import SelectionProblem, selection_problem

__all__ = ["register", "COMMANDS", "SELECT_CRITERIA"]

SELECT_CRITERIA = "evidence,loo,kfold,asc-boltzmann,asc-beta-noise,asc-bayes"

_LONGER = "More would take hours."
#: Optimisation and criterion counts (the thesis: 16 restarts of 16 iterations, J = 32, L = 2, M = 8, 256
#: repetitions); the upper bounds keep one run near an hour on the thesis data sizes.
RESTARTS = common.IntRange(1, 64, "the number of restarts", _LONGER)
MAX_ITER = common.IntRange(1, 200, "the number of iterations per run", _LONGER)
FOLDS = common.IntRange(2, 1000, "the number of folds")
PARTITIONS = common.IntRange(1, 256, "the number of ASC partitions", _LONGER)
SUBSETS = common.IntRange(1, 16, "the number of ASC subsets per partition")
OBJECTS = common.IntRange(1, 1000, "the number of ASC objects")
REPETITIONS = common.IntRange(1, 256, "the number of repetitions",
                              "256 is the thesis' count; more would take hours.")
NOISE_STD = common.FloatRange(1e-6, 1e3, "a noise standard deviation")


def register(sub) -> None:
    """Add ``select`` and ``select-experiment`` to the CLI's subparsers."""
    common.register(sub, COMMANDS)


def _select_arguments(p: argparse.ArgumentParser) -> None:
    g = common.add_data_source(p, required=True, target_help="target column of --csv (and --test-csv)",
                               dataset_help=f"a shipped or generated data set: {', '.join(datasets.available())} "
                                            "(generated ones are drawn with --seed)")
    g.add_argument("--inputs", metavar="COL[,COL2,...]", help="input columns (default: every other column)")
    g.add_argument("--test-csv", metavar="PATH", type=common.csv_path,
                   help="test data with the same columns: adds the test SMSE (eq. 5.1) and MSLL of each selected "
                        f"model (at most {common.MAX_CSV_BYTES:,} bytes)")
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
    g.add_argument("--select-by", choices=CRITERIA, default="loo",
                   help="with --rank: the criterion that optimises each covariance function (default loo)")
    _add_selection_options(p, objects=8)


def _experiment_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("experiment", choices=["curves", "hyperparameters", "functional-forms", "beta"])
    p.add_argument("--teacher", choices=list(selection_experiments.TEACHERS), default="squared_exponential",
                   help="teacher covariance (default squared_exponential)")
    p.add_argument("--repetitions", type=REPETITIONS, default=4,
                   help=f"data sets or random splits, {REPETITIONS} (default 4; thesis 256)")
    p.add_argument("--criteria", default=",".join(selection_experiments.SYNTHETIC_CRITERIA),
                   help="comma-separated criteria compared (curves, hyperparameters) or ranking by (functional-forms)")
    p.add_argument("--parameter", choices=["lengthscale", "signal_std", "noise_std"], default="lengthscale",
                   help="hyperparameter swept by `curves` (default lengthscale)")
    p.add_argument("--select-by", choices=CRITERIA, default="loo",
                   help="criterion optimising each functional form (default loo: Experiment 6; evidence: 7)")
    p.add_argument("--noise-std", type=NOISE_STD, default=0.1, help=f"teacher noise σ_n, {NOISE_STD} (default 0.1)")
    p.add_argument("--temperature-csv", metavar="PATH", type=common.csv_path,
                   help=f"CSV with day_of_year and mean_anomaly_by_file_doy columns: Experiments 4 and 8 (at most "
                        f"{common.MAX_CSV_BYTES:,} bytes)")
    _add_selection_options(p, objects=None)
    common.add_engine_options(p)


def _add_selection_options(p, objects) -> None:
    g = p.add_argument_group("optimisation and criterion settings")
    common.add_seed_option(g, "seed of every random part")
    g.add_argument("--restarts", type=RESTARTS, default=16,
                   help=f"L-BFGS-B runs from Cauchy starts, {RESTARTS} (default 16)")
    g.add_argument("--max-iter", type=MAX_ITER, default=16, help=f"iterations per run, {MAX_ITER} (default 16)")
    g.add_argument("--folds", type=FOLDS, default=10, help=f"K of K-fold CV, {FOLDS} and at most N (default 10)")
    g.add_argument("--partitions", type=PARTITIONS, default=32, help=f"ASC partitions J, {PARTITIONS} (default 32)")
    g.add_argument("--subsets", type=SUBSETS, default=2, help=f"ASC subsets L per partition, {SUBSETS} (default 2)")
    g.add_argument("--objects", type=OBJECTS, default=objects,
                   help=f"ASC objects M, {OBJECTS} (default " + ("8" if objects else "the experiment's: 4 or 8") + ")")
    g.add_argument("--asc-entropy", choices=["zero", "prior"], default="zero",
                   help="ASC h(τ): 0 (eq. 3.3) or the prior entropy (eq. 4.2) (default zero)")
    common.add_json_option(p)


# ----------------------------------------------------------------------------- options → problem


def _criteria_list(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in CRITERIA]
    if bad or not names:
        raise ValueError(f"--criteria: unknown {', '.join(map(repr, bad[:5])) or 'empty list'}; choose from "
                         f"{', '.join(CRITERIA)}.")
    _no_repeats("--criteria", names)
    return names


def _no_repeats(flag: str, names: list[str]) -> None:
    """Each name once: a repeated criterion or kernel would be optimised again for nothing."""
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"{flag} names {', '.join(map(repr, repeated))} more than once; give each once.")


def _load(args) -> datasets.Dataset:
    if args.csv:
        if not args.target:
            raise ValueError("--csv needs --target COLUMN (the name of the target column).")
        return common.check_rows(datasets.load_csv(args.csv, args.target))
    name = args.dataset.strip().lower()
    return common.check_rows(datasets.load(name, rng=args.seed) if name in datasets.GENERATED else datasets.load(name))


def problem_from_options(args) -> SelectionProblem:
    """The data of ``select``: --dataset or --csv, --inputs, --test-csv and --standardize, by the core's
    :func:`selection_problem` (the flags are checked first so that the messages name them)."""
    data = _load(args)
    if data.task != "regression":
        raise ValueError(f"{data.name!r} has a classification target; GP regression model selection needs "
                         "real-valued targets. Choose a regression data set or another --target.")
    cols = data.feature_names if not args.inputs else tuple(c.strip() for c in args.inputs.split(",") if c.strip())
    missing = [c for c in cols if c not in data.feature_names]
    if missing:
        raise ValueError(f"--inputs names unknown column(s) {missing}; available: {', '.join(data.feature_names)}.")
    test = None
    if args.test_csv:
        test = datasets.load_csv(args.test_csv, data.target_name, task="regression")
        absent = [c for c in cols if c not in test.feature_names]
        if absent:
            raise ValueError(f"--test-csv lacks the input column(s) {absent} of the training data.")
    return selection_problem(data, inputs=cols, test=test, standardize=args.standardize)


# ----------------------------------------------------------------------------- commands


def select(args) -> common.Output:
    """Optimise the kernel hyperparameters and the noise under each criterion: negative log evidence (eq. 2.11), LOO
    and K-fold CV (eq. 2.12), approximation set coding (Boltzmann, β-noise, Bayesian; eqs. 4.1-4.4) and the replica
    bootstrap .632 error (bootstrap632); L-BFGS-B from Cauchy-distributed restarts (§5.1.1)."""
    criteria = _criteria_list(args.criteria)
    problem = problem_from_options(args)
    data = {"name": problem.name, "n": problem.n, "d": problem.d, "inputs": list(problem.feature_names),
            "target": problem.target_name, "standardized": problem.standardized,
            "n_test": problem.n_test if problem.n_test else None}
    if args.rank:
        return _select_ranking(args, criteria, data, problem)
    fits = stages.selection_fits(problem, args.kernel, criteria, n_restarts=args.restarts, max_iter=args.max_iter,
                                 options=_criterion_options(args), rng=args.seed)
    per = {}
    for r in fits.results:
        per[r.criterion] = {"label": CRITERION_LABELS[r.criterion], "hyperparameters": r.hyperparameters,
                            "value": r.value, "converged": r.converged, "n_restarts": r.n_restarts,
                            "n_failed": r.n_failed, "n_evaluations": r.n_evaluations, "n_excluded": r.n_excluded}
        if r.test is not None:
            per[r.criterion].update(smse=r.test.smse, msll=r.test.msll)
    payload = {"data": data, "kernel": args.kernel, "seed": args.seed, "criteria": per}
    return common.Output(payload, format_select(payload))


def _criterion_options(args) -> dict:
    """The criteria's options from the flags (``make_criterion``'s keywords)."""
    return dict(n_folds=args.folds, n_partitions=args.partitions, n_subsets=args.subsets, n_objects=args.objects,
                entropy=args.asc_entropy)


def _select_ranking(args, criteria, data: dict, problem: SelectionProblem) -> common.Output:
    names = [k.strip() for k in args.rank.split(",") if k.strip()]
    bad = [k for k in names if k not in KERNEL_NAMES]
    if bad or not names:
        raise ValueError(f"--rank: unknown covariance function(s) {bad[:5] or 'none given'}; choose from "
                         f"{', '.join(KERNEL_NAMES)}.")
    _no_repeats("--rank", names)
    rows = stages.functional_form_ranking(problem, names, args.select_by, criteria, n_restarts=args.restarts,
                                          max_iter=args.max_iter, options=_criterion_options(args), rng=args.seed).rows
    ranking = [{"kernel": r.kernel_name, "hyperparameters": r.selection.hyperparameters, "values": r.values,
                "ranks": r.ranks, **({"smse": r.test.smse, "msll": r.test.msll} if r.test else {})} for r in rows]
    payload = {"data": data, "select_by": args.select_by, "seed": args.seed, "ranking": ranking}
    keys = list(rows[0].ranks)
    lines = [f"{data['name']}: N = {data['n']}; each covariance function optimised by {args.select_by}; rank (value)",
             f"{'kernel':<12}" + "".join(f" {k:>22}" for k in keys)]
    for r in rows:
        lines.append(f"{r.kernel_name:<12}" + "".join(f" {('—' if r.ranks[k] is None else r.ranks[k]):>3} ({r.values[k]:>15.6g})" for k in keys))
    return common.Output(payload, "\n".join(lines))


def format_select(payload: dict) -> str:
    """One line per criterion: its value, the selected hyperparameters and the test errors."""
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


def select_experiment(args) -> common.Output:
    """Experiment 2 (curves), 3/4 (hyperparameters: test SMSE per criterion), 6/7/8 (functional-forms: rankings) and
    10 (beta: ASC mutual information vs β) of Fischer (2016), on GP teacher draws or, with --temperature-csv, on the
    day-of-year temperature series (Experiments 4 and 8)."""
    sx = selection_experiments
    data = sx.load_temperature(args.temperature_csv) if args.temperature_csv else None
    shared = {"n_partitions": args.partitions, "entropy": args.asc_entropy, "rng": args.seed,
              "hooks": common.progress()}
    if args.objects is not None:
        shared["n_objects"] = args.objects
    criteria = _criteria_list(args.criteria)
    fit = {"n_restarts": args.restarts, "max_iter": args.max_iter}
    with common.engine_executor(args) as executor:
        res = _run_experiment(args, sx, criteria, data, fit, {**shared, "executor": executor})
    payload = res.as_dict()
    return common.Output(payload, common.to_json(payload, indent=1))


def _run_experiment(args, sx, criteria, data, fit, shared):
    """The experiment ``args.experiment`` of :mod:`explorer.model_selection.experiments` with the ``shared`` options."""
    if args.experiment == "curves":
        res = sx.curves_experiment(args.parameter, criteria, n_datasets=args.repetitions, **shared)
    elif args.experiment == "hyperparameters":
        res = sx.hyperparameter_experiment(criteria, teacher=args.teacher, data=data, n_datasets=args.repetitions,
                                           sigma_n=args.noise_std, **fit, **shared)
    elif args.experiment == "functional-forms":
        teachers = {} if data is not None else {"teachers": (args.teacher,) if args.teacher != "squared_exponential"
                                                 else tuple(sx.TEACHERS)}
        res = sx.functional_form_experiment(args.select_by, criteria, data=data, n_datasets=args.repetitions,
                                            **({"n": 64} if data is not None else {}), **teachers, **fit, **shared)
    else:
        shared.pop("n_partitions")
        res = sx.beta_experiment(args.teacher, n_datasets=args.repetitions, **shared)
    return res


#: The module's commands, in the order of ``explorer --help`` (:func:`register`).
COMMANDS = (
    common.Command.computing("select", "GP model selection: optimise a kernel under each criterion ([Fis16])",
                             _select_arguments, select),
    common.Command.computing("select-experiment", "[Fis16] model-selection experiments at small repetition counts",
                             _experiment_arguments, select_experiment),
)
