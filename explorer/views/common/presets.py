""""Reproduce a figure": presets that set every control a figure or table of a seed paper needs.

A :class:`Preset` is a stored link: the tab it opens (a name of :data:`~explorer.views.common.links.PAGE_TITLES`)
and, per state, the values it sets, under the prefixes the URL uses (``""`` the Gaussian-process state, ``svm_``,
``sel_``, ``selx_`` the model-selection Experiments, ``fb_``). :func:`apply_preset` sets them with the link's own
setter (:func:`~explorer.views.common.links.apply_query`, the :data:`~explorer.views.common.links.LEADING` choices
first), starts the jobs that otherwise wait for a button, and opens the tab. The presets work on states, never on
widgets: a tab whose view is not built yet shows the preset's values when it is first opened.

Sample counts are smaller than the papers' so that each preset's jobs finish within a minute on the 2-core machine
the app was developed on (``seconds``, measured with ``benchmarks/bench_presets.py``); every description says
which counts are used and how they differ from the paper's. Where the paper prints numbers, ``numbers`` lists them
(typed from the paper's text, with where they are printed) beside a function that reads ours from the states;
:func:`comparison_frame` puts them side by side and :class:`PresetMenu` shows that table under the header.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pandas as pd
import panel as pn
import param

from explorer.views.common.links import PAGE_TITLES, Linked, _states, apply_query

__all__ = [
    "MENU_LABEL",
    "PRESETS",
    "PRESET_PREFIXES",
    "PaperNumber",
    "Preset",
    "PresetError",
    "PresetMenu",
    "apply_preset",
    "comparison_frame",
    "comparison_text",
    "matches",
    "page_states",
    "page_tab_opener",
    "preset",
    "preset_values",
]

#: The prefix of each state a preset may set (as the page URL names them).
PRESET_PREFIXES = {"": "Gaussian process", "svm_": "SVM bootstrap", "sel_": "Model selection",
                   "selx_": "Model selection, Experiments", "fb_": "Fast bootstrap"}
#: The label of the header menu.
MENU_LABEL = "Reproduce a figure"
#: What "ours" says while the states have not computed a number yet.
PENDING = "… (computing)"

States = Mapping[str, param.Parameterized]


class PresetError(ValueError):
    """A preset that names no known preset or a state the page does not have, or a value a state refuses."""


@dataclass(frozen=True)
class PaperNumber:
    """A number the paper prints, where it prints it, and how to read ours from the states.

    ``paper`` is the text as printed ("86.2 %"), ``value`` its number (None for a statement), ``where`` the place
    in the paper (section, figure or table), ``ours`` a function of the states returning our number as text (None
    while it is not computed), or None where the paper's number has no counterpart the app computes.
    """

    quantity: str
    paper: str
    value: float | None
    where: str
    ours: Callable[[States], str | None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Preset:
    """The settings that reproduce one figure or table of a seed paper.

    ``settings`` maps a state prefix (:data:`PRESET_PREFIXES`) to the values it sets; ``tab`` is the tab opened
    (:data:`~explorer.views.common.links.PAGE_TITLES`); ``run`` the prefixes whose waiting jobs are started
    (:meth:`~explorer.views.common.jobs.BackgroundJobs.run`); ``seconds`` the time its jobs took here (caches
    empty, 2 cores shared with other work; None: not measured yet); ``numbers`` the paper's printed numbers, empty when the figure prints none (the description
    then says so).
    """

    key: str
    name: str
    reproduces: str
    tab: str
    settings: Mapping[str, Mapping[str, object]]
    description: str
    seconds: float | None
    numbers: tuple[PaperNumber, ...] = ()
    run: tuple[str, ...] = ()


# ------------------------------------------------------------------------------------ reading our numbers


def _percent(x: float) -> str:
    return f"{x:.1%}"


def _l1(what: str) -> Callable[[States], str | None]:
    """Our L1 summary of the Gaussian-process state's distribution comparison (seed 000 Fig. 5)."""
    def read(states: States) -> str | None:
        dist = states[""].distribution
        if dist is None:
            return None
        value = getattr(dist.l1, what)
        return f"{value:.4f}" if what == "max" else _percent(value)
    return read


