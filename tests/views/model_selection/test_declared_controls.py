"""The model-selection page's controls are declared once, in its states (issue 38): the sidebars, the links, the
job keys, the watch lists and the settings JSON derived from the declarations are what the page had by hand."""

import json

import panel as pn
import param
import pytest

from explorer.views.common.state import declarations
from explorer.views.common.state.declarations import control
from explorer.views.common.state.links import link_parameters
from explorer.views.model_selection import figures as F
from explorer.views.model_selection.experiments_state import (
    EXPERIMENT_DATA,
    EXPERIMENTS,
    TEMPERATURE_EXPERIMENTS,
    SelectionExperimentState,
)
from explorer.views.model_selection.experiments_tab import SelectionExperimentsPanel
from explorer.views.model_selection.state import JOB_KINDS, UPLOAD, SelectionState
from explorer.views.model_selection.tab import SelectionTab

#: The Explore sidebar as the tab wrote it by hand before the declarations: headings, widgets, the upload.
_EXPLORE_SIDEBAR = (
    "### Data", "dataset", "<upload note>", "<upload>", "target", "n_points", "n_test", "standardize",
    "### Model and criteria", "kernel", "criteria",
    "### Curves", "parameter", "curve_points", "curve_decades",
    "### Random parts", "n_folds", "n_partitions", "n_objects", "entropy",
    "### Optimisation and ranking", "n_restarts", "max_iter", "rank_kernels", "select_by", "seed", "auto_run")
#: The Experiments sidebar as it was written by hand.
_EXPERIMENT_SIDEBAR = (
    "### Experiment", "experiment", "data", "temperature_csv", "<upload>", "teacher", "teachers", "parameter",
    "select_by", "noise_std",
    "### Repetitions and criteria", "repetitions", "criteria", "n_partitions", "n_objects", "entropy",
    "n_restarts", "max_iter", "seed")
#: What the links carried before (every parameter shown to the user), URL prefixes ``sel_`` and ``selx_``.
_EXPLORE_LINK = ("dataset", "target", "n_points", "n_test", "standardize", "kernel", "criteria", "parameter",
                 "curve_points", "curve_decades", "n_folds", "n_partitions", "n_objects", "entropy", "n_restarts",
                 "max_iter", "rank_kernels", "select_by", "seed", "auto_run", "subpanel")
_EXPERIMENT_LINK = ("experiment", "data", "temperature_csv", "teacher", "teachers", "repetitions", "criteria",
                    "parameter", "select_by", "noise_std", "n_partitions", "n_objects", "entropy", "n_restarts",
                    "max_iter", "seed")
#: The keys of the settings JSON as :func:`figures.settings` wrote them by hand (an upload adds the target column
#: and the file's name and SHA-256).
_SETTINGS_KEYS = {"dataset", "n_points", "n_test", "standardize", "kernel", "parameter", "criteria", "curve_points",
                  "curve_decades", "n_folds", "n_partitions", "n_objects", "entropy", "n_restarts", "max_iter",
                  "rank_kernels", "select_by", "seed"}


def _names(column: pn.Column, widgets: dict, upload) -> tuple[str, ...]:
    """The sidebar ``column`` as headings, control names and ``<upload>`` / ``<upload note>``."""
    by_id = {id(w): name for name, w in widgets.items()}
    out = []
    for item in column.objects:
        if isinstance(item, pn.pane.Markdown) and item.object.startswith("###"):
            out.append(item.object)
        elif item is upload:
            out.append("<upload>")
        elif isinstance(item, pn.pane.Markdown):
            out.append("<upload note>")
        else:
            out.append(by_id[id(item)])
    return tuple(out)


@pytest.fixture(scope="module")
def tab():
    return SelectionTab()


