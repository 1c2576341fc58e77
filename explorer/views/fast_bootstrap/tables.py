"""Tables and text of the fast-bootstrap view ([LSWV05]): Table 1's quantities per method, every curve on one
complexity axis and a one-paragraph summary, from what
:class:`~explorer.views.fast_bootstrap.state.FastBootstrapState` holds."""

from __future__ import annotations

import numpy as np
import pandas as pd

from explorer.fast_bootstrap import experiments as fe
from explorer.views.fast_bootstrap.state import COMPLEXITY, MODEL_LABELS, FastBootstrapState

__all__ = ["CURVE_COLUMNS", "LOO_METHOD", "SUMMARY_COLUMNS", "curve_frame", "summary", "summary_display",
           "summary_frame"]

#: Columns of the summary table and of the curves CSV.
SUMMARY_COLUMNS = ["method", "selected", "F", "df", "p_value", "degree", "replications", "grid_points",
                   "bootstrap_models", "models_trained", "gain", "seconds"]
CURVE_COLUMNS = ["complexity", "apparent_error", "full_optimism", "full_optimism_se", "full_generalization_error",
                 "fast_optimism", "fast_generalization_error", "fast_sample_optimism", "fast_sample_se",
                 "replica_optimism", "loo_generalization_error"]
#: The summary's name of the LS-SVM's exact leave-one-out (a method without bootstrap, F test or refits).
LOO_METHOD = "leave-one-out"


def _seconds(res: fe.BootstrapComparison, part: str) -> float:
    return float(res.seconds.get("apparent", 0.0) + res.seconds.get(part, np.nan))


def summary_frame(state: FastBootstrapState) -> pd.DataFrame:
    """One row per method: selected complexity, the F test (fast), models trained, gain, seconds (eq. 7 incl.);
    for the LS-SVM also the exact leave-one-out over the full grid (its selected γ, no models trained, its own
    seconds)."""
    res = state.comparison
    rows = []
    if res is not None:
        f, fast = res.fast.f_test, res.fast
        rows.append({"method": "fast bootstrap", "selected": fast.selected, "F": f.F, "df": f"{f.df_num}, {f.df_den}",
                     "p_value": f.p_value, "degree": fast.degree, "replications": fast.replications,
                     "grid_points": fast.sample_grid.size, "bootstrap_models": fast.bootstrap_models,
                     "models_trained": fast.models_trained, "gain": np.nan if res.gain is None else res.gain,
                     "seconds": _seconds(res, "fast")})
        if res.full is not None:
            full = res.full
            rows.append({"method": "full bootstrap", "selected": full.selected, "F": np.nan, "df": "",
                         "p_value": np.nan, "degree": np.nan, "replications": full.replications,
                         "grid_points": full.grid.size, "bootstrap_models": full.bootstrap_models,
                         "models_trained": full.models_trained, "gain": np.nan, "seconds": _seconds(res, "full")})
        if res.loo is not None:
            rows.append({"method": LOO_METHOD, "selected": res.loo.selected, "F": np.nan, "df": "", "p_value": np.nan,
                         "degree": np.nan, "replications": np.nan, "grid_points": res.loo.grid.size,
                         "bootstrap_models": 0, "models_trained": 0, "gain": np.nan,
                         "seconds": float(res.seconds.get("loo", np.nan))})
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def summary_display(state: FastBootstrapState) -> pd.DataFrame:
    """:func:`summary_frame` as text, one column per method and one row per quantity (fits the page)."""
    def text(value) -> str:
        if isinstance(value, (float, np.floating)):
            return "" if not np.isfinite(value) else f"{value:.4g}"
        return str(value)
    frame = summary_frame(state)
    if frame.empty:
        return pd.DataFrame(columns=["fast bootstrap", "full bootstrap"])
    frame = frame.set_index("method").T
    frame.index.name = frame.columns.name = None
    return frame.apply(lambda column: column.map(text))


def curve_frame(state: FastBootstrapState) -> pd.DataFrame:
    """Every curve on the union of the full, reduced and replica grids (NaN where a curve has no value)."""
    res = state.comparison
    if res is None:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    fast = res.fast
    parts = [pd.DataFrame({"complexity": fast.grid, "apparent_error": fast.apparent_error,
                           "fast_optimism": fast.optimism, "fast_generalization_error": fast.generalization_error}),
             pd.DataFrame({"complexity": fast.sample_grid, "fast_sample_optimism": fast.sample_optimism,
                           "fast_sample_se": fast.sample_se})]
    if res.full is not None:
        parts.append(pd.DataFrame({"complexity": res.full.grid, "full_optimism": res.full.optimism,
                                   "full_optimism_se": res.full.optimism_se,
                                   "full_generalization_error": res.full.generalization_error}))
    if res.replica is not None:
        parts.append(pd.DataFrame({"complexity": res.replica.grid, "replica_optimism": res.replica.optimism}))
    if res.loo is not None:
        parts.append(pd.DataFrame({"complexity": res.loo.grid,
                                   "loo_generalization_error": res.loo.generalization_error}))
    frame = parts[0]
    for part in parts[1:]:
        frame = frame.merge(part, on="complexity", how="outer")
    return frame.sort_values("complexity", kind="stable").reindex(columns=CURVE_COLUMNS).reset_index(drop=True)


def summary(state: FastBootstrapState) -> str:
    """One paragraph on the data, the selections, the F test and the replica theory."""
    data, res = state.data, state.comparison
    if data is None:
        return f"**{state.dataset}** · {MODEL_LABELS[state.model]}"
    parts = [f"**{data.name}**: N = {data.n} examples, {data.d} input(s) · {MODEL_LABELS[state.model]}, "
             f"{COMPLEXITY[state.model]}"]
    if res is not None:
        f = res.fast.f_test
        log = " in log q" if res.fast.log_complexity else ""
        verdict = "kept" if f.accepted else "rejected"
        parts.append(f"fast bootstrap selects **{res.fast.selected:.4g}** (H0 order κ0 = {f.kappa0} {verdict}: "
                     f"F({f.df_num}, {f.df_den}) = {f.F:.3g}, p = {f.p_value:.3g}; degree {res.fast.degree}{log})")
        if res.full is not None:
            parts.append(f"full bootstrap selects **{res.full.selected:.4g}**; the fast one trains "
                         f"{res.gain:.1%} fewer models")
        if res.loo is not None:
            parts.append(f"exact leave-one-out selects **{res.loo.selected:.4g}** (no refits)")
        if res.replica is not None:
            ok = "converged" if res.replica.converged.all() else "⚠ not converged everywhere"
            parts.append(f"replica theory at {res.replica.grid.size} values of γ without refits ({ok})")
    return " · ".join(parts)

