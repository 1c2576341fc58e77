"""What the settings of the Gaussian-process pages may be: the data sets, kernels, losses and tabs, the grids of S/N,
the row and rank bounds of the dense and low-rank modes, the computations a control's change makes stale and when a
control applies (what the state's declarations of its controls say, :mod:`explorer.views.common.state.declarations`), the
errors a user can cause.

Shared by the state (:mod:`~explorer.views.gp_bootstrap.state`), its jobs, data and hyperparameters; no widget,
no computation.
"""

from __future__ import annotations

import numpy as np

from explorer import datasets, kernels
from explorer.bootstrap import replica
from explorer.gp_bootstrap import evidence as gp_evidence
from explorer.gp_bootstrap.l1 import PAPER_BIN_WIDTH

__all__ = [
    "REGRESSION_DATASETS", "FITTED_DATASETS", "CSV_PREFIX", "KERNELS", "LOSSES", "GP_TABS", "MC_KINDS", "METHODS",
    "APPROXIMATIONS", "IJ_LOSSES", "MC_GRID", "THEORY_GRID", "BIN_WIDTH", "MAX_ROWS", "LOW_RANK_ROWS",
    "DATA_DIR_LIMITS", "RANK_BOUNDS", "LOW_RANK_GRID", "MAX_COLUMNS", "MAX_MC_VALUES", "SUBSAMPLE_SEED",
    "EVIDENCE_ROWS", "HYPERPARAMETERS", "DATA_SEED", "OUTPUTS", "EXPECTED_ERRORS", "HOLDOUT_TAB", "DATA_STAGES",
    "PROBLEM_STAGES", "KERNEL_STAGES", "THEORY_STAGES", "REFRESH_STAGES", "COMPUTED_STAGES", "is_csv", "fits_ard", "kernel_is",
    "kernel_is_not", "loss_is",
]

#: The shipped or generated regression datasets offered in the app (the others are classification sets).
REGRESSION_DATASETS = ("boston", "toy", "teacher", "diamonds")
#: Shipped sets whose kernel starts from maximum evidence, as a CSV's does (the command line does the same): diamonds
#: has no paper preset.
FITTED_DATASETS = ("diamonds",)
#: ``dataset`` value of a CSV uploaded in the page; files of the data directory are ``CSV_PREFIX + name``.
CSV_PREFIX = "file: "
#: ``paper`` is [MO03]'s preset (RBF with l² = 73.54 on the sd-scaled inputs, eq. (1) of §5).
KERNELS = ("paper", *kernels.KERNEL_NAMES)
LOSSES = ("square", "eps-insensitive")
#: The tab of the held-out test inputs (and its Monte-Carlo job), named like the control ``holdout`` (the rows it
#: holds out), written once here.
HOLDOUT_TAB = "holdout"
GP_TABS = ("curve", "distribution", "l1", HOLDOUT_TAB)
#: Jobs that run the Monte-Carlo bootstrap (cancellable); "theory" is the ADATAP learning curve.
MC_KINDS = ("curve", "distribution", HOLDOUT_TAB)
#: Theory curves of the learning-curve tab (``TheoryCurve`` fields) and their labels; VG and MF: square loss only.
METHODS = {"theory": "ADATAP", "theory_approx": "approx. ADATAP", "theory_vg": "VG", "theory_mf": "MF"}
#: The no-refit approximations beside them (``LinearResponseCurve`` fields, docs/linear_response.md) and their
#: labels: the infinitesimal jackknife ε_IJ(S) (square loss only) and the leave-one-out limit at noise σ²N/S.
APPROXIMATIONS = {"ij": "IJ", "loo_limit": "LOO limit"}
#: Losses for which the infinitesimal jackknife defines ε(S) (``stages.linear_response_curve``).
IJ_LOSSES = ("square",)
#: S/N of the Monte-Carlo points of the learning curve, and the finer grid of the theory curve.
MC_GRID = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
THEORY_GRID = (0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)
#: Bin width of boston's histograms (Fig. 5); other targets get 0.2 · sd(y)/sd(boston's target) (``scaled_bin_width``).
BIN_WIDTH = PAPER_BIN_WIDTH
#: Most rows of a CSV (uploaded or of the data directory) the pages take: every change of a control solves the
#: ADATAP theory (an N × N fixed point, ~8 N² bytes per matrix) on the server's event loop. Measured on the 2-core
#: machine: N = 1000 rows, 13 inputs: kernel matrix 0.06 s, one ADATAP solve 0.1-0.24 s (5-9 iterations, peak
#: 33 MB); N = 1500: 0.37-0.46 s, N = 2000: 0.42 s and 132 MB. A larger file is refused before any work, with the
#: offer of a random subsample of MAX_ROWS rows (``subsample``).
MAX_ROWS = 1000
#: Most rows of the low-rank mode, which takes data of more than MAX_ROWS rows from the server (diamonds, a CSV of the
#: data directory; an upload keeps MAX_ROWS): K ≈ ΦΦᵀ of rank m (``rank``), O(N m²) time and O(N m) memory, never an
#: N × N matrix. The theory holds about three N × m arrays: 3 × 8 × 60,000 × 512 bytes = 0.74 GB at the largest rank,
#: for one session of a server the class shares (diamonds: 53,940 rows; the command line takes 200,000).
LOW_RANK_ROWS = 60_000
#: Limits of reading a CSV of the server's data folder (an upload keeps ``uploads.MAX_UPLOAD_*``): the server's own files
#: may hold LOW_RANK_ROWS rows of up to 33 columns; parsed once per file on the event loop (~1 s at 2,000,000
#: values), then shared by every session.
DATA_DIR_LIMITS = {"max_bytes": 40_000_000, "max_rows": LOW_RANK_ROWS, "max_values": 2_000_000}
#: Bounds of the rank m of the low-rank mode (``rank``): below 16 features the kernel is too coarse to compare
#: anything; one ADATAP solve costs ~N m² (diamonds, 2 cores: 6.6 s at m = 256, about 4 × that at 512).
RANK_BOUNDS = (16, 512)
#: S/N of the theory and Monte-Carlo curves of the low-rank mode: five solves of ~7 s each on diamonds at m = 256
#: (THEORY_GRID would take 15), and Monte-Carlo at each of them.
LOW_RANK_GRID = (0.25, 0.5, 1.0, 2.0, 4.0)
#: Most input columns of a CSV: the kernel matrix costs N² × columns (0.1 s at MAX_ROWS rows and 100 columns).
MAX_COLUMNS = 100
#: Most Monte-Carlo samples × training inputs of the distribution and test-input jobs: each keeps two (B, N) arrays
#: (bootstrap occupations and predictions, 8 bytes a number), so at most 2 × 8 × 16e6 bytes = 256 MB, the
#: result caches' budget (boston: up to 31,620 samples; 1,000 rows: 16,000).
MAX_MC_VALUES = 16_000_000
#: Seed of the random subsample of a CSV with more than MAX_ROWS rows (the same rows in every session and link).
SUBSAMPLE_SEED = gp_evidence.SUBSAMPLE_SEED
#: Most rows on which the evidence is maximised (a random subsample, seed SUBSAMPLE_SEED, when there are more):
#: each evaluation is a Cholesky factorisation and an inverse of an N × N matrix, ~60-80 of them in all
#: (~1 s at 300 rows on the 2-core machine, ~4 s at 500, ~30 s at 1000).
EVIDENCE_ROWS = gp_evidence.EVIDENCE_ROWS
#: Where the hyperparameters of the current settings come from (``hyperparameter_source``).
HYPERPARAMETERS = ("set", "evidence", "evidence pending")
#: Seed of the generated datasets (toy, teacher), so that a link always shows the same data.
DATA_SEED = datasets.GENERATED_DATA_SEED
OUTPUTS = ("problem", "solution", "theory_curve", "linear_response", "curve_mc", "distribution", "holdout_theory",
            "holdout_ij", "holdout_mc")

