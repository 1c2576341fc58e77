"""One declaration per control on the Gaussian-process pages (issue 38, item 1): the sidebar, the link, the lists of
controls the state watches, the kernel's values, the loss parameters and the settings JSON are derived from the
state's declarations; each is checked here against the list or rule the page wrote by hand before (copied below as
the reference), and a control declared once shows in the sidebar, the link and the settings."""

import numpy as np
import pytest

pytest.importorskip("panel")

import panel as pn  # noqa: E402
import param  # noqa: E402

from explorer import kernels  # noqa: E402
from explorer.gp_bootstrap import problem as problems  # noqa: E402
from explorer.views.common.layout.widgets import param_widget  # noqa: E402
from explorer.views.common.state import declarations  # noqa: E402
from explorer.views.common.state.links import Linked, link_parameters, query_of  # noqa: E402
from explorer.views.gp_bootstrap import figures  # noqa: E402
from explorer.views.gp_bootstrap.settings import REFRESH_STAGES  # noqa: E402
from explorer.views.gp_bootstrap.state import (  # noqa: E402
    FITTED_DATASETS,
    MAX_ROWS,
    REGRESSION_DATASETS,
    SUBSAMPLE_SEED,
    URL_PARAMETERS,
    GPBootstrapState,
)
from explorer.views.gp_bootstrap.tab import GPControls  # noqa: E402

TIMEOUT = 180
pytestmark = pytest.mark.usefixtures("empty_view_caches")

# --- the lists the page wrote by hand before its controls were declared (the reference)
OLD_URL = ("dataset", "target", "subsample", "standardize", "ard", "rank", "kernel", "l2", "lengthscale", "signal_var",
           "alpha", "period", "noise_var", "s_over_n", "loss", "eps", "beta", "curve_mc_samples", "mc_samples", "seed",
           "auto_mc", "holdout", "input_index", "show_components", "tab")
OLD_COMPUTE = tuple(p for p in OLD_URL if p not in ("input_index", "show_components"))
OLD_HYPER = ("kernel", "l2", "lengthscale", "signal_var", "alpha", "period", "noise_var")
OLD_ON_DATA = ("dataset", "target", "standardize", "subsample", "ard")
OLD_ON_KERNEL = ("kernel", "lengthscale", "signal_var")
OLD_SIDEBAR = ("### Data", "dataset", "note", "upload", "target", "subsample", "rank", "standardize", "holdout",
               "### Model", "kernel", "ard", "l2", "lengthscale", "signal_var", "alpha", "period", "noise_var",
               "### Bootstrap", "s_over_n", "loss", "eps", "beta", "curve_mc_samples", "mc_samples", "seed", "auto_mc")
OLD_KINDS = {**dict.fromkeys(("dataset", "target", "kernel", "loss"), pn.widgets.Select),
             **dict.fromkeys(("l2", "lengthscale", "signal_var", "alpha", "period", "noise_var", "eps", "beta"),
                             pn.widgets.FloatInput),
             **dict.fromkeys(("holdout", "rank", "curve_mc_samples", "mc_samples", "seed"), pn.widgets.IntInput),
             **dict.fromkeys(("auto_mc", "standardize", "subsample", "ard"), pn.widgets.Checkbox),
             "s_over_n": pn.widgets.EditableFloatSlider}


def old_visibility(s: GPBootstrapState) -> dict[str, bool]:
    """The sidebar's visibility rules as the tab wrote them by hand (``GPControls._update_visibility``)."""
    csv = s.dataset not in REGRESSION_DATASETS
    ard = (csv or s.dataset in FITTED_DATASETS) and s.kernel == "se"
    eps = s.loss == "eps-insensitive"
    return {"target": csv, "subsample": csv, "rank": s.low_rank, "ard": ard, "l2": s.kernel == "paper",
            "signal_var": s.kernel != "paper", "lengthscale": s.kernel != "paper" and not (ard and s.ard),
            "alpha": s.kernel == "rq", "period": s.kernel == "periodic", "eps": eps, "beta": eps}


