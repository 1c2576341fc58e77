"""``fast-bootstrap``: full vs fast bootstrap model-structure selection ([LSWV05]).

The data are prepared by the core (:func:`explorer.fast_bootstrap.problem.prepare_data`, called inside
:func:`~explorer.fast_bootstrap.experiments.compare_bootstraps`), as in the app's fast-bootstrap tab.
"""
from __future__ import annotations

import argparse
from dataclasses import replace

from explorer import datasets
from explorer.cli import common
from explorer.fast_bootstrap import experiments as fe
from explorer.fast_bootstrap.problem import MODELS, TOY_LENGTHSCALE, Setting, paper_setting, with_overrides
from explorer.fast_bootstrap.stages import estimated_seconds

__all__ = ["register", "COMMANDS", "format_comparison"]

EPILOG = """defaults: the grids and replication counts of Table 1 of [LSWV05] (toy example) — or of Table 2 for a
--series-csv time series — e.g. LS-SVM γ = 5..50 by 0.1 with 100 replications (full) and γ = 5..50 by 5 with 10
replications (fast, F test on log γ). The MLP's full bootstrap trains 1300 networks (about 2-3 minutes)."""


_LONGER = "More would take hours."
#: The options' bounds (Tables 1-2 use NAR(6), grids of at most 451 points, 100 replications; the app's bounds).
LAGS = common.IntRange(1, 50, "the number of lags")
MAX_EPOCHS = common.IntRange(1, 10_000, "the number of epochs", _LONGER)
RESTARTS = common.IntRange(1, 50, "the number of restarts", _LONGER)
#: Defaults of the options of one model family (given with another family, an option is refused, never dropped).
DEFAULT_WSF, DEFAULT_MAX_EPOCHS, DEFAULT_RESTARTS = 8.0, 200, 3
REPLICATIONS = common.IntRange(1, 10_000, "the number of replications", _LONGER)
ORDER = common.IntRange(0, 10, "a polynomial order")
GRID = common.Grid(1000)
#: Longest run allowed, by the core's estimate (:func:`~explorer.fast_bootstrap.stages.estimated_seconds`).
MAX_SECONDS = 3600.0


def _yes_no(text: str) -> bool:
    if text.lower() not in ("yes", "no"):
        raise argparse.ArgumentTypeError(f"expected yes or no, got {text!r}")
    return text.lower() == "yes"


def register(sub) -> None:
    """Add ``fast-bootstrap`` to the CLI's subparsers."""
    common.register(sub, COMMANDS)