# --- what a control's change makes stale (its declaration's ``invalidates``), by the names of the page's stages:
# "evidence": the data the evidence maximum is found on (new data wait for theirs); "kernel start": a new kernel's
# start from the data's scale (a kernel chosen alone starts there, one set with ℓ or σ_f² keeps them);
# "hyperparameters": the values of the kernel and the noise (set by hand, a link or a preset, they replace those of
# the evidence maximum); "kernel function": the values of the kernel function (``GPProblems.kernel_values``);
# "loss parameters": the parameters of the test loss (``loss_params``); "problem", "theory", "mc": the regression
# problem, its theory and its Monte-Carlo; "jobs": which jobs run (the open tab, Monte-Carlo by itself); "figures",
# "<tab> figure": the figures of every tab or of one (a redraw, nothing computed).
#: A change of the data makes everything stale, the evidence maximum the data start from included.
DATA_STAGES = ("evidence", "problem", "theory", "mc")
#: A change of the problem (kernel, noise, held-out rows, rank) makes its theory and Monte-Carlo stale.
PROBLEM_STAGES = ("problem", "theory", "mc")
#: A change of a value of the kernel function makes the problem stale, and the hyperparameters chosen by evidence.
KERNEL_STAGES = ("kernel function", "hyperparameters", *PROBLEM_STAGES)
#: A change of S/N or of the loss makes the theory and the Monte-Carlo stale.
THEORY_STAGES = ("theory", "mc")
#: The stages a refresh computes (the state watches the controls of these to refresh).
REFRESH_STAGES = (*PROBLEM_STAGES, "jobs")
#: The stages whose controls are behind the numbers of the exports (their settings JSON).
COMPUTED_STAGES = PROBLEM_STAGES


def is_csv(state) -> bool:
    """Whether the data are a CSV (an upload or a file of the data directory): a target to pick, a subsample."""
    return state.dataset not in REGRESSION_DATASETS


def fits_ard(state) -> bool:
    """Whether ``ard`` applies: data that start from their evidence maximum (a CSV, diamonds), an se kernel."""
    return (is_csv(state) or state.dataset in FITTED_DATASETS) and state.kernel == "se"


def kernel_is(name: str):
    """``applies`` of a value of the kernel ``name`` only (l² of the paper kernel, α of rq, ...)."""
    return lambda state: state.kernel == name


def kernel_is_not(name: str):
    """``applies`` of a value of every kernel but ``name`` (ℓ and σ_f² of every kernel but the paper's)."""
    return lambda state: state.kernel != name


def loss_is(name: str):
    """``applies`` of a parameter of the loss ``name`` only (ε and β of the ε-insensitive loss)."""
    return lambda state: state.loss == name


#: Errors a user can cause with the controls; they become a message in the page, never a traceback.
EXPECTED_ERRORS = (replica.ConvergenceError, np.linalg.LinAlgError, FloatingPointError, ValueError,
                   OSError, IndexError)

