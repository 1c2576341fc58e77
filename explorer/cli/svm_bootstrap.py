"""``svm-curve``: the hard-margin SVM bootstrap of [MO03b], replica theory vs Monte-Carlo (Fig. 1).

The problem comes from :func:`explorer.svm_bootstrap.problem.svm_problem` (standardised inputs), as in the
app's SVM tab.
"""
from __future__ import annotations

import argparse

import numpy as np

from explorer.cli import common
from explorer.svm_bootstrap import experiments as svm_experiments
from explorer.svm_bootstrap.problem import BROAD_LENGTHSCALE, svm_problem

__all__ = ["register", "COMMANDS"]


def register(sub) -> None:
    """Add ``svm-curve`` to the CLI's subparsers."""
    common.register(sub, COMMANDS)


def _svm_curve_arguments(p: argparse.ArgumentParser) -> None:
    common.add_data_source(p, dataset_default="crabs", target_help="name of the two-class target column in --csv",
                           dataset_help="a shipped classification dataset: crabs, pima, wisconsin (default: crabs)")
    g = p.add_argument_group("model and bootstrap")
    g.add_argument("--lengthscale", type=common.LENGTHSCALES, default=[BROAD_LENGTHSCALE],
                   metavar="L[,L2,...]", help=f"RBF lengthscale(s) on standardised inputs, one or one per input "
                                              f"({common.LENGTHSCALES}; default √10 ≈ 3.1623)")
    g.add_argument("--s-over-n", type=common.S_OVER_N, default=common.S_OVER_N("0.25,0.5,1,2,4"), metavar="V[,V2,...]",
                   help=f"bootstrap sizes S/N, {common.S_OVER_N} (default 0.25,0.5,1,2,4)")
    g.add_argument("--mc-samples", type=common.MC_SAMPLES, default=1000,
                   help=f"Monte-Carlo samples per S, {common.MC_SAMPLES} (default 1000)")
    common.add_seed_option(g)
    g.add_argument("--tol", type=common.TOLERANCE, default=1e-6,
                   help=f"ADATAP tolerance on the moment mismatch, {common.TOLERANCE} (default 1e-6)")
    g.add_argument("--exact-loo", action=argparse.BooleanOptionalAction, default=True,
                   help="also retrain for the literal leave-one-out error (one SVM per support vector)")
    common.add_engine_options(p)
    common.add_json_option(p)


def svm_curve(args) -> common.Output:
    """Efron's bootstrap classification error of the hard-margin SVM without bias: replica/ADATAP theory (eq. 17) vs
    Monte-Carlo with standard errors, the S → ∞ limits (eq. 20 and literal leave-one-out), and the cost of the
    theory in SVM fits. Inputs are standardised; K = exp(−‖x − x'‖²/(2L²))."""
    data = common.load_dataset(args)
    ls = args.lengthscale[0] if len(args.lengthscale) == 1 else np.array(args.lengthscale)
    problem = svm_problem(data, ls)
    with common.engine_executor(args) as executor:
        res = svm_experiments.svm_learning_curve(problem, args.s_over_n, args.mc_samples, rng=args.seed, tol=args.tol,
                                                 exact_loo=args.exact_loo, executor=executor, hooks=common.progress())
    return common.Output(res.as_dict(), format_svm_curve(res))


def format_svm_curve(res: svm_experiments.SVMLearningCurve) -> str:
    """The learning curve as a table, then the S → ∞ limits and the cost of the theory."""
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


#: The module's commands, in the order of ``explorer --help`` (:func:`register`).
COMMANDS = (
    common.Command.computing("svm-curve", "hard-margin SVM bootstrap error ε(S): theory vs MC ([MO03b] Fig. 1)",
                             _svm_curve_arguments, svm_curve),
)