def _field_p(which: str) -> Callable[[States], str | None]:
    """p(−1|x) of the SVM state's field at the shown test input, Monte-Carlo or theory (seed 004 Fig. 1 right)."""
    def read(states: States) -> str | None:
        s = states["svm_"]
        if s.field is None:
            return None
        j = min(s.index, s.field.theory_mean.size - 1)
        if which == "mc":
            return f"{s.field.mc_p_negative[j]:.3f} ± {s.field.mc_p_negative_se[j]:.3f} ({s.dataset}, test input {j})"
        return f"{s.field.theory_p_negative[j]:.3f} ({s.dataset}, test input {j})"
    return read


def _fb(part: str, what: str) -> Callable[[States], str | None]:
    """A number of the fast-bootstrap state's comparison: ``part`` "fast" or "full", ``what`` "selected",
    "F", "models" (J·Q) or "gain" (Table 1's gain, bootstrap models only)."""
    def read(states: States) -> str | None:
        res = states["fb_"].comparison
        curve = None if res is None else (res.fast if part == "fast" else res.full)
        if curve is None:
            return None
        if what == "selected":
            return f"{curve.selected:g}"
        if what == "F":
            f = curve.f_test
            return f"F({f.df_num},{f.df_den}) = {f.F:.4g} (p = {f.p_value:.3g})"
        if what == "models":
            return str(int(curve.bootstrap_models))
        return None if res.paper_gain is None else _percent(res.paper_gain)
    return read


def _experiment(what: str) -> Callable[[States], str | None]:
    """A number of the model-selection Experiments state's result (seed 001)."""
    def read(states: States) -> str | None:
        res = states["selx_"].result
        if res is None:
            return None
        if what == "evidence_hit_rate":
            d = res.as_dict() if hasattr(res, "keys") else {"keys": ()}
            if "evidence" not in d["keys"]:
                return None
            rates = [row[d["keys"].index("evidence")] for row in d["hit_rate"]]
            return ", ".join(f"{s}: {_percent(r)}" for s, r in zip(d["settings"], rates))
        if not hasattr(res, "betas"):
            return None
        finite = [(m, b) for b, m in zip(res.betas.tolist(), res.mean.tolist()) if math.isfinite(m)]
        return f"β = {max(finite)[1]:.3g}" if finite else None
    return read


# ------------------------------------------------------------------------------------ the presets

_BOSTON = {"dataset": "boston", "standardize": False, "kernel": "paper", "l2": 73.54, "noise_var": 0.01,
           "seed": 0, "auto_mc": True}
_SEED000 = "seed 000 (Malzahn & Opper, JMLR 2005), §5"
_SEED002 = "seed 002 (Lendasse et al., Neurocomputing 2005), §5"
_SEED004 = "seed 004 (Malzahn & Opper, NIPS 2003), §6"
_SEED001 = "seed 001 (Fischer, ETH master thesis 2016), §5"