def _arguments(p: argparse.ArgumentParser) -> None:
    g = common.add_data_source(p, dataset_default="toy", target_help="target column of --csv",
                               csv_help="a regression CSV of your own; needs --target",
                               series_csv_help="a time series CSV (rows in time order), embedded as NAR(--lags), "
                                               "e.g. the Santa Fe laser series A",
                               dataset_help="toy (eq. 19, drawn with --seed; the default) or a shipped "
                                            f"regression set: {', '.join(datasets.available())}")
    g.add_argument("--column", default=None, help="series column of --series-csv (default value)")
    g.add_argument("--lags", type=LAGS, default=None, help=f"NAR order for --series-csv, {LAGS} (default 6, eq. 20)")
    g = p.add_argument_group("model")
    g.add_argument("--model", choices=MODELS, default="ls-svm", help="model family (default ls-svm)")
    g.add_argument("--lengthscale", type=common.POSITIVE, default=None,
                   help=f"LS-SVM Gaussian kernel width ℓ, {common.POSITIVE} (default {TOY_LENGTHSCALE} on the "
                        "toy data — the maximum-evidence value — else the median distance between standardised "
                        "inputs)")
    g.add_argument("--wsf", type=common.POSITIVE, default=None,
                   help=f"RBFN width scaling factor WSF of eq. 14, {common.POSITIVE} (default {DEFAULT_WSF:g}; "
                        "--model rbfn only)")
    g.add_argument("--max-epochs", type=MAX_EPOCHS, default=None,
                   help=f"MLP Levenberg-Marquardt iterations, {MAX_EPOCHS} (default {DEFAULT_MAX_EPOCHS}; "
                        "--model mlp only)")
    g.add_argument("--restarts", type=RESTARTS, default=None,
                   help=f"MLP random restarts, the best kept, {RESTARTS} (default {DEFAULT_RESTARTS}; --model mlp "
                        "only)")
    g = p.add_argument_group(f"bootstrap (defaults: Table 1 / Table 2; a run the core estimates at more than "
                             f"{MAX_SECONDS / 60:.0f} minutes on one core is refused before it starts)")
    g.add_argument("--full-grid", type=GRID, metavar="START,STOP,STEP",
                   help=f"complexities of the full bootstrap, {GRID}")
    g.add_argument("--full-replications", type=REPLICATIONS,
                   help=f"bootstrap replications J of the full bootstrap, {REPLICATIONS}")
    g.add_argument("--fast-grid", type=GRID, metavar="START,STOP,STEP",
                   help=f"reduced grid of the fast bootstrap, {GRID}")
    g.add_argument("--fast-replications", type=REPLICATIONS, help=f"replications of the fast bootstrap, {REPLICATIONS}")
    g.add_argument("--log-complexity", type=_yes_no, metavar="yes|no",
                   help="fit the optimism polynomial in log q (default yes for ls-svm, no otherwise)")
    g.add_argument("--kappa0", type=ORDER, default=1, help=f"order κ0 under H0 of the F test, {ORDER} (default 1)")
    g.add_argument("--kappa1", type=ORDER, default=2, help=f"order κ1 under H1 of the F test, {ORDER} (default 2)")
    g.add_argument("--no-full", action="store_true", help="skip the full bootstrap (fast bootstrap only)")
    g.add_argument("--no-replica", action="store_true", help="skip the replica theory (LS-SVM only)")
    common.add_seed_option(g)
    common.add_engine_options(p)
    common.add_json_option(p)


def _check_options(args) -> None:
    """A ValueError for an option the run does not use (it would be dropped without a word)."""
    why = {"--column": "it names the series column of --series-csv", "--lags": "it is the NAR order of --series-csv",
           "--lengthscale": f"it is the LS-SVM's kernel width and the model here is {args.model}",
           "--wsf": f"it is the RBFN's width scaling factor and the model here is {args.model}",
           "--max-epochs": f"it is the MLP's training length and the model here is {args.model}",
           "--restarts": f"it is the MLP's number of restarts and the model here is {args.model}"}
    unused = [o for o, v in (("--column", args.column), ("--lags", args.lags)) if v is not None and not args.series_csv]
    owner = {"--lengthscale": ("ls-svm", args.lengthscale), "--wsf": ("rbfn", args.wsf),
             "--max-epochs": ("mlp", args.max_epochs), "--restarts": ("mlp", args.restarts)}
    unused += [o for o, (model, v) in owner.items() if v is not None and args.model != model]
    if unused:
        raise ValueError("; ".join(f"{o} is not used ({why[o]})" for o in unused) + ". Drop it, or add the "
                         "option that uses it.")


def _or(value, default):
    """``value``, or ``default`` where the option was not given (None)."""
    return default if value is None else value


def _data(args) -> datasets.Dataset:
    _check_options(args)
    if args.series_csv:
        return datasets.load_series_csv(args.series_csv, args.column or "value", args.lags or 6)
    if args.csv:
        if not args.target:
            raise ValueError("--csv needs --target COLUMN (the column to predict).")
        return common.check_rows(datasets.load_csv(args.csv, args.target, task="regression"))
    if args.dataset == "toy":
        return datasets.toy_function(rng=args.seed)
    if args.dataset in datasets.GENERATED:  # as the app's tab draws it: from the seed
        return datasets.load(args.dataset, rng=args.seed)
    return common.check_rows(datasets.load(args.dataset))  # the models are dense (diamonds has 53,940 rows)


