"""HoloViews figures and tables of the Gaussian-process page, one module per figure of [MO03], built from the
results a :class:`~explorer.views.gp_bootstrap.state.GPBootstrapState` holds.

* :mod:`~.learning_curve` — Fig. 1: the learning curve ε(S), the gaps to Monte-Carlo, the tab's status line;
* :mod:`~.held_out_moments` — Fig. 2: bootstrap mean and variance at held-out inputs;
* :mod:`~.predictive_distribution` — Figs. 3-4: the distribution of the predictor at one input (eq. 60), and
  :mod:`~.inputs_scatter`, the inputs to choose it from;
* :mod:`~.l1_map` — Fig. 5: the L1 distances at all inputs;
* :mod:`~.per_tab` — each tab's figure and table by the tab's name; :mod:`~.downloads` — the CSV, HTML and settings
  downloads; :mod:`~.style` — the dimensions, colours and sizes they share.

The numbers come from the compute core; these functions only arrange them. Every name is importable from this
package as before (``figures.learning_curve_plot``, ``figures.csv_text``).
"""

from __future__ import annotations

from explorer.views.gp_bootstrap.figures.downloads import (
    TAB_NAMES,
    csv_filename,
    csv_text,
    html_filename,
    html_text,
    settings,
    settings_filename,
    settings_line,
    settings_text,
)
from explorer.views.gp_bootstrap.figures.held_out_moments import holdout_frame, holdout_overlay, holdout_plot
from explorer.views.gp_bootstrap.figures.inputs_scatter import (
    inputs_plot,
    inputs_points,
    selected_input,
    shown_inputs,
    tapped_input,
)
from explorer.views.gp_bootstrap.figures.l1_map import L1_REFERENCES, l1_frame, l1_plot, l1_summary, worst_inputs_frame
from explorer.views.gp_bootstrap.figures.learning_curve import (
    CURVE_METHODS,
    CURVE_PADDING,
    GAP_COLUMNS,
    GAP_THRESHOLD,
    curve_frame,
    curve_values,
    gap_frame,
    gap_sentence,
    gap_table,
    large_gaps,
    learning_curve_layers,
    learning_curve_plot,
    vg_mf_note,
)
from explorer.views.gp_bootstrap.figures.per_tab import EXPORT_COLUMNS, figure, frame
from explorer.views.gp_bootstrap.figures.predictive_distribution import (
    distribution_frame,
    distribution_plot,
    mapped_position,
)
from explorer.views.gp_bootstrap.figures.style import problem_label

__all__ = [
    "learning_curve_plot", "learning_curve_layers", "CURVE_PADDING", "CURVE_METHODS", "curve_values", "gap_frame",
    "gap_table", "large_gaps", "gap_sentence", "GAP_THRESHOLD", "vg_mf_note", "distribution_plot", "inputs_points",
    "selected_input", "inputs_plot", "tapped_input", "shown_inputs", "mapped_position", "l1_plot",
    "holdout_overlay", "holdout_plot", "problem_label", "l1_summary",
    "curve_frame", "distribution_frame", "l1_frame", "worst_inputs_frame", "holdout_frame",
    "figure", "frame", "csv_text", "csv_filename", "html_filename", "settings_filename", "TAB_NAMES", "html_text",
    "settings", "settings_text", "settings_line", "EXPORT_COLUMNS", "GAP_COLUMNS", "L1_REFERENCES",
]