def _gp_presets() -> tuple[Preset, ...]:
    l1_where = f"{_SEED000}, text on Fig. 5"
    return (
        Preset("000-fig1-left", "Seed 000 Fig. 1 left: square-loss learning curve, boston", "seed 000, Fig. 1 left",
               "curve", {"": {**_BOSTON, "tab": "curve", "loss": "square", "curve_mc_samples": 300}},
               "Bootstrap square loss ε(S) on boston (N = 506), RBF with l² = 73.54 on sd-scaled inputs, σ² = 0.01: "
               "ADATAP, approximate ADATAP, VG and MF against Monte-Carlo at S/N = 0.25-4. Monte-Carlo: 300 "
               "bootstrap samples per S/N (the paper does not state its count). The figure prints no numbers "
               "(curves only).", 15.0),
        Preset("000-fig1-right", "Seed 000 Fig. 1 right: ε-insensitive learning curve, boston",
               "seed 000, Fig. 1 right", "curve",
               {"": {**_BOSTON, "tab": "curve", "loss": "eps-insensitive", "eps": 0.1, "beta": 0.1,
                     "curve_mc_samples": 300}},
               "Bootstrap ε-insensitive loss (ε = 0.1, β = 0.1, eq. 46) on boston, otherwise as Fig. 1 left; 300 "
               "Monte-Carlo samples per S/N. The paper's second data set, pumadyn-8nm with l² = 3 on "
               "variance-scaled inputs, is not shipped (and the app's paper kernel scales by the sd). The figure "
               "prints no numbers.", 14.0),
        Preset("000-fig2", "Seed 000 Fig. 2: mean and variance at 50 test inputs, boston", "seed 000, Fig. 2",
               "holdout", {"": {**_BOSTON, "tab": "holdout", "holdout": 50, "s_over_n": 1.0, "mc_samples": 5000}},
               "Bootstrap mean and variance of the prediction at the first 50 rows of boston, held out; D0 is the "
               "other N = 456 rows, S = N. Monte-Carlo: one run of 5000 samples (the paper: 5 runs of 5000, "
               "mean ± sd of the 5 averages). The figure prints no numbers.", 13.0),
        Preset("000-fig3-4", "Seed 000 Figs. 3-4: predictive distribution at one input, boston",
               "seed 000, Figs. 3 and 4", "distribution",
               {"": {**_BOSTON, "tab": "distribution", "s_over_n": 1.0, "mc_samples": 5000, "input_index": 0}},
               "Bootstrap distribution of the GP prediction at a training input of boston (N = 506, S = N): "
               "Monte-Carlo histogram against the theory's Poisson mixture (eq. 60); 5000 Monte-Carlo samples "
               "(the paper does not state its count, nor which inputs it shows). Pick inputs with the scatter or "
               "the L1 map's worst inputs. The paper's percentages are by eye; the L1 map preset compares "
               "measured ones.",
               14.0,
               (PaperNumber("inputs where the theory matches the histogram (by eye)", "80 %", 0.80,
                            f"{_SEED000}, Fig. 3 caption"),
                PaperNumber("inputs where the theory underestimates structure (by eye)", "20 %", 0.20,
                            f"{_SEED000}, Fig. 4 caption"),
                PaperNumber("atypical inputs, broad theory vs structured truth (by eye)", "2 %", 0.02,
                            f"{_SEED000}, Fig. 4 caption"))),
        Preset("000-fig5", "Seed 000 Fig. 5: L1 distances at every input, boston", "seed 000, Fig. 5", "l1",
               {"": {**_BOSTON, "tab": "l1", "s_over_n": 1.0, "mc_samples": 5000}},
               "L1 distance between the Monte-Carlo histogram and the theory (bins Δh = 0.2) at all 506 inputs of "
               "boston, S = N; 5000 Monte-Carlo samples (the paper does not state its count). Fewer samples "
               "make noisier histograms and larger L1: the L1 tab shows the noise floor of this count.",
               19.0,
               (PaperNumber("inputs with L1 ≤ 0.1", "86.2 %", 0.862, l1_where, _l1("frac_le_0_1")),
                PaperNumber("inputs with L1 ≥ 0.2", "2 %", 0.02, l1_where, _l1("frac_ge_0_2")),
                PaperNumber("largest L1", "0.3109", 0.3109, l1_where, _l1("max")))),
    )


