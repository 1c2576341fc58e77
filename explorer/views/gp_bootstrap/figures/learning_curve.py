"""Fig. 1 of [MO03]: the bootstrap learning curve ε(S) of the theories (ADATAP, approximate ADATAP, VG, MF), the
no-refit approximations (IJ, the leave-one-out limit) and Monte-Carlo, with the table of each method's gap to
Monte-Carlo, the learning curve's CSV table and the status line of its tab. Its layers are patched in place
(:mod:`explorer.views.common.drawing.patching`)."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd

from explorer.views.common.drawing.patching import Layer, overlay
from explorer.views.gp_bootstrap.figures.style import (
    APPROX_COLOR,
    EMPTY,
    ERR_DIM,
    FLAG_COLOR,
    IJ_COLOR,
    LOO_COLOR,
    MC_COLOR,
    MC_SAMPLES_COLUMN,
    MF_COLOR,
    S_COLUMN,
    S_DIM,
    SIZE,
    TEST_COLOR,
    TEST_DIM,
    THEORY_COLOR,
    VG_COLOR,
)
from explorer.views.gp_bootstrap.state import APPROXIMATIONS, IJ_LOSSES, METHODS, GPBootstrapState

__all__ = ["GAP_THRESHOLD", "CURVE_METHODS", "GAP_COLUMNS", "CURVE_COLUMNS", "curve_values", "learning_curve_layers",
           "CURVE_PADDING", "learning_curve_plot", "gap_frame", "large_gaps", "gap_sentence", "gap_table",
           "vg_mf_note", "curve_frame", "gap_element"]

#: | theory − Monte-Carlo | beyond this many Monte-Carlo standard errors is flagged in the learning curves.
GAP_THRESHOLD = 3.0


#: Every curve of the learning-curve figure but Monte-Carlo, by name, with its short label: the theories
#: (``METHODS``) and the no-refit approximations beside them (``APPROXIMATIONS``: IJ, the LOO limit).
CURVE_METHODS = {**METHODS, **APPROXIMATIONS}


#: Columns of :func:`gap_frame`: per curve (``CURVE_METHODS``) the relative gap (method − MC)/MC in % and the
#: gap in Monte-Carlo standard errors (method − MC)/se.
GAP_COLUMNS = [f"gap_{unit}_{method}" for method in CURVE_METHODS for unit in ("pct", "se")]
#: Columns of the learning curve's CSV export.
CURVE_COLUMNS = [S_COLUMN, *CURVE_METHODS, "expected_test_points", "mc_mean", "mc_se", MC_SAMPLES_COLUMN, *GAP_COLUMNS]


#: Style of the theory curves (``METHODS``) in the learning-curve figure.
_CURVE_STYLE = {"theory": {"color": THEORY_COLOR}, "theory_approx": {"color": APPROX_COLOR, "line_dash": "dashdot"},
                "theory_vg": {"color": VG_COLOR, "line_dash": "dashed"},
                "theory_mf": {"color": MF_COLOR, "line_dash": "dotdash"},
                "ij": {"color": IJ_COLOR, "line_dash": "dashed"},
                "loo_limit": {"color": LOO_COLOR, "line_dash": "dotted"}}


_CURVE_LABEL = {"theory": "ADATAP theory", "theory_approx": "approximate ADATAP",
                "theory_vg": "variational Gaussian (VG)", "theory_mf": "mean field (MF)",
                "ij": "linear response (IJ)", "loo_limit": "leave-one-out at σ²N/S"}


def _methods(state: GPBootstrapState) -> tuple[str, ...]:
    """The theory curves of the current loss: all of ``METHODS`` for the square loss, no VG/MF otherwise."""
    theory = state.theory_curve
    if theory is not None:
        return tuple(theory.method_values())
    return tuple(m for m in METHODS if state.loss == "square" or m not in ("theory_vg", "theory_mf"))


def _approximations(state: GPBootstrapState) -> tuple[str, ...]:
    """The no-refit approximations of the current loss: IJ (square loss only) and the LOO limit."""
    lr = state.linear_response
    if lr is not None:
        return tuple(m for m in APPROXIMATIONS if getattr(lr, m) is not None)
    return tuple(m for m in APPROXIMATIONS if state.loss in IJ_LOSSES or m != "ij")


def _curve_names(state: GPBootstrapState) -> tuple[str, ...]:
    """Every curve of the current loss but Monte-Carlo, in the order of ``CURVE_METHODS``."""
    return (*_methods(state), *_approximations(state))


def curve_values(state: GPBootstrapState) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(S/N grid, ε(S)) of every curve computed so far, by name (``CURVE_METHODS``): the theories of
    ``theory_curve`` and the approximations of ``linear_response`` (IJ: square loss only), as the core returned
    them (both on THEORY_GRID)."""
    theory, lr = state.theory_curve, state.linear_response
    out = {m: (theory.s_over_n, v) for m, v in theory.method_values().items()} if theory is not None else {}
    if lr is not None:
        out.update({m: (lr.s_over_n, getattr(lr, m)) for m in APPROXIMATIONS if getattr(lr, m) is not None})
    return out