def old_settings(s: GPBootstrapState) -> dict:
    """The settings JSON as ``figures.settings`` wrote it by hand."""
    if s.kernel == "paper":
        kernel = {"l2": float(s.l2)}
    else:
        extra = {"rq": {"alpha": float(s.alpha)}, "periodic": {"period": float(s.period)}}.get(s.kernel, {})
        ells = s.ard_lengthscales
        ard = {} if ells is None else {"ard_lengthscales": [float(v) for v in ells]}
        kernel = {"lengthscale": float(s.lengthscale), "signal_var": float(s.signal_var), **extra, **ard}
    out = {"dataset": s.dataset, "standardize": bool(s.standardize), "holdout": int(s.holdout), "kernel": s.kernel,
           **kernel, "noise_var": float(s.noise_var), "s_over_n": float(s.s_over_n), "loss": s.loss,
           "curve_mc_samples": int(s.curve_mc_samples), "mc_samples": int(s.mc_samples),
           "input_index": int(s.index), "seed": int(s.seed)}
    if s.target:
        out["target"] = s.target
    if s.low_rank:
        out["rank"] = int(s.rank)
    if s.loss != "square":
        out.update(eps=float(s.eps), beta=float(s.beta))
    file = s.data_file()
    if file is not None:
        subsample = {"rows": MAX_ROWS, "seed": SUBSAMPLE_SEED} if s.subsample else None
        out.update(file=file["file"], sha256=file["sha256"], subsample=subsample)
    out["hyperparameters"] = s.hyperparameter_source
    if s.hyperparameter_source == "evidence" and s.evidence is not None:
        fit = s.evidence
        out["evidence"] = {"log_evidence": fit.log_evidence, "rows": fit.n,
                           "lengthscale": np.asarray(fit.lengthscale).tolist(), "signal_var": fit.signal_var,
                           "noise_var": fit.noise_var, "ard": bool(np.ndim(fit.lengthscale) > 0)}
    if s.problem is not None:
        out["kernel_parameters"] = {name: np.asarray(v).tolist() for name, v in s.problem.kernel.params.items()}
        out["rows"] = int(s.problem.n)
        out["bin_width"] = float(s.bin_width)
        out["low_rank"] = None
    return out


def csv_text(n: int = 20, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 2)), 6)
    y = np.round(np.sin(X[:, 0]) + 0.1 * rng.normal(size=n), 6)
    return "x0,x1,y\n" + "\n".join(",".join(f"{v:.6f}" for v in (*x, t)) for x, t in zip(X, y)) + "\n"


def check_settings(s: GPBootstrapState) -> None:
    """The derived settings JSON holds the old one's keys and values, and ``ard`` where it applies (its one new key)."""
    got = figures.settings(s)
    expected = old_settings(s)
    if s.problem is not None:
        assert got.pop("low_rank") is None  # dense data here
        expected.pop("low_rank")
    fits_ard = (s.dataset not in REGRESSION_DATASETS or s.dataset in FITTED_DATASETS) and s.kernel == "se"
    assert ("ard" in got) == fits_ard
    if fits_ard:
        assert got.pop("ard") is bool(s.ard)
    assert got == expected


# ------------------------------------------------------------------------------------------------ the lists


def test_the_link_carries_the_same_controls_and_the_same_query():
    s = GPBootstrapState(dataset="toy", auto_mc=False, kernel="rq", alpha=2.0, loss="eps-insensitive", seed=3)
    assert set(link_parameters(s)) == set(OLD_URL) - {"tab"}  # the page's own ``tab`` carries the open tab
    assert set(URL_PARAMETERS) == set(OLD_URL)
    for changed_only in (False, True):
        old = query_of(Linked(s, "", tuple(n for n in OLD_URL if n != "tab")), changed_only=changed_only)
        new = query_of(Linked(s, "", link_parameters(s)), changed_only=changed_only)
        assert new == old
    assert query_of(Linked(s, "", link_parameters(s)), changed_only=True) == {
        "dataset": "toy", "kernel": "rq", "alpha": "2.0", "loss": "eps-insensitive", "seed": "3", "auto_mc": "false"}
    s.close()