def _svm_presets() -> tuple[Preset, ...]:
    grid = [0.25, 0.5, 1.0, 1.5, 2.0, 3.0]
    curve = {"curve_grid": grid, "curve_mc_samples": 100, "seed": 0, "auto_mc": True}
    where = f"{_SEED004}, inset of Fig. 1 right"
    left = "The figure prints no numbers (curves only). The paper tuned one width v_k per input (values not " \
           "printed); the app uses one width L = √10 on standardised inputs. 100 Monte-Carlo SVMs per S/N " \
           "(the paper does not state its count)."
    return (
        Preset("004-fig1-crabs", "Seed 004 Fig. 1 left: SVM learning curve, crabs", "seed 004, Fig. 1 left",
               "svm", {"svm_": {"dataset": "crabs", "lengthscale": 3.16228, **curve}},
               f"Bootstrap classification error ε(S) of the hard-margin SVM on crabs (N = 200): replica theory "
               f"(eq. 17) against Monte-Carlo at S/N = 0.25-3, with the S → ∞ leave-one-out limits. {left} The paper's other "
               f"sets (wisconsin, pima, sonar) take minutes here at these counts: choose them in the SVM tab.", 8.0),
        Preset("004-fig1-right", "Seed 004 Fig. 1 right: field at a test input (upload sonar.csv)",
               "seed 004, Fig. 1 right", "svm",
               {"svm_": {"lengthscale": 3.16228, "holdout": 20, "s_over_n": 1.0, "mc_samples": 1000, "seed": 0,
                         "auto_mc": True, "test_index": 0}},
               "Bootstrap distribution of the internal field at held-out test inputs, S = N: the paper holds out "
               "20 of the 208 Sonar rows (N = 188). Sonar is not shipped: upload sonar.csv (UCI) in the SVM tab; "
               "this preset keeps the chosen data set. The paper shows one atypical bimodal test input and does "
               "not say which; compare its p(−1|x) with ours at the inputs of the table. 1000 Monte-Carlo SVMs "
               "(the paper does not state its count).", 16.0,
               (PaperNumber("p(−1|x), simulation", "0.376", 0.376, where, _field_p("mc")),
                PaperNumber("p(−1|x), theory", "0.405", 0.405, where, _field_p("theory")))),
    )


def _selection_presets() -> tuple[Preset, ...]:
    small = {"repetitions": 4, "n_partitions": 8, "seed": 0}
    where = f"{_SEED001}"
    return (
        Preset("001-exp2", "Seed 001 Experiment 2: criteria along the lengthscale", "seed 001, Figs. 5.3-5.5",
               "selection", {"sel_": {"subpanel": "experiments"},
                             "selx_": {"experiment": "curves", "parameter": "lengthscale", **small}},
               "Every criterion along the teacher's lengthscale (squared-exponential teacher, ℓ = 1, σ_f = 1, "
               "σ_n = 0.1, N = 64), averaged over 4 teacher draws with J = 8 ASC partitions (the thesis: 256 "
               "draws, one objective function each). The figures print no numbers.", 18.0, run=("selx_",)),
        Preset("001-exp3", "Seed 001 Experiment 3: test error of each criterion's hyperparameters",
               "seed 001, Figs. 5.6-5.7", "selection",
               {"sel_": {"subpanel": "experiments"},
                "selx_": {"experiment": "hyperparameters", "data": "teacher", "teacher": "squared_exponential",
                          "noise_std": 0.1, "n_objects": 4, "n_restarts": 4, "max_iter": 16, **small}},
               "Test SMSE of the hyperparameters each criterion selects (N = 64 teacher draws, M = 4 ASC objects); "
               "4 repetitions with J = 8 partitions and 4 restarts (the thesis: 256 repetitions, J = 32, 16 "
               "restarts). The figures print no numbers (box plots).", 35.0, run=("selx_",)),
        Preset("001-exp6", "Seed 001 Experiment 6: functional forms ranked, optimised by LOO-CV",
               "seed 001, Fig. 5.10", "selection",
               {"sel_": {"subpanel": "experiments"},
                "selx_": {"experiment": "functional-forms", "data": "teacher", "select_by": "loo",
                          "teachers": ["squared_exponential", "periodic"], "n_objects": 8, "n_restarts": 2,
                          "max_iter": 16, "repetitions": 2, "n_partitions": 4, "seed": 0}},
               "Four students (se, rq, exponential, periodic) optimised by LOO-CV on draws of the squared-exponential "
               "and periodic teachers, ranked by each criterion; 2 repetitions per teacher, J = 4, 2 restarts (the "
               "thesis: 256, N = 128, J = 32, all four teachers). The thesis prints no numbers; its text says "
               "maximum evidence selects the right model each time.", 16.0,
               (PaperNumber("maximum evidence ranks the teacher's form first", "each time (text)", 1.0,
                            f"{where}, Experiment 6 text", _experiment("evidence_hit_rate")),),
               run=("selx_",)),
        Preset("001-exp10", "Seed 001 Experiment 10: Boltzmann ASC I_β against β", "seed 001, Fig. 5.15a",
               "selection", {"sel_": {"subpanel": "experiments"},
                             "selx_": {"experiment": "beta", "teacher": "squared_exponential", "n_objects": 8,
                                       "repetitions": 8, "seed": 0}},
               "Boltzmann ASC mutual information I_β against β at the squared-exponential teacher's "
               "hyperparameters, 8 draws (the thesis: 256). The thesis prints no numbers; its text says the "
               "mean's optimum is close to β = 1.", 1.0,
               (PaperNumber("β at the maximum of the mean I_β", "close to 1 (text)", 1.0,
                            f"{where}, Experiment 10 text", _experiment("beta_peak")),),
               run=("selx_",)),
    )