def test_the_sidebars_are_the_hand_written_ones(tab):
    explore, experiments = tab.controls.objects
    assert _names(explore, tab.widgets, tab.upload) == _EXPLORE_SIDEBAR
    assert "explorer-selection-controls" in explore.css_classes
    panel = tab.experiments_panel
    assert _names(experiments, panel.widgets, panel.upload) == _EXPERIMENT_SIDEBAR
    assert "explorer-experiment-controls" in experiments.css_classes
    # the same widget kinds and CSS classes as the parameter types gave them
    assert isinstance(tab.widgets["criteria"], pn.widgets.MultiChoice)
    assert isinstance(tab.widgets["auto_run"], pn.widgets.Checkbox)
    assert isinstance(tab.widgets["curve_decades"], pn.widgets.FloatInput)
    assert "explorer-selection-curve-decades" in tab.widgets["curve_decades"].css_classes
    assert "explorer-experiment-noise-std" in panel.widgets["noise_std"].css_classes


def test_the_links_carry_what_they_carried():
    assert link_parameters(SelectionState()) == _EXPLORE_LINK
    assert link_parameters(SelectionExperimentState()) == _EXPERIMENT_LINK


def test_the_target_shows_and_goes_into_the_settings_only_for_an_upload():
    tab = SelectionTab()
    state = tab.state
    assert not tab.widgets["target"].visible
    assert set(F.settings(state)) == _SETTINGS_KEYS
    state.upload_csv("my data.csv", "a,b,c\n1,2,3\n4,5,6\n7,8,9\n")
    assert state.dataset == UPLOAD and tab.widgets["target"].visible
    settings = F.settings(state)
    assert set(settings) == _SETTINGS_KEYS | {"target", "file", "sha256"}
    assert settings["target"] == "c" and settings["file"] == "my data.csv"
    state.dataset = "toy"
    assert not tab.widgets["target"].visible and "target" not in F.settings(state)


def test_the_settings_json_holds_the_values_of_the_controls():
    state = SelectionState(n_points=32, kernel="rq", criteria=["loo", "evidence"], curve_decades=0.5)
    sidecar = json.loads(F.settings_text(state))["settings"]
    assert sidecar == {name: getattr(state, name) for name in _SETTINGS_KEYS}
    assert sidecar["criteria"] == ["loo", "evidence"] and sidecar["curve_decades"] == 0.5


#: Which jobs' keys a change of each control changed in the hand-written keys (data settings and the seed:
#: every job, through the problem's key; the criteria's options: every job).
_OLD_KEYS = {
    "n_points": set(JOB_KINDS), "n_test": set(JOB_KINDS), "standardize": set(JOB_KINDS), "seed": set(JOB_KINDS),
    "kernel": {"curves", "optima"}, "criteria": set(JOB_KINDS), "parameter": {"curves"}, "curve_points": {"curves"},
    "curve_decades": {"curves"}, "n_folds": set(JOB_KINDS), "n_partitions": set(JOB_KINDS),
    "n_objects": set(JOB_KINDS), "entropy": set(JOB_KINDS), "n_restarts": {"optima", "ranking"},
    "max_iter": {"optima", "ranking"}, "rank_kernels": {"ranking"}, "select_by": {"ranking"},
    "auto_run": set(), "subpanel": set(),
}
_CHANGES = {"n_points": 40, "n_test": 100, "standardize": True, "seed": 3, "kernel": "rq",
            "criteria": ["evidence", "loo"], "parameter": "noise_std", "curve_points": 9, "curve_decades": 0.5,
            "n_folds": 3, "n_partitions": 4, "n_objects": 5, "entropy": "prior", "n_restarts": 2, "max_iter": 8,
            "rank_kernels": ["se", "rq"], "select_by": "evidence", "auto_run": False, "subpanel": "experiments"}


@pytest.mark.parametrize("name", list(_CHANGES))
def test_the_derived_job_keys_change_as_the_hand_written_ones(name):
    state = SelectionState()
    before = state._prepare_jobs().keys
    setattr(state, name, _CHANGES[name])
    after = state._prepare_jobs().keys
    assert {kind for kind in JOB_KINDS if before[kind] != after[kind]} == _OLD_KEYS[name]
    for kind in JOB_KINDS:
        hash(after[kind])  # the result caches need hashable keys