def test_the_state_watches_the_same_controls_as_before():
    s = GPBootstrapState(auto_mc=False)
    assert set(declarations.invalidating(s, *REFRESH_STAGES)) == set(OLD_COMPUTE)
    assert set(declarations.invalidating(s, "hyperparameters")) == set(OLD_HYPER)
    assert set(declarations.invalidating(s, "evidence")) == set(OLD_ON_DATA)
    assert set(declarations.invalidating(s, "kernel start")) == set(OLD_ON_KERNEL)
    assert set(declarations.invalidating(s, "figures", "distribution figure")) == {"tab", "input_index",
                                                                                   "show_components"}
    assert set(declarations.invalidating(s, "figures", "curve figure")) == {"tab", "loss"}
    s.close()


def test_a_view_option_redraws_without_a_refresh_and_a_setting_refreshes():
    s = GPBootstrapState(dataset="toy", auto_mc=False, tab="distribution")
    s.refresh()
    assert s.wait(TIMEOUT)
    solution = s.solution
    s.show_components = True  # a pure view option: nothing computed again
    assert s.solution is solution
    s.s_over_n = 2.0
    assert s.wait(TIMEOUT) and s.solution.s_over_n == pytest.approx(2.0)
    s.close()


def test_the_loss_parameters_are_those_of_the_chosen_loss():
    s = GPBootstrapState(auto_mc=False)
    assert s.loss_params == {} and s._loss_key() == ("square",)
    s.param.update(loss="eps-insensitive", eps=0.3, beta=0.2)
    assert s.loss_params == {"eps": 0.3, "beta": 0.2}
    assert s._loss_key() == ("eps-insensitive", 0.3, 0.2)
    s.close()


# ------------------------------------------------------------------------------------------------ the sidebar


def _sidebar_names(controls: GPControls) -> list[str]:
    by_id = {id(w): name for name, w in controls.widgets.items()}
    names = []
    for item in controls._column.objects:
        if id(item) in by_id:
            names.append(by_id[id(item)])
        elif item is controls.upload:
            names.append("upload")
        elif isinstance(item, pn.pane.Markdown):
            names.append(item.object if item.object.startswith("###") else "note")
    return names


def test_the_sidebar_has_the_same_widgets_classes_and_order():
    s = GPBootstrapState(auto_mc=False)
    controls = GPControls(state=s)
    assert tuple(_sidebar_names(controls)) == OLD_SIDEBAR
    assert "explorer-controls" in controls._column.css_classes
    assert controls.upload.css_classes == ["explorer-upload"]
    for name, widget in controls.widgets.items():
        old = param_widget(s, name, OLD_KINDS[name], "explorer")  # as the tab built it by hand
        assert type(widget) is type(old), name
        assert widget.css_classes == [f"explorer-{name.replace('_', '-')}"] == old.css_classes
        assert widget.name == old.name, name
    slider = controls.widgets["s_over_n"]
    assert slider.format == "0.00" and slider._slider._debounce == 0  # throttled, responds at once
    s.close()


@pytest.mark.parametrize("kernel", ["paper", "se", "rq", "periodic"])
@pytest.mark.parametrize("loss", ["square", "eps-insensitive"])
def test_the_sidebar_shows_what_applies_as_the_old_rules_did(kernel, loss):
    s = GPBootstrapState(dataset="toy", auto_mc=False)
    controls = GPControls(state=s)
    s.param.update(kernel=kernel, loss=loss)
    visible = {name: w.visible for name, w in controls.widgets.items()}
    assert visible == {name: old_visibility(s).get(name, True) for name in visible}
    s.close()