def _fb_numbers(table: str, rows: Mapping[str, tuple[str, float | None]]) -> tuple[PaperNumber, ...]:
    readers = {"selected (full bootstrap)": _fb("full", "selected"), "selected (fast bootstrap)": _fb("fast", "selected"),
               "experiments J·Q (full)": _fb("full", "models"), "experiments J·Q (fast)": _fb("fast", "models"),
               "gain": _fb("full", "gain"), "Fisher's F (fast)": _fb("fast", "F")}
    return tuple(PaperNumber(q, text, value, f"{_SEED002}, {table}", readers[q]) for q, (text, value) in rows.items())


def _fb_presets() -> tuple[Preset, ...]:
    toy = {"dataset": "toy", "n_points": 200, "seed": 0, "kappa0": 1, "kappa1": 2, "with_full": True,
           "auto_run": True}
    laser = {"dataset": "time series CSV", "series_csv": "santafe_laser_A.csv", "series_column": "value", "lags": 6,
             "seed": 0, "kappa0": 1, "kappa1": 2, "with_full": False, "with_replica": False, "auto_run": True}
    note2 = ("Santa Fe laser A is not shipped: the preset reads santafe_laser_A.csv (columns t, value) from the "
             "server's data folder (`explorer serve --data-dir FOLDER`); without it, upload the file in the Fast "
             "bootstrap tab and apply the preset again. Only the fast bootstrap runs, as in the paper.")
    return (
        Preset("002-t1-mlp", "Seed 002 Table 1: MLP on the toy function", "seed 002, Table 1 (MLP), Figs. 2-3",
               "fastboot", {"fb_": {**toy, "model": "mlp", "full_start": 1, "full_stop": 13, "full_step": 1,
                                    "full_replications": 10, "fast_start": 1, "fast_stop": 13, "fast_step": 3,
                                    "fast_replications": 10, "log_complexity": False, "max_epochs": 200,
                                    "n_init": 3}},
               "MLP, 1-13 hidden units, on 200 points of eq. (19). Fast bootstrap as Table 1 (1-13 by 3, 10 "
               "replications); the full bootstrap with 10 replications per size instead of 100 (100 take "
               "minutes here), so its J·Q and the gain differ from the paper's. Measured here: 30 s.", 30.0,
               _fb_numbers("Table 1 and text", {"selected (full bootstrap)": ("6", 6.0),
                                                "selected (fast bootstrap)": ("6", 6.0),
                                                "experiments J·Q (full)": ("1300", 1300.0),
                                                "experiments J·Q (fast)": ("50", 50.0),
                                                "gain": ("96.2 %", 0.962),
                                                "Fisher's F (fast)": ("F(1,2) = 3.2545", 3.2545)}),
               run=("fb_",)),
        Preset("002-t1-rbfn", "Seed 002 Table 1: RBFN on the toy function", "seed 002, Table 1 (RBFN), Figs. 4-5",
               "fastboot", {"fb_": {**toy, "model": "rbfn", "full_start": 10, "full_stop": 19, "full_step": 1,
                                    "full_replications": 100, "fast_start": 10, "fast_stop": 19, "fast_step": 3,
                                    "fast_replications": 10, "log_complexity": False, "wsf": 8.0}},
               "RBFN, 10-19 kernels, on 200 points of eq. (19), at Table 1's grids and replications (100 full, 10 "
               "fast). The paper does not state its width factor; the app's default WSF = 8.", 16.0,
               _fb_numbers("Table 1 and text", {"selected (full bootstrap)": ("17", 17.0),
                                                "selected (fast bootstrap)": ("16", 16.0),
                                                "experiments J·Q (full)": ("1000", 1000.0),
                                                "experiments J·Q (fast)": ("40", 40.0),
                                                "gain": ("96 %", 0.96),
                                                "Fisher's F (fast)": ("F(1,1) = 16.3085", 16.3085)}),
               run=("fb_",)),
        Preset("002-t1-lssvm", "Seed 002 Table 1: LS-SVM on the toy function",
               "seed 002, Table 1 (LS-SVM), Figs. 6-7", "fastboot",
               {"fb_": {**toy, "model": "ls-svm", "full_start": 5, "full_stop": 50, "full_step": 0.1,
                        "full_replications": 100, "fast_start": 5, "fast_stop": 50, "fast_step": 5,
                        "fast_replications": 10, "log_complexity": True, "lengthscale": 0.0, "with_replica": True,
                        "replica_points": 46}},
               "LS-SVM, γ from 5 to 50, on 200 points of eq. (19), at Table 1's grids and replications (100 full, 10 "
               "fast), F test in log γ; plus the replica theory's optimism at 46 values of γ. The paper does not "
               "state its kernel width; the app uses ℓ = 0.085 (maximum evidence on such data).", 5.0,
               _fb_numbers("Table 1 and text", {"selected (full bootstrap)": ("12", 12.0),
                                                "selected (fast bootstrap)": ("15", 15.0),
                                                "experiments J·Q (full)": ("45100", 45100.0),
                                                "experiments J·Q (fast)": ("100", 100.0),
                                                "gain": ("99.8 %", 0.998),
                                                "Fisher's F (fast)": ("F(1,7) = 0*", 0.0)}),
               run=("fb_",)),
        Preset("002-t2-mlp", "Seed 002 Table 2: MLP on the Santa Fe laser", "seed 002, Table 2 (MLP), Figs. 9-10",
               "fastboot", {"fb_": {**laser, "model": "mlp", "fast_start": 4, "fast_stop": 9, "fast_step": 1,
                                    "fast_replications": 10, "log_complexity": False, "max_epochs": 100,
                                    "n_init": 2}},
               f"MLP, 4-9 hidden units, NAR(6) on the Santa Fe laser, fast bootstrap at Table 2's grid and 10 "
               f"replications. {note2} The paper gives no MLP epochs or restarts: the preset uses 100 epochs and 2 "
               f"restarts (measured here: 39 s; the app's defaults, 200 and 3, took 466 s on these 994 points).", 39.0,
               _fb_numbers("Table 2", {"experiments J·Q (fast)": ("60", 60.0),
                                       "Fisher's F (fast)": ("F(1,3) = 0.2002", 0.2002)}),
               run=("fb_",)),
        Preset("002-t2-rbfn", "Seed 002 Table 2: RBFN on the Santa Fe laser", "seed 002, Table 2 (RBFN), Figs. 11-12",
               "fastboot", {"fb_": {**laser, "model": "rbfn", "fast_start": 60, "fast_stop": 140, "fast_step": 20,
                                    "fast_replications": 20, "log_complexity": False, "wsf": 8.0}},
               f"RBFN, 60-140 kernels, NAR(6) on the Santa Fe laser, fast bootstrap at Table 2's grid and 20 "
               f"replications. {note2}", 20.0,
               _fb_numbers("Table 2", {"experiments J·Q (fast)": ("100", 100.0),
                                       "Fisher's F (fast)": ("F(1,2) = 1.6472", 1.6472)}),
               run=("fb_",)),
        Preset("002-t2-lssvm", "Seed 002 Table 2: LS-SVM on the Santa Fe laser",
               "seed 002, Table 2 (LS-SVM), Figs. 13-14", "fastboot",
               {"fb_": {**laser, "model": "ls-svm", "fast_start": 15, "fast_stop": 105, "fast_step": 5,
                        "fast_replications": 10, "log_complexity": True, "lengthscale": 0.0}},
               f"LS-SVM, γ from 15 to 105 by 5 (Table 2; the paper's text says [25-1000]), NAR(6) on the Santa Fe "
               f"laser, fast bootstrap with 10 replications, F test in log γ. {note2}", 7.0,
               _fb_numbers("Table 2", {"experiments J·Q (fast)": ("190", 190.0),
                                       "Fisher's F (fast)": ("F(1,16) = 0*", 0.0)}),
               run=("fb_",)),
    )


