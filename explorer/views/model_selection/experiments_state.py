"""The experiments of the model-selection tab's "Experiments" sub-panel ([Fis16]): the thesis experiments at small
sizes.

:class:`SelectionExperimentState` runs the experiments of :mod:`explorer.model_selection.experiments` (the CLI's
``select-experiment``) as a background job of the same kind as the other tabs'; :func:`experiment_plot`,
:func:`experiment_frame`, :func:`experiment_csv` and :func:`experiment_json` show and export its result, and
:class:`~explorer.views.model_selection.experiments_tab.SelectionExperimentsPanel` lays them out with the
experiment's controls.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import holoviews as hv
import numpy as np
import pandas as pd
import param

from explorer import datasets
from explorer.model_selection import experiments as sx
from explorer.model_selection.criterion import CRITERIA, CRITERION_LABELS
from explorer.runtime.caches import lru
from explorer.views.common.files.data_folder import DATA_DIR_HELP
from explorer.views.common.files.exports import csv_table, json_text
from explorer.views.common.files.uploads import Upload, file_settings, use_uploaded_file
from explorer.views.common.state import controls, declarations
from explorer.views.common.state.data_source import DataSourced
from explorer.views.common.state.declarations import control
from explorer.views.common.state.jobs import Job, JobRunner, JobSpec, output
from explorer.views.model_selection.figures import (
    CRITERION_COLORS,
    FIGURE_SIZE,
    LEGEND,
    NORM_DIM,
    PARAMETER_COLUMN,
    SELECT_BY_COLUMN,
    normalise,
    param_label,
)
from explorer.views.model_selection.state import (
    SelectionJobs,
    asc_entropy,
    asc_partitions,
    job_hooks,
    lbfgs_iterations,
    lbfgs_restarts,
)

__all__ = [
    "SelectionExperimentState", "EXPERIMENTS", "EXPERIMENT_DATA", "EXPERIMENT_COLUMNS",
    "TEMPERATURE_EXPERIMENTS", "TEMPERATURE_COLUMNS", "experiment_frame", "experiment_plot",
    "experiment_csv", "experiment_json", "experiment_summary", "experiment_settings_line",
]

#: The experiments of ``explorer select-experiment`` (:mod:`explorer.model_selection.experiments`) and what they show.
EXPERIMENTS = {
    "curves": "Experiment 2 (Fig. 5.3-5.5): every criterion along one hyperparameter of the squared-exponential "
              "teacher, averaged over the data sets; where each data set's curve has its minimum.",
    "hyperparameters": "Experiments 3 and 4 (Fig. 5.6-5.8): the hyperparameters optimised by each criterion; test "
                       "SMSE (eq. 5.1) and MSLL, and how often each criterion had the lowest SMSE.",
    "functional-forms": "Experiments 6-8 (Fig. 5.10-5.12): every covariance function optimised by 'select by', then "
                        "ranked by each criterion; mean ranks and how often the teacher's own form ranked first.",
    "beta": "Experiment 10 (Fig. 5.15): Boltzmann ASC mutual information I_β against β at the teacher's "
            "hyperparameters; the thesis finds the mean curve peaking near β = 1.",
}
#: Data of the experiments: GP teacher draws, or the day-of-year temperature series (Experiments 4 and 8).
EXPERIMENT_DATA = ("teacher", "temperature")
#: Experiments that can run on the temperature series (the others always use teacher draws).
TEMPERATURE_EXPERIMENTS = ("hyperparameters", "functional-forms")
#: Training cases of a random split of the temperature series (§5.1: 64 training, the rest test cases).
_TEMPERATURE_TRAIN = 64

#: Columns of the temperature CSV: the input (day of the year) and the target (mean anomaly).
TEMPERATURE_COLUMNS = ("day_of_year", "mean_anomaly_by_file_doy")

# selection_experiments results per (settings, temperature file hash)
_EXPERIMENT_RESULTS = lru("model_selection.experiment_results", 16)
_TEMPERATURE = lru("model_selection.temperature", 4)  # parsed temperature series per file hash

_EXPERIMENT_TYPES = (sx.CurvesExperiment, sx.HyperparameterExperiment, sx.FunctionalFormExperiment,
                     sx.BetaExperiment)


@dataclass(frozen=True)
class _ExperimentInputs:
    """What the experiment job reads, taken on the session's thread: its settings, the temperature series (None
    for teacher draws) and its key (the settings as JSON and the series file's hash)."""

    key: tuple
    settings: dict
    data: datasets.Dataset | None


#: The experiment waits for Run: its repetitions take minutes.
_EXPERIMENT_JOB = JobSpec("experiment", "result", _EXPERIMENT_RESULTS, key=lambda i: i.key,
                          compute=lambda state, i, job: _run_experiment(i.settings, i.data, state.executor, job),
                          optional=True)


def _parse_temperature(text: str) -> datasets.Dataset:
    data = sx.load_temperature(io.StringIO(text), inputs=TEMPERATURE_COLUMNS[0], target=TEMPERATURE_COLUMNS[1])
    if data.n < _TEMPERATURE_TRAIN + 2:
        raise datasets.DatasetError(f"the temperature CSV has {data.n} rows; the experiments split it into "
                                    f"{_TEMPERATURE_TRAIN} training cases and the rest as test cases, so at least "
                                    f"{_TEMPERATURE_TRAIN + 2} rows are needed (the series has 365).")
    return data


# ------------------------------------------------------------------------------------ the state

#: The sidebar's headings of the sub-panel, in order.
_EXPERIMENT_GROUP, _REPETITIONS_GROUP = "Experiment", "Repetitions and criteria"
#: What every control invalidates: the experiment's result.
_RESULT = ("result",)


def _runs(*kinds: str, teacher_data: bool = False):
    """``applies`` of a control that only the experiments ``kinds`` use (with ``teacher_data``: only on teacher
    draws, not on the temperature series)."""
    return lambda s: s.experiment in kinds and not (teacher_data and s._uses_temperature())


def _not_beta(state) -> bool:
    return state.experiment != "beta"


def _offers_files(state) -> bool:
    """The temperature CSV of the data folder: shown when the temperature series is used and the folder has one."""
    return state._uses_temperature() and len(state.param.temperature_csv.objects) > 1


def _control(group: str, applies=None) -> dict:
    """The declaration of a control of the sub-panel: every one invalidates the result and goes into links."""
    return control(group, invalidates=_RESULT, applies=applies)


class SelectionExperimentState(SelectionJobs, DataSourced):
    """The thesis experiments of [Fis16] (as ``explorer select-experiment``) at small repetition counts.

    Choose the experiment and its settings, call :meth:`refresh` (shows a cached result or says "press 'Run'"),
    then :meth:`run` and :meth:`wait`. The job (kind ``"experiment"`` in ``jobs``) calls the
    :mod:`explorer.model_selection.experiments` function with these settings and ``rng=seed``; ``result`` is its
    frozen result, ``error`` why the settings cannot run (e.g. a missing temperature CSV).
    """

    experiment = param.Selector(default="hyperparameters", objects=list(EXPERIMENTS), label="Experiment",
                                doc="curves: Experiment 2; hyperparameters: Experiments 3 and 4; functional-forms: "
                                    "Experiments 6-8; beta: Experiment 10 (the choices of `explorer "
                                    "select-experiment`).", metadata=_control(_EXPERIMENT_GROUP))
    data = param.Selector(default="teacher", objects=list(EXPERIMENT_DATA), label="Data",
                          doc="teacher: fresh GP teacher draws per repetition (x ~ N(0, 1), ℓ = 1, σ_f = 1); "
                              "temperature: random 64/301 splits of the day-of-year temperature series "
                              "(Experiments 4 and 8; curves and beta always use teacher draws).",
                          metadata=_control(_EXPERIMENT_GROUP, _runs(*TEMPERATURE_EXPERIMENTS)))
    temperature_csv = param.Selector(default="", objects=[""], label="Temperature CSV (data folder)",
                                     doc="A CSV with the columns day_of_year and mean_anomaly_by_file_doy (Berkeley "
                                         "Earth's daily anomaly averaged per day of the year). " + DATA_DIR_HELP
                                         + " Leave it empty to use the uploaded file.",
                                     metadata=_control(_EXPERIMENT_GROUP, _offers_files))
    teacher = param.Selector(default="squared_exponential", objects=list(sx.TEACHERS), label="Teacher",
                             doc="Covariance function of the teacher (hyperparameters, beta); the student has "
                                 "the same form.",
                             metadata=_control(_EXPERIMENT_GROUP, _runs("hyperparameters", "beta", teacher_data=True)))
    teachers = param.ListSelector(default=list(sx.TEACHERS), objects=list(sx.TEACHERS), label="Teachers",
                                  doc="Functional forms: the teachers whose draws the four students (se, rq, "
                                      "exponential, periodic) are ranked on, one block of repetitions each.",
                                  metadata=_control(_EXPERIMENT_GROUP, _runs("functional-forms", teacher_data=True)))
    repetitions = param.Integer(default=2, bounds=(1, 256), softbounds=(1, 16), label="Repetitions",
                                doc="Data sets drawn (or random splits of the temperature series) per teacher; "
                                    "the thesis uses 256 (16 to 64 for the slower experiments).",
                                metadata=_control(_REPETITIONS_GROUP))
    criteria = param.ListSelector(default=list(sx.SYNTHETIC_CRITERIA), objects=list(CRITERIA), label="Criteria",
                                  doc="The criteria compared (curves, hyperparameters) or ranking the functional "
                                      "forms; the thesis compares evidence, LOO-CV and the three ASC variants.",
                                  metadata=_control(_REPETITIONS_GROUP, _not_beta))
    parameter = param.Selector(default="lengthscale", objects=["lengthscale", "signal_std", "noise_std"],
                               label="Hyperparameter swept",
                               doc="Curves: the hyperparameter varied over a factor 10 either side of the "
                                   "teacher's value (32 points), the others fixed at the teacher's.",
                               metadata=_control(_EXPERIMENT_GROUP, _runs("curves")))
    select_by = param.Selector(default="loo", objects=list(CRITERIA), label="Select by",
                               doc="Functional forms: the criterion that optimises each student (loo: Experiment "
                                   "6; evidence: Experiment 7).",
                               metadata=_control(_EXPERIMENT_GROUP, _runs("functional-forms")))
    noise_std = param.Number(default=0.1, bounds=(1e-3, 10.0), softbounds=(0.01, 1.0), step=0.01,
                             label="Teacher noise σ_n",
                             doc="Hyperparameters on teacher data: the noise standard deviation of the draws "
                                 "(the thesis: 0.1).",
                             metadata=_control(_EXPERIMENT_GROUP, _runs("hyperparameters", teacher_data=True)))
    n_partitions = asc_partitions((1, 64), "Random partitions J per ASC evaluation (the thesis: 32; beta uses one, "
                                           "'one drawn objective function').",
                                  _control(_REPETITIONS_GROUP, _not_beta))
    n_objects = param.Integer(default=4, bounds=(1, 32), softbounds=(2, 16), label="ASC: objects M",
                              doc="Objects M per subset of an ASC partition (L = 2; the thesis: 4 for "
                                  "Experiment 3, 8 for the others).", metadata=_control(_REPETITIONS_GROUP))
    entropy = asc_entropy("Entropy term of ASC (eq. 4.2): zero (eq. 3.3), or the prior entropy.",
                          _control(_REPETITIONS_GROUP))
    n_restarts = lbfgs_restarts(4, "L-BFGS runs from Cauchy-distributed starts per optimisation (the thesis: 16).",
                                _control(_REPETITIONS_GROUP, _runs(*TEMPERATURE_EXPERIMENTS)))
    max_iter = lbfgs_iterations("Maximum L-BFGS iterations per run (the thesis: 16).",
                                _control(_REPETITIONS_GROUP, _runs(*TEMPERATURE_EXPERIMENTS)))
    seed = controls.seed("Seed of the teacher draws or splits, the partitions and the restarts (the CLI's --seed): "
                         "same settings and seed, same numbers.", metadata=_control(_REPETITIONS_GROUP))

    result = output(_EXPERIMENT_TYPES, "Result", "the experiment's result for the current settings.")

    job_specs = (_EXPERIMENT_JOB,)
    outputs = ("result",)

    data_dir = param.String(default=None, allow_None=True, constant=True, precedence=-1, label="Data directory",
                            doc="Folder whose *.csv files are offered as temperature series (explorer serve "
                                "--data-dir).")

    def __init__(self, **params):
        temperature_csv = params.pop("temperature_csv", "")  # a file of data_dir: set once the choices are known
        super().__init__(**params)
        self.param.temperature_csv.objects = ["", *self.source.files()]
        self.temperature_csv = temperature_csv
        self.job_runner = JobRunner(self)
        self.param.watch(self._on_change, list(declarations.invalidating(self)))

    def upload_temperature(self, filename: str, content: bytes | str) -> None:
        """Use an uploaded CSV as the temperature series (clears the path, switches the data to it). The message
        of an earlier upload goes with it."""
        use_uploaded_file(self, filename, content, temperature_csv="", data="temperature")

    def _on_change(self, *events) -> None:
        if not self.started:
            self.error = ""  # before the first refresh, the only error is an upload's: its cause is gone
        super()._on_change(*events)

    def settings(self) -> dict:
        """The settings the current experiment uses (the rest do not change its result)."""
        kind, temperature = self.experiment, self._uses_temperature()
        out = {"experiment": kind, "data": "temperature" if temperature else "teacher",
               "repetitions": int(self.repetitions)}
        if kind != "beta":
            out.update(criteria=[c for c in CRITERIA if c in self.criteria], n_partitions=int(self.n_partitions))
        if kind == "curves":
            out["parameter"] = self.parameter
        if kind in ("hyperparameters", "beta") and not temperature:
            out["teacher"] = self.teacher
        if kind == "hyperparameters" and not temperature:
            out["noise_std"] = float(self.noise_std)
        if kind == "functional-forms":
            out["select_by"] = self.select_by
            if not temperature:
                out["teachers"] = [t for t in sx.TEACHERS if t in self.teachers]
        if kind in TEMPERATURE_EXPERIMENTS:
            out.update(n_restarts=int(self.n_restarts), max_iter=int(self.max_iter))
        out.update(n_objects=int(self.n_objects), entropy=self.entropy, seed=int(self.seed))
        return out

    @property
    def temperature_file(self) -> Upload | None:
        """The temperature CSV the experiments read (the data folder's file, else the upload), if one can be read."""
        try:
            return self.source.read(self.temperature_csv) if self.temperature_csv else self.source.upload
        except ValueError:  # DatasetError too: the error message of the refresh says why
            return None

    def _uses_temperature(self) -> bool:
        return self.data == "temperature" and self.experiment in TEMPERATURE_EXPERIMENTS

    def _temperature(self) -> tuple[datasets.Dataset, str]:
        """The temperature series of the data folder's file (or else the upload) and the hash of its text."""
        if self.temperature_csv:
            file = self.source.read(self.temperature_csv)
        elif self.source.upload is not None:
            file = self.source.upload
        else:
            raise datasets.DatasetError("upload the temperature CSV (columns day_of_year and "
                                        "mean_anomaly_by_file_doy), or choose a file of the server's data folder.")
        return _TEMPERATURE.get_or_compute(file.sha256, lambda: _parse_temperature(file.text)), file.sha256

    def _prepare_jobs(self) -> _ExperimentInputs:
        settings = self.settings()
        if settings.get("criteria") == [] or settings.get("teachers") == []:
            raise ValueError("Choose at least one criterion" + (" and one teacher." if "teachers" in settings
                                                                else "."))
        data, source = (self._temperature() if settings["data"] == "temperature" else (None, None))
        return _ExperimentInputs((json.dumps(settings, sort_keys=True), source), settings, data)


def _run_experiment(settings: dict, data: datasets.Dataset | None, executor, job: Job):
    """Worker thread: the :mod:`~explorer.model_selection.experiments` function of ``settings`` (as the CLI calls it);
    its data sets run on ``executor`` (the state's Dask workers)."""
    s, reps = settings, settings["repetitions"]
    common = dict(n_datasets=reps, n_objects=s["n_objects"], entropy=s["entropy"], rng=s["seed"], executor=executor)
    fit = dict(n_restarts=s.get("n_restarts"), max_iter=s.get("max_iter"), n_partitions=s.get("n_partitions"))
    kind = s["experiment"]
    common["hooks"] = job_hooks(job)
    if kind == "curves":
        return sx.curves_experiment(s["parameter"], s["criteria"], n_partitions=s["n_partitions"], **common)
    if kind == "hyperparameters":
        teacher = dict(teacher=s["teacher"], sigma_n=s["noise_std"]) if data is None else {"data": data}
        return sx.hyperparameter_experiment(s["criteria"], **teacher, **fit, **common)
    if kind == "functional-forms":
        source = {"teachers": s["teachers"]} if data is None else {"data": data, "n": _TEMPERATURE_TRAIN}
        return sx.functional_form_experiment(s["select_by"], s["criteria"], **source, **fit, **common)
    return sx.beta_experiment(s["teacher"], **common)


# ------------------------------------------------------------------------------------ figures and tables

#: Columns of the experiment tables (and CSV exports), per experiment; functional forms add one column per student.
EXPERIMENT_COLUMNS = {
    "curves": ["criterion", PARAMETER_COLUMN, "true_value", "argmin_q25", "argmin_median", "argmin_q75"],
    "hyperparameters": ["criterion", "smse_q25", "smse_median", "smse_q75", "msll_q25", "msll_median", "msll_q75",
                        "wins_smse"],
    "functional-forms": ["setting", "ranked_by", SELECT_BY_COLUMN, "hit_rate"],
    "beta": ["teacher", "repetitions", "n_failed", "beta_star_q25", "beta_star_median", "beta_star_q75",
             "beta_at_max_of_mean"],
}


def _quartiles(prefix: str, summary: dict) -> dict:
    return {f"{prefix}_{q}": summary[q] for q in ("q25", "median", "q75")}


def experiment_frame(state: SelectionExperimentState) -> pd.DataFrame:
    """The numbers ``explorer select-experiment --json`` prints for the result, one row per criterion (curves,
    hyperparameters), per setting and ranking key (functional forms; mean rank of each student), or one row
    (beta). Empty, with the experiment's columns, before a result exists."""
    res = state.result
    if res is None:
        return pd.DataFrame(columns=EXPERIMENT_COLUMNS[state.experiment])
    d = res.as_dict()
    if isinstance(res, sx.CurvesExperiment):
        rows = [{"criterion": c, PARAMETER_COLUMN: d["parameter"], "true_value": d["true_value"],
                 **_quartiles("argmin", d["argmin_summary"][c])} for c in d["criteria"]]
        return pd.DataFrame(rows, columns=EXPERIMENT_COLUMNS["curves"])
    if isinstance(res, sx.HyperparameterExperiment):
        rows = [{"criterion": c, **_quartiles("smse", d["smse"][c]), **_quartiles("msll", d["msll"][c]),
                 "wins_smse": d["wins_smse"][c]} for c in d["criteria"]]
        return pd.DataFrame(rows, columns=EXPERIMENT_COLUMNS["hyperparameters"])
    if isinstance(res, sx.FunctionalFormExperiment):
        rows = [{"setting": setting, "ranked_by": key, SELECT_BY_COLUMN: d["select_by"],
                 **{f"mean_rank_{student}": d["mean_rank"][s][k][j] for j, student in enumerate(d["students"])},
                 "hit_rate": d["hit_rate"][s][k]}
                for s, setting in enumerate(d["settings"]) for k, key in enumerate(d["keys"])]
        return pd.DataFrame(rows, columns=EXPERIMENT_COLUMNS["functional-forms"][:3]
                            + [f"mean_rank_{s}" for s in d["students"]] + ["hit_rate"])
    mean = np.asarray(d["mean"], dtype=float)
    peak = float(res.betas[np.nanargmax(mean)]) if np.isfinite(mean).any() else np.nan
    row = {"teacher": d["teacher"], "repetitions": res.curves.shape[0], "n_failed": d["n_failed"],
           **_quartiles("beta_star", d["beta_star"]), "beta_at_max_of_mean": peak}
    return pd.DataFrame([row], columns=EXPERIMENT_COLUMNS["beta"])


def _empty_plot(experiment: str) -> hv.Overlay:
    """The figure before a result exists: a sentence saying what to press, no axes (there is nothing to read)."""
    hint = hv.Text(0.5, 0.5, f"Press 'Run experiment' to compute {experiment}").opts(
        text_font_size="14pt", text_color="#555555")
    return hv.Overlay([hint]).opts(title=f"{experiment}: no result yet", xlim=(0, 1), ylim=(0, 1), xaxis=None,
                                   yaxis=None, show_grid=False, toolbar=None, **FIGURE_SIZE)


def _curves_experiment_plot(res: sx.CurvesExperiment) -> hv.Overlay:
    x_dim = hv.Dimension("parameter_value", label=param_label(res.parameter))
    layers = [hv.Curve((res.grid, normalise(m)), x_dim, NORM_DIM, label=CRITERION_LABELS[c]).opts(
        color=CRITERION_COLORS[c], line_width=2) for c, m in zip(res.criteria, res.mean)]
    title = (f"Experiment 2: mean criteria vs {param_label(res.parameter)}, {res.values.shape[1]} data set(s), "
             "normalised (lower is better); dotted: teacher")
    return (hv.Overlay(layers) * hv.VLine(res.true_value).opts(color="gray", line_dash="dotted")).opts(
        logx=True, title=title, show_grid=True, **LEGEND, **FIGURE_SIZE)


def _hyperparameter_experiment_plot(res: sx.HyperparameterExperiment) -> hv.Overlay:
    frame = pd.DataFrame([{"criterion": c, "smse": v} for c, row in zip(res.criteria, res.smse)
                          for v in row if np.isfinite(v)], columns=["criterion", "smse"])
    colors = hv.dim("criterion").categorize(CRITERION_COLORS, default="gray")
    title = f"Test SMSE of the model each criterion selected, {res.n_repetitions} repetition(s)"
    box = hv.BoxWhisker(frame, "criterion", hv.Dimension("smse", label="test SMSE (lower is better)"))
    return hv.Overlay([box.opts(box_fill_color=colors)]).opts(title=title, show_grid=True, **FIGURE_SIZE)


def _functional_form_experiment_plot(res: sx.FunctionalFormExperiment) -> hv.Overlay:
    rows = [(student, f"{setting} · {key}", float(rank)) for s, setting in enumerate(res.settings)
            for k, key in enumerate(res.keys) for student, rank in zip(res.students, res.mean_rank[s, k])]
    kdims = ["student", "setting · ranked by"]
    heat = hv.HeatMap(rows, kdims, "mean rank").opts(cmap="RdYlGn_r", colorbar=True, tools=["hover"])
    labels = hv.Labels([(x, y, f"{v:.2f}") for x, y, v in rows], kdims, "text").opts(
        text_font_size="9pt", text_color="black")
    title = f"Mean rank (1 = best), forms optimised by {res.select_by}, {res.ranks.shape[1]} repetition(s)"
    height = max(300, 90 + 28 * len(res.settings) * len(res.keys))
    return (heat * labels).opts(title=title, responsive=True, height=height)


def _beta_experiment_plot(res: sx.BetaExperiment) -> hv.Overlay:
    b_dim, i_dim = hv.Dimension("beta", label="β"), hv.Dimension("I", label="I_β (nats)")
    layers = [hv.Curve((res.betas, c), b_dim, i_dim).opts(color="#9ecae1", line_width=1)
              for c in res.curves if np.isfinite(c).any()]
    layers.append(hv.Curve((res.betas, res.mean), b_dim, i_dim, label="mean over data sets").opts(
        color="#08519c", line_width=3))
    title = f"Experiment 10: Boltzmann ASC I_β vs β, {res.teacher} teacher; dotted: β = 1"
    return (hv.Overlay(layers) * hv.VLine(1.0).opts(color="gray", line_dash="dotted")).opts(
        logx=True, title=title, show_grid=True, **LEGEND, **FIGURE_SIZE)


_EXPERIMENT_PLOTS = {sx.CurvesExperiment: _curves_experiment_plot,
                     sx.HyperparameterExperiment: _hyperparameter_experiment_plot,
                     sx.FunctionalFormExperiment: _functional_form_experiment_plot,
                     sx.BetaExperiment: _beta_experiment_plot}


def experiment_plot(state: SelectionExperimentState):
    """The figure of the experiment's result (empty with a hint before one exists)."""
    if state.result is None:
        return _empty_plot(state.experiment)
    return _EXPERIMENT_PLOTS[type(state.result)](state.result)


def experiment_settings_line(state: SelectionExperimentState) -> str:
    """The settings behind the result, for the header of its exports."""
    return " ".join(f"{k}={','.join(v) if isinstance(v, list) else v}" for k, v in state.settings().items())


def experiment_summary(state: SelectionExperimentState) -> str:
    """One line on the experiment's result (setting and repetitions), or what the experiment does."""
    res = state.result
    if res is None:
        return EXPERIMENTS[state.experiment]
    if isinstance(res, sx.HyperparameterExperiment):
        return f"**{res.setting}** · student {res.kernel} · {res.n_repetitions} repetition(s)"
    if isinstance(res, sx.FunctionalFormExperiment):
        return (f"**{', '.join(res.settings)}** · students {', '.join(res.students)} optimised by {res.select_by} · "
                f"{res.ranks.shape[1]} repetition(s)")
    if isinstance(res, sx.CurvesExperiment):
        return (f"**squared-exponential teacher** · {param_label(res.parameter)} on {res.grid.size} points · "
                f"{res.values.shape[1]} data set(s)")
    return f"**teacher {res.teacher}** · {res.curves.shape[0]} data set(s), {res.n_failed} without a valid I_β"


def experiment_csv(state: SelectionExperimentState) -> str:
    """The experiment's table as a plain CSV (one header line, ``EXPERIMENT_COLUMNS``); the settings are in
    the JSON download (:func:`experiment_json`), its sidecar."""
    return csv_table(experiment_frame(state))


def experiment_json(state: SelectionExperimentState) -> str:
    """The result as ``explorer select-experiment --json`` prints it, plus ``settings``; NaN written as null."""
    payload = state.result.as_dict() if state.result is not None else {"experiment": state.experiment}
    files = file_settings(state.temperature_file) if state.settings()["data"] == "temperature" else {}
    return json_text({**payload, "settings": {**state.settings(), **files}})