def learning_curve_layers(state: GPBootstrapState) -> list[Layer]:
    """The layers of :func:`learning_curve_plot`, in order: its data and styles (see :mod:`~explorer.views.common.drawing.patching`)."""
    theory, mc, sol = state.theory_curve, state.curve_mc, state.solution
    s, tp = (theory.s_over_n, theory.expected_test_points) if theory is not None else (EMPTY,) * 2
    values = curve_values(state)
    points = mc.points if mc is not None else ()
    ms = np.array([p.s_over_n for p in points], dtype=float)
    mean = np.array([p.mc_mean for p in points], dtype=float)
    se = np.array([p.mc_se for p in points], dtype=float)
    here = (np.array([sol.s_over_n]), np.array([state.current_theory_error])) if sol is not None else (EMPTY,) * 2
    flagged = large_gaps(state)
    mc_label = "Monte-Carlo (± 1 s.e.)"
    muted = dict(muted_alpha=0)
    curves = [Layer(hv.Curve, (S_DIM,), (ERR_DIM,), values.get(m, (EMPTY, EMPTY)), _CURVE_LABEL[m],
                    dict(line_width=2, **muted, **_CURVE_STYLE[m])) for m in _curve_names(state)]
    return [
        *curves,
        Layer(hv.Scatter, (S_DIM,), (ERR_DIM,), here, "ADATAP at the current S/N",
              dict(color=THEORY_COLOR, marker="diamond", size=12, **muted)),
        Layer(hv.Segments, (S_DIM, ERR_DIM, "s_over_n_end", "error_end"), (), (ms, mean - se, ms, mean + se),
              mc_label, dict(color=MC_COLOR, line_width=1.5, **muted)),
        Layer(hv.Scatter, (S_DIM,), (ERR_DIM,), (ms, mean), mc_label, dict(color=MC_COLOR, size=8, **muted)),
        Layer(hv.Scatter, (S_DIM,), (ERR_DIM,),
              (flagged[S_COLUMN].to_numpy(float), flagged["mc_mean"].to_numpy(float)),
              f"ADATAP − MC > {GAP_THRESHOLD:g} s.e.",
              dict(color=FLAG_COLOR, marker="circle", size=18, fill_alpha=0, line_width=2, **muted)),
        Layer(hv.Curve, (S_DIM,), (TEST_DIM,), (s, tp), "test points N·e^(−S/N)",
              dict(color=TEST_COLOR, line_dash="dotted", **muted)),
    ]


#: The ``padding`` option of the learning-curve figure (also what :func:`patch_overlay` pads its ranges by).
CURVE_PADDING = 0.04