#: Every preset, in the order of the menu.
PRESETS: tuple[Preset, ...] = (*_gp_presets(), *_svm_presets(), *_selection_presets(), *_fb_presets())


def preset(key: str) -> Preset:
    """The preset named ``key``."""
    found = {p.key: p for p in PRESETS}
    if key not in found:
        raise PresetError(f"There is no preset {key!r}; the presets are {', '.join(found)}.")
    return found[key]


# ------------------------------------------------------------------------------------ applying a preset


def preset_values(p: Preset, states: States) -> dict[str, dict[str, object]]:
    """The values of the states that ``p`` sets, per prefix, as the states hold them now."""
    return {prefix: {name: getattr(states[prefix], name) for name in values} for prefix, values in p.settings.items()}


def matches(p: Preset, states: States) -> bool:
    """Whether the states still hold every value ``p`` sets (the real numbers as the states round them)."""
    return all(_same(states[prefix].param[name], value, getattr(states[prefix], name))
               for prefix, values in p.settings.items() for name, value in values.items())


def _same(parameter: param.Parameter, wanted, held) -> bool:
    if isinstance(wanted, float) and isinstance(held, (int, float)):
        return math.isclose(wanted, held, rel_tol=1e-5)
    if isinstance(parameter, param.ListSelector):
        return sorted(wanted) == sorted(held)
    return wanted == held