def test_the_sidebar_follows_a_csv_and_ard_as_the_old_rules_did():
    s = GPBootstrapState(dataset="toy", auto_mc=False)
    controls = GPControls(state=s)
    s.upload_csv("small.csv", csv_text().encode())
    assert s.wait(TIMEOUT) and s.kernel == "se"
    for ard in (False, True):
        s.ard = ard
        assert s.wait(TIMEOUT)
        visible = {name: w.visible for name, w in controls.widgets.items()}
        assert visible == {name: old_visibility(s).get(name, True) for name in visible}
    assert not controls.widgets["lengthscale"].visible  # ARD: one ℓ per input, none to set
    s.close()


# ------------------------------------------------------------------------------------------------ the problem


@pytest.mark.parametrize("kernel", ["paper", "se", "rq", "periodic", "matern32"])
def test_the_kernel_of_the_controls_is_the_one_built_by_hand(kernel):
    s = GPBootstrapState(dataset="toy", auto_mc=False, kernel=kernel, alpha=2.5, period=3.0)
    s.refresh()
    assert s.wait(TIMEOUT) and s.error == ""
    data = s.data.load()
    if kernel == "paper":
        by_hand = kernels.paper_rbf(data.inputs, l2=s.l2, scale="sd")
    else:
        hyper = {"lengthscale": s.lengthscale, "signal_var": s.signal_var}
        hyper.update({"rq": {"alpha": s.alpha}, "periodic": {"period": s.period}}.get(kernel, {}))
        by_hand = kernels.make_kernel(kernel, data.inputs.shape[1], **hyper)
    expected = problems.regression_problem(data, by_hand, s.noise_var)
    assert s.problem.K == pytest.approx(expected.K, rel=1e-12, abs=1e-14)
    s.close()


# ------------------------------------------------------------------------------------------------ settings JSON


@pytest.mark.parametrize("params", [{}, {"kernel": "rq", "alpha": 2.5, "loss": "eps-insensitive", "eps": 0.2},
                                    {"kernel": "periodic", "period": 2.0, "input_index": 7, "seed": 5}])
def test_the_settings_json_is_the_one_written_by_hand(params):
    s = GPBootstrapState(dataset="teacher", auto_mc=False, tab="distribution", **params)
    check_settings(s)  # before any result
    s.refresh()
    assert s.wait(TIMEOUT)
    check_settings(s)
    s.close()


def test_the_settings_json_of_a_csv_gains_only_ard():
    s = GPBootstrapState(auto_mc=False, tab="distribution")
    s.upload_csv("small.csv", csv_text().encode())
    assert s.wait(TIMEOUT) and s.hyperparameter_source == "evidence"
    check_settings(s)
    s.ard = True
    assert s.wait(TIMEOUT) and s.ard_lengthscales is not None
    check_settings(s)
    s.close()


# ------------------------------------------------------------------------------------------------ a new control


class _WithANewControl(GPBootstrapState):
    """The page's state with one more control, declared once."""

    extra_samples = param.Integer(default=7, bounds=(1, 100), label="Extra samples", doc="A new control.",
                                  metadata=declarations.control("Bootstrap", invalidates=("mc",)))


def test_a_control_declared_once_shows_in_the_sidebar_the_link_the_watch_list_and_the_settings():
    s = _WithANewControl(dataset="toy", auto_mc=False)
    controls = GPControls(state=s)
    names = _sidebar_names(controls)
    assert names[names.index("auto_mc") + 1] == "extra_samples"  # the end of its group
    assert controls.widgets["extra_samples"].css_classes == ["explorer-extra-samples"]
    assert isinstance(controls.widgets["extra_samples"], pn.widgets.IntInput)
    assert "extra_samples" in link_parameters(s)
    assert "extra_samples" in declarations.invalidating(s, *REFRESH_STAGES)
    assert figures.settings(s)["extra_samples"] == 7
    s.extra_samples = 9
    assert query_of(Linked(s, "", link_parameters(s)), changed_only=True)["extra_samples"] == "9"
    s.close()