def learning_curve_plot(state: GPBootstrapState) -> hv.Overlay:
    """ε(S) of ADATAP, approximate ADATAP, VG, MF, the linear response (IJ), the leave-one-out limit at noise
    σ²N/S and Monte-Carlo (± 1 s.e.) vs S/N, [MO03] Fig. 1 (left) with docs/linear_response.md.

    The second y axis shows the expected number of test points N·e^(−S/N) (the paper's top axis); the
    diamond marks the ADATAP theory at the current S/N. A click on a legend entry hides its layer (Bokeh
    ``click_policy="mute"`` with zero muted alpha: unlike ``"hide"``, a redraw does not show it again). VG
    and MF, and IJ, are left out for losses other than square (they define ε(S) by eq. 45 only); HoloViews then
    hides their layers and drops their legend entries. The layers are :func:`learning_curve_layers`.
    """
    return overlay(learning_curve_layers(state)).opts(
        multi_y=True, legend_position="right", legend_opts={"click_policy": "mute"}, show_grid=True,
        padding=CURVE_PADDING,
        title="Bootstrap learning curve: lower ε(S) is better;\ntheory should meet Monte-Carlo", **SIZE)


def gap_frame(state: GPBootstrapState) -> pd.DataFrame:
    """Method − Monte-Carlo at the S/N of the Monte-Carlo points computed so far, for every curve
    (``CURVE_METHODS``: the theories, IJ and the LOO limit).

    Columns ``s_over_n``, ``mc_mean``, ``mc_se`` and ``GAP_COLUMNS``: ``gap_pct_<method>`` =
    100 (ε_method − ε_MC)/ε_MC and ``gap_se_<method>`` = (ε_method − ε_MC)/se_MC, NaN for a method not
    defined for the loss (VG, MF, IJ off the square loss), not computed yet or an S/N off its grid.
    """
    mc, curves = state.curve_mc, curve_values(state)
    columns = [S_COLUMN, "mc_mean", "mc_se", *GAP_COLUMNS]
    points = mc.points if mc is not None else ()
    rows = []
    for p in points:
        row = {S_COLUMN: p.s_over_n, "mc_mean": p.mc_mean, "mc_se": p.mc_se}
        for method, (grid, values) in curves.items():
            j = np.flatnonzero(np.isclose(grid, p.s_over_n, rtol=0, atol=1e-9))
            if not j.size:
                continue
            gap = float(values[j[0]]) - p.mc_mean
            row[f"gap_pct_{method}"] = 100 * gap / p.mc_mean
            row[f"gap_se_{method}"] = gap / p.mc_se if p.mc_se > 0 else np.nan
        rows.append(row)
    return pd.DataFrame(rows, columns=columns, dtype=float)


def large_gaps(state: GPBootstrapState, threshold: float = GAP_THRESHOLD) -> pd.DataFrame:
    """The rows of :func:`gap_frame` where the ADATAP theory is more than ``threshold`` Monte-Carlo standard
    errors from Monte-Carlo, | ε_theory − ε_MC | > threshold · se_MC (flagged in the figure and the status)."""
    gaps = gap_frame(state)
    return gaps[np.abs(gaps["gap_se_theory"]) > threshold].reset_index(drop=True)


def gap_sentence(state: GPBootstrapState, threshold: float = GAP_THRESHOLD) -> str:
    """A sentence naming the S/N where ADATAP and Monte-Carlo differ by more than ``threshold`` standard errors
    ("" when there is none)."""
    flagged = large_gaps(state, threshold)
    if flagged.empty:
        return ""
    where = ", ".join(f"{v:g} ({g:+.1f} s.e.)" for v, g in zip(flagged[S_COLUMN], flagged["gap_se_theory"]))
    text = (f"⚠ ADATAP theory and Monte-Carlo differ by more than {threshold:g} standard errors at S/N = {where} "
            "(circled in the figure).")
    if min(flagged[S_COLUMN]) < 1:
        text += (" At small S/N a bootstrap sample holds few distinct points (N(1 − e^(−S/N)) of them) and the "
                 "theory's Gaussian approximation is at its roughest; the paper's Fig. 1 shows theory and simulation "
                 "agreeing by eye over the whole curve, at a scale where a few standard errors do not show ([MO03], "
                 "§5).")
    return text