def apply_preset(p: Preset | str, states: States, open_tab: Callable[[str], None] | None = None) -> Preset:
    """Set the values of preset ``p`` (or its key) on ``states`` (prefix → state), start the jobs it runs and open
    its tab with ``open_tab(tab)``. Returns the preset.

    Raises
    ------
    PresetError
        If ``p`` is no preset, ``states`` lacks a state it sets, or a state refuses one of its values.
    """
    p = preset(p) if isinstance(p, str) else p
    missing = [PRESET_PREFIXES.get(prefix, prefix) for prefix in p.settings if prefix not in states]
    if missing:
        raise PresetError(f"Preset {p.name!r} sets the {', '.join(missing)} state(s), which this page does not "
                          "have.")
    for prefix, values in p.settings.items():
        linked = Linked(states[prefix], prefix, tuple(values))
        bad = apply_query(linked, {prefix + name: value for name, value in values.items()})
        if bad:
            raise PresetError(f"Preset {p.name!r}: the {PRESET_PREFIXES.get(prefix, prefix)} state refused "
                              f"{', '.join(bad)}. {p.description}")
    for prefix in p.run:
        states[prefix].run()
    if open_tab is not None:
        open_tab(p.tab)
    return p


# ------------------------------------------------------------------------------------ the paper beside ours


def comparison_frame(p: Preset, states: States) -> pd.DataFrame:
    """The paper's printed numbers of ``p`` beside ours, one row each (``ours`` says when it is not computed yet;
    "—" where the paper's number has no counterpart we compute)."""
    rows = []
    for number in p.numbers:
        ours = "—" if number.ours is None else (number.ours(states) or PENDING)
        rows.append({"quantity": number.quantity, "paper": number.paper, "ours": ours, "where": number.where})
    return pd.DataFrame(rows, columns=["quantity", "paper", "ours", "where"])