def format_comparison(res: fe.BootstrapComparison) -> str:
    """A short text report: selected complexity, F test, models trained and gain."""
    f = res.fast.f_test
    lines = [f"{res.model} on {res.dataset}: {res.complexity}",
             f"  fast bootstrap: selected {res.fast.selected:g}; F({f.df_num},{f.df_den}) = {f.F:.4g}, "
             f"p = {f.p_value:.3g} -> optimism of degree {res.fast.degree}"
             f"{' in log q' if res.fast.log_complexity else ''}; {res.fast.models_trained} models trained "
             f"({res.fast.bootstrap_models} bootstrap + {res.fast.grid.size} apparent), {res.seconds['fast']:.2f} s"]
    if res.full is not None:
        lines.append(f"  full bootstrap: selected {res.full.selected:g}; {res.full.models_trained} models trained "
                     f"({res.full.bootstrap_models} bootstrap + {res.full.grid.size} apparent), "
                     f"{res.seconds['full']:.2f} s")
        lines.append(f"  gain: {res.gain:.1%} fewer models ({res.paper_gain:.1%} counting bootstrap models "
                     "only, as Table 1)")
    if res.replica is not None:
        lines.append(f"  replica theory: optimism at {res.replica.grid.size} values without refits, "
                     f"{res.seconds['replica']:.2f} s")
    if res.loo is not None:
        lines.append(f"  leave-one-out (closed form): selected {res.loo.selected:g}; error "
                     f"{res.loo.generalization_error.min():.4g} at {res.loo.grid.size} values without refits, "
                     f"{res.seconds['loo']:.3f} s")
    return "\n".join(lines)


def fast_bootstrap(args) -> common.Output:
    """Estimate the generalization error (eq. 8) of a family of models over a complexity grid by the full bootstrap
    (§3) and by the fast bootstrap (§4: optimism on a reduced grid, polynomial fit checked by the F test of eq. 11);
    for the LS-SVM also the replica theory's optimism ([MO03]) and the exact leave-one-out error over the full
    grid (Cawley & Talbot), both without refits."""
    data = _data(args)
    setting = with_overrides(paper_setting(args.model, data), full_grid=args.full_grid,
                                full_replications=args.full_replications, fast_grid=args.fast_grid,
                                fast_replications=args.fast_replications, log_complexity=args.log_complexity)
    options = {"lengthscale": args.lengthscale} if args.model == "ls-svm" else (
        {"wsf": _or(args.wsf, DEFAULT_WSF)} if args.model == "rbfn" else
        {"max_epochs": _or(args.max_epochs, DEFAULT_MAX_EPOCHS), "n_init": _or(args.restarts, DEFAULT_RESTARTS)})
    _check_duration(args, data.n, setting, options)
    with common.engine_executor(args) as executor:
        res = fe.compare_bootstraps(data, args.model, setting, rng=args.seed, with_full=not args.no_full,
                                    with_replica=not args.no_replica, kappa0=args.kappa0, kappa1=args.kappa1,
                                    model_options=options, executor=executor, hooks=common.progress())
    return common.Output(res.as_dict(), format_comparison(res))


def _check_duration(args, n: int, setting: Setting, options: dict) -> None:
    """Refuse a run the core estimates at more than :data:`MAX_SECONDS` on one core, before it starts."""
    fast = replace(setting, full_grid=setting.fast_grid, full_replications=setting.fast_replications)
    seconds = estimated_seconds("full", args.model, n, fast, options)
    if not args.no_full:
        seconds += estimated_seconds("full", args.model, n, setting, options)
    if args.model == "ls-svm" and not args.no_replica:
        seconds += estimated_seconds("replica", args.model, n, setting)
    if seconds > MAX_SECONDS:
        raise ValueError(f"this run would take about {seconds / 3600:.1f} hours on one core (N = {n}); at most "
                         f"{MAX_SECONDS / 3600:g} hour is started. Use fewer replications, a coarser grid, fewer "
                         "epochs or restarts, --no-full or --no-replica.")


#: The module's commands, in the order of ``explorer --help`` (:func:`register`).
COMMANDS = (
    common.Command.computing("fast-bootstrap", "bootstrap model-structure selection: full vs fast bootstrap ([LSWV05])",
                             _arguments, fast_bootstrap, EPILOG),
)