def test_the_order_of_the_chosen_criteria_is_no_other_computation():
    one, two = SelectionState(criteria=["loo", "evidence"]), SelectionState(criteria=["evidence", "loo"])
    assert one._prepare_jobs().keys == two._prepare_jobs().keys


def test_every_declared_control_is_in_the_sidebar_or_named_by_the_tab():
    assert declarations.groups(SelectionState)  # the sidebar is derived, so every grouped control has a widget
    grouped = {n for names in declarations.groups(SelectionState).values() for n in names}
    assert set(declarations.control_names(SelectionState)) - grouped == {"subpanel"}
    assert set(declarations.invalidating(SelectionState)) == set(_OLD_KEYS) - {"auto_run", "subpanel"} | {
        "dataset", "target"}


def _old_visible(state: SelectionExperimentState) -> set[str]:
    """The Experiments controls shown, by the rule the panel applied by hand: what ``settings()`` uses, the data
    only for the experiments that can use the temperature series, its data-folder file when there is one."""
    used = set(state.settings()) | {"experiment"}
    if state.experiment not in TEMPERATURE_EXPERIMENTS:
        used.discard("data")
    if state._uses_temperature() and len(state.param.temperature_csv.objects) > 1:
        used.add("temperature_csv")
    return used


@pytest.mark.parametrize("experiment", list(EXPERIMENTS))
@pytest.mark.parametrize("data", EXPERIMENT_DATA)
def test_the_experiments_show_the_controls_they_use(tmp_path, experiment, data):
    (tmp_path / "series.csv").write_text("day_of_year,mean_anomaly_by_file_doy\n1,0.5\n")
    for data_dir in (None, str(tmp_path)):
        panel = SelectionExperimentsPanel(state=SelectionExperimentState(data_dir=data_dir))
        state = panel.state
        state.param.update(experiment=experiment, data=data)
        shown = {name for name, widget in panel.widgets.items() if widget.visible}
        assert shown == _old_visible(state)
        assert panel.upload.visible == (data == "temperature" and experiment in TEMPERATURE_EXPERIMENTS)


class _WithExtra(SelectionState):
    """A state with one more control, declared once."""

    jitter = param.Number(default=0.25, bounds=(0, 1), label="Jitter",
                          metadata=control("Curves", invalidates=("curves",)))


def test_a_control_declared_once_is_in_the_sidebar_the_link_the_settings_and_the_curves_key():
    tab = SelectionTab(state=_WithExtra())
    explore = tab.controls.objects[0]
    names = _names(explore, tab.widgets, tab.upload)
    assert names[names.index("curve_decades") + 1] == "jitter"
    assert "explorer-selection-jitter" in tab.widgets["jitter"].css_classes
    assert "jitter" in link_parameters(tab.state)
    assert F.settings(tab.state)["jitter"] == 0.25
    before = tab.state._prepare_jobs().keys
    tab.state.jitter = 0.5
    after = tab.state._prepare_jobs().keys
    assert {kind for kind in JOB_KINDS if before[kind] != after[kind]} == {"curves"}


#: The controls the states watched by hand to recompute: the Explore state's list (its results and ``auto_run``),
#: the Experiments state's every control.
_OLD_WATCHED = {"dataset", "target", "n_points", "n_test", "standardize", "kernel", "parameter", "criteria",
                "curve_points", "curve_decades", "n_folds", "n_partitions", "n_objects", "entropy", "n_restarts",
                "max_iter", "rank_kernels", "select_by", "seed", "auto_run"}


def _watched(state) -> set[str]:
    return {name for name, what in state.param.watchers.items() for watchers in what.values()
            for watcher in watchers if getattr(watcher.fn, "__name__", "") == "_on_change"}


def test_the_states_watch_the_controls_they_watched():
    assert _watched(SelectionState()) == _OLD_WATCHED
    assert _watched(SelectionExperimentState()) == set(_EXPERIMENT_LINK)