def comparison_text(p: Preset, states: States) -> str:
    """Markdown shown under the header while ``p`` is active: what it reproduces, its counts and time, the paper's
    numbers beside ours, and a warning once a control differs from the preset."""
    took = "time not measured" if p.seconds is None else f"about {p.seconds:.0f} s on 2 cores"
    head = f"**{MENU_LABEL}: {p.name}** ({p.reproduces}; {took})\n\n{p.description}"
    if not matches(p, states):
        head += ("\n\n⚠ A control has changed since the preset was applied: the figure and the numbers below are no "
                 "longer the preset's.")
    if not p.numbers:
        return head
    frame = comparison_frame(p, states)
    table = "| | paper | ours | where |\n|---|---|---|---|\n" + "\n".join(
        f"| {r.quantity} | {r.paper} | {r.ours} | {r.where} |" for r in frame.itertuples())
    return f"{head}\n\n{table}"


class PresetMenu(pn.viewable.Viewer):
    """The header menu "Reproduce a figure" and the panel that shows the active preset with the paper's numbers.

    ``states`` maps the prefixes of :data:`PRESET_PREFIXES` to the page's states; ``open_tab`` opens a tab by its
    name in :data:`~explorer.views.common.links.PAGE_TITLES`. :attr:`menu` goes into the header, :attr:`panel`
    above the tabs (hidden until a preset is chosen). ``active`` is the key of the preset last applied ("" none).
    """

    active = param.String(default="", label="Active preset", doc="Key of the preset last applied; empty for none.")

    def __init__(self, states: States, open_tab: Callable[[str], None] | None = None, **params):
        super().__init__(**params)
        self.states, self.open_tab = dict(states), open_tab
        usable = [p for p in PRESETS if all(prefix in self.states for prefix in p.settings)]
        self.menu = pn.widgets.MenuButton(label=MENU_LABEL, items=[(p.name, p.key) for p in usable],
                                          color="light", align="center", width=190,
                                          css_classes=["explorer-presets"])
        self.menu.on_click(lambda event: self.choose(event.new) if event.new != MENU_LABEL else None)
        self.text = pn.pane.Markdown("", sizing_mode="stretch_width", css_classes=["explorer-preset-text"])
        self.close = pn.widgets.Button(label="Hide", color="light", width=80,
                                       css_classes=["explorer-preset-hide"])
        self.close.on_click(lambda event: setattr(self, "active", ""))
        self.panel = pn.Column(self.text, self.close, visible=False, sizing_mode="stretch_width",
                               css_classes=["explorer-preset"])
        for state in {id(s): s for s in self.states.values()}.values():
            names = [n for n in (*getattr(state, "_outputs", ()), "error") if n in state.param]
            state.param.watch(self._update, names + [n for n, p_ in state.param.objects().items()
                                                     if n != "name" and (p_.precedence is None or p_.precedence >= 0)])
        self.param.watch(self._update, "active")

    def choose(self, key: str) -> None:
        """Apply the preset ``key`` (an error of the preset is shown in the panel, not raised)."""
        try:
            apply_preset(key, self.states, self.open_tab)
        except PresetError as err:
            self.active = ""
            self.text.object, self.panel.visible = f"⚠ {err}", True
            return
        self.active = key
        self._update()

    def _update(self, *events) -> None:
        if not self.active:
            self.panel.visible = False
            return
        self.text.object = comparison_text(preset(self.active), self.states)
        self.panel.visible = True

    def __panel__(self):
        return pn.Column(self.menu, self.panel)


def page_states(view, others: Mapping[str, object]) -> dict[str, param.Parameterized]:
    """The page's states by link prefix: the GP view's and each other tab's (and the Experiments') state."""
    return {item.prefix: item.state for item in _states(view, others)}


def page_tab_opener(tabs: pn.Tabs) -> Callable[[str], None]:
    """``open_tab`` for a :class:`pn.Tabs` whose tab titles are those of :data:`PAGE_TITLES`."""
    def open_tab(name: str) -> None:
        titles = list(getattr(tabs, "_names", []))
        if PAGE_TITLES[name] in titles:
            tabs.active = titles.index(PAGE_TITLES[name])
    return open_tab
