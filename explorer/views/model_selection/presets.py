"""[Fis16]'s experiments as "Reproduce a figure" presets of the model-selection page."""

from __future__ import annotations

import math
from collections.abc import Callable

from explorer.views.common.state.presets import PaperNumber, Preset, States, percent

_PAPER = "[Fis16] (Fischer, ETH master thesis 2016), §5"


def _experiment(what: str) -> Callable[[States], str | None]:
    """A number of the model-selection Experiments state's result ([Fis16])."""
    def read(states: States) -> str | None:
        res = states["selx_"].result
        if res is None:
            return None
        if what == "evidence_hit_rate":
            d = res.as_dict() if hasattr(res, "keys") else {"keys": ()}
            if "evidence" not in d["keys"]:
                return None
            rates = [row[d["keys"].index("evidence")] for row in d["hit_rate"]]
            return ", ".join(f"{s}: {percent(r)}" for s, r in zip(d["settings"], rates))
        if not hasattr(res, "betas"):
            return None
        finite = [(m, b) for b, m in zip(res.betas.tolist(), res.mean.tolist()) if math.isfinite(m)]
        return f"β = {max(finite)[1]:.3g}" if finite else None
    return read


def _experiment_preset(key: str, name: str, reproduces: str, experiment: dict[str, object], description: str,
                       seconds: float, numbers: tuple[PaperNumber, ...] = ()) -> Preset:
    """A thesis experiment on the model-selection page: the Experiments sub-panel opened with ``experiment`` set
    on its state (``selx_``), whose job the preset starts."""
    return Preset(key, name, reproduces, "selection",
                  {"sel_": {"subpanel": "experiments"}, "selx_": experiment}, description, seconds, numbers,
                  run=("selx_",))


def _selection_presets() -> tuple[Preset, ...]:
    small = {"repetitions": 4, "n_partitions": 8, "seed": 0}
    where = f"{_PAPER}"
    return (
        _experiment_preset(
            "001-exp2", "[Fis16] Experiment 2: criteria along the lengthscale", "[Fis16], Figs. 5.3-5.5",
            {"experiment": "curves", "parameter": "lengthscale", **small},
            "Every criterion along the teacher's lengthscale (squared-exponential teacher, ℓ = 1, σ_f = 1, "
            "σ_n = 0.1, N = 64), averaged over 4 teacher draws with J = 8 ASC partitions (the thesis: 256 "
            "draws, one objective function each). The figures print no numbers.", 18.0),
        _experiment_preset(
            "001-exp3", "[Fis16] Experiment 3: test error of each criterion's hyperparameters",
            "[Fis16], Figs. 5.6-5.7",
            {"experiment": "hyperparameters", "data": "teacher", "teacher": "squared_exponential", "noise_std": 0.1,
             "n_objects": 4, "n_restarts": 4, "max_iter": 16, **small},
            "Test SMSE of the hyperparameters each criterion selects (N = 64 teacher draws, M = 4 ASC objects); "
            "4 repetitions with J = 8 partitions and 4 restarts (the thesis: 256 repetitions, J = 32, 16 "
            "restarts). The figures print no numbers (box plots).", 35.0),
        _experiment_preset(
            "001-exp6", "[Fis16] Experiment 6: functional forms ranked, optimised by LOO-CV", "[Fis16], Fig. 5.10",
            {"experiment": "functional-forms", "data": "teacher", "select_by": "loo",
             "teachers": ["squared_exponential", "periodic"], "n_objects": 8, "n_restarts": 2, "max_iter": 16,
             "repetitions": 2, "n_partitions": 4, "seed": 0},
            "Four students (se, rq, exponential, periodic) optimised by LOO-CV on draws of the squared-exponential "
            "and periodic teachers, ranked by each criterion; 2 repetitions per teacher, J = 4, 2 restarts (the "
            "thesis: 256, N = 128, J = 32, all four teachers). The thesis prints no numbers; its text says "
            "maximum evidence selects the right model each time.", 16.0,
            (PaperNumber("maximum evidence ranks the teacher's form first", "each time (text)", 1.0,
                         f"{where}, Experiment 6 text", _experiment("evidence_hit_rate")),)),
        _experiment_preset(
            "001-exp10", "[Fis16] Experiment 10: Boltzmann ASC I_β against β", "[Fis16], Fig. 5.15a",
            {"experiment": "beta", "teacher": "squared_exponential", "n_objects": 8, "repetitions": 8, "seed": 0},
            "Boltzmann ASC mutual information I_β against β at the squared-exponential teacher's "
            "hyperparameters, 8 draws (the thesis: 256). The thesis prints no numbers; its text says the "
            "mean's optimum is close to β = 1.", 1.0,
            (PaperNumber("β at the maximum of the mean I_β", "close to 1 (text)", 1.0,
                         f"{where}, Experiment 10 text", _experiment("beta_peak")),)),
    )


PRESETS: tuple[Preset, ...] = _selection_presets()