def gap_table(state: GPBootstrapState) -> str:
    """:func:`gap_frame` as a Markdown table: one row per S/N, per method "relative gap % (gap in s.e.)"."""
    table, methods = gap_frame(state), _curve_names(state)
    if table.empty:
        return "**Method − Monte-Carlo**: waiting for the Monte-Carlo points…"
    head = "| S/N | " + " | ".join(CURVE_METHODS[m] for m in methods) + " |"
    lines = ["**Method − Monte-Carlo**: relative gap (method − MC)/MC and, in brackets, the gap in MC standard "
             "errors (IJ: linear response; LOO limit: leave-one-out at noise σ²N/S, the S → ∞ limit)",
             "", head, "|---:" * (len(methods) + 1) + "|"]
    for _, row in table.iterrows():
        cells = [f"{_signed(row[f'gap_pct_{m}'])} % ({_signed(row[f'gap_se_{m}'])} s.e.)" for m in methods]
        lines.append(f"| {row['s_over_n']:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _signed(x: float) -> str:
    return "—" if not np.isfinite(x) else f"{x:+.1f}"


def vg_mf_note(state: GPBootstrapState) -> str:
    """Why VG, MF and the linear response (IJ) are missing for a loss other than square ("" for the square loss)."""
    if state.loss == "square":
        return ""
    return ("VG, MF and the linear response (IJ) are not shown: they define the bootstrap error by eq. (45), i.e. "
            f"for the square loss only (test loss here: {state.loss}). The leave-one-out limit is shown with this "
            "loss, at the deterministic left-out prediction.")


def curve_frame(state: GPBootstrapState) -> pd.DataFrame:
    """Theory curves, IJ and the LOO limit on their grid (VG, MF, IJ NaN off the square loss), Monte-Carlo and the
    gaps of :func:`gap_frame` where computed (NaN elsewhere)."""
    theory, mc = state.theory_curve, state.curve_mc
    rows: dict[float, dict] = {}
    if theory is not None:
        for j, v in enumerate(theory.s_over_n):
            rows[round(float(v), 12)] = {"expected_test_points": theory.expected_test_points[j]}
    for method, (grid, values) in curve_values(state).items():
        for v, value in zip(grid, values):
            rows.setdefault(round(float(v), 12), {})[method] = value
    for p in (mc.points if mc is not None else ()):
        rows.setdefault(round(p.s_over_n, 12), {}).update(mc_mean=p.mc_mean, mc_se=p.mc_se, mc_samples=p.mc_samples)
    for _, gap in gap_frame(state).iterrows():
        rows[round(gap[S_COLUMN], 12)].update({c: gap[c] for c in GAP_COLUMNS})
    return pd.DataFrame([{S_COLUMN: v, **r} for v, r in sorted(rows.items())], columns=CURVE_COLUMNS)


def gap_element(state: GPBootstrapState) -> hv.Table:
    """The theory − Monte-Carlo table for the HTML export: the gap columns of the methods of the loss."""
    gaps = gap_frame(state)
    keep = [S_COLUMN, *(f"gap_{u}_{m}" for m in _curve_names(state) for u in ("pct", "se"))]
    title = "Method − Monte-Carlo: gap_pct = 100 (method − MC)/MC, gap_se = (method − MC)/se"
    note = vg_mf_note(state)
    return hv.Table(gaps[keep].round(3), kdims=[S_COLUMN]).opts(
        title=f"{title}. {note}" if note else title, width=1000, height=260)
