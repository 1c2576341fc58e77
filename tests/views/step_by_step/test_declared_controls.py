"""The step-by-step page's controls are declared once, in its state (issue 38 item 1): the sidebar, the watch list,
the settings its resamples are kept under, the link and the kernel's hyperparameters derived from the declarations
equal what the page wrote by hand before; the sentences live in a module of their own (issue 38 item 2)."""
import numpy as np
import param
import pytest

pn = pytest.importorskip("panel")

from explorer import kernels  # noqa: E402
from explorer.views.common.state import declarations  # noqa: E402
from explorer.views.common.state.declarations import control  # noqa: E402
from explorer.views.common.state.links import link_parameters  # noqa: E402
from explorer.views.step_by_step import sentences  # noqa: E402
from explorer.views.step_by_step.state import StepState  # noqa: E402
from explorer.views.step_by_step.tab import StepTab  # noqa: E402

#: The settings the state watched and kept its resamples under, as it listed them by hand before.
OLD_SETTINGS = ("dataset", "n_points", "kernel", "lengthscale", "signal_var", "alpha", "period", "noise_var",
                "s_over_n", "seed")
#: The link's parameters before (``LINK_PARAMETERS``).
OLD_LINK = (*OLD_SETTINGS, "input_index")
#: The hand-written sidebar before: headings and the controls by name, with their widgets.
OLD_SIDEBAR = ("### Data", "dataset", "n_points", "### Kernel and noise", "kernel", "lengthscale", "signal_var",
               "alpha", "period", "noise_var", "### Resamples", "seed", "input_index")
OLD_KINDS = {"dataset": pn.widgets.Select, "n_points": pn.widgets.IntInput, "kernel": pn.widgets.Select,
             "lengthscale": pn.widgets.FloatInput, "signal_var": pn.widgets.FloatInput,
             "alpha": pn.widgets.FloatInput, "period": pn.widgets.FloatInput, "noise_var": pn.widgets.FloatInput,
             "seed": pn.widgets.IntInput, "input_index": pn.widgets.IntInput}


def _items(column: pn.Column, tab: StepTab) -> list[str]:
    names = {id(widget): name for name, widget in tab.widgets.items()}
    return [names.get(id(item), getattr(item, "object", None)) for item in column.objects]


def test_the_declared_sidebar_is_the_old_hand_written_one():
    tab = StepTab(state=StepState())
    column = tab.control_column()
    assert _items(column, tab) == list(OLD_SIDEBAR)
    assert column.css_classes == ["explorer-steps-controls"] and column.sizing_mode == "stretch_width"
    assert set(tab.widgets) == set(OLD_KINDS)
    for name, kind in OLD_KINDS.items():
        widget = tab.widgets[name]
        assert type(widget) is kind, name
        assert widget.css_classes == [f"explorer-steps-{name.replace('_', '-')}"]
        assert widget.name == StepState.param[name].label
    tab.state.close()


@pytest.mark.parametrize("kernel, alpha, period", [("se", False, False), ("rq", True, False),
                                                   ("periodic", False, True), ("matern32", False, False)])
def test_alpha_and_the_period_show_only_for_their_kernels(kernel, alpha, period):
    tab = StepTab(state=StepState())
    tab.state.kernel = kernel
    assert (tab.widgets["alpha"].visible, tab.widgets["period"].visible) == (alpha, period)
    assert all(w.visible for name, w in tab.widgets.items() if name not in ("alpha", "period"))
    tab.state.close()


def test_links_watch_list_and_kept_settings_are_the_old_lists():
    state = StepState()
    assert link_parameters(state) == OLD_LINK
    assert declarations.invalidating(state) == OLD_SETTINGS
    assert declarations.view_options(state) == ("input_index",)  # the figures showing point i update, nothing more
    assert declarations.control_names(state) == OLD_LINK  # Playing and the outputs are no controls
    state.close()


def test_point_i_computes_nothing_and_a_setting_recomputes():
    state = StepState(seed=2)
    state.refresh()
    problem = state.problem
    state.input_index = 5
    assert state.problem is problem and state.index == 5
    state.seed = 3
    assert state.problem is not problem
    state.close()


@pytest.mark.parametrize("name, hyper", [("se", {}), ("rq", {"alpha": 0.5}), ("periodic", {"period": 0.3}),
                                         ("exponential", {})])
def test_the_kernel_takes_the_old_hand_picked_hyperparameters(name, hyper):
    settings = {"lengthscale": 0.2, "signal_var": 2.0, "alpha": 0.5, "period": 0.3}
    state = StepState(kernel=name, **settings)
    state.refresh()
    assert state.error == ""
    # the old hand-written choice: lengthscale and signal variance always, α for rq, the period for periodic
    old = kernels.make_kernel(name, 1, lengthscale=0.2, signal_var=2.0, **hyper)
    X = state.problem.X
    np.testing.assert_allclose(state.problem.K, old(X), rtol=1e-12, atol=1e-12)
    state.close()


def test_the_kept_resamples_are_keyed_by_every_setting_that_makes_them_stale():
    state = StepState(seed=1)
    state.refresh()
    state.draw(4)
    state.noise_var = 0.2  # another setting than S/N: kept, but not listed among the other S/N values
    assert state.kept_s_over_n() == {} and "earlier settings are kept" in state.sentence()
    state.noise_var = 0.1
    assert state.n_drawn == 4
    state.s_over_n = 2.0
    assert state.kept_s_over_n() == {1.0: 4}
    state.close()


def test_the_kept_sentence_says_where_the_resamples_are():
    assert sentences.kept_sentence({}, False) == ""
    assert "earlier settings are kept" in sentences.kept_sentence({}, True)
    text = sentences.kept_sentence({1.0: 1, 2.5: 1200}, True)
    assert "(1 resample at S/N = 1.00, 1,200 resamples at S/N = 2.50)" in text


class _WiderState(StepState):
    """The step state with one more control, declared once."""

    jitter = param.Number(default=0.0, bounds=(0.0, 1.0), label="Jitter", doc="A control added for the test.",
                          metadata=control("Kernel and noise", invalidates=("problem", "theory", "resamples")))


def test_a_new_control_declared_once_is_in_the_sidebar_the_link_and_the_kept_settings():
    state = _WiderState()
    tab = StepTab(state=state)
    items = _items(tab.control_column(), tab)
    assert items[items.index("noise_var") + 1] == "jitter" and items.index("jitter") < items.index("### Resamples")
    assert link_parameters(state)[-1] == "jitter" and declarations.invalidating(state)[-1] == "jitter"
    state.refresh()
    state.draw(2)
    state.jitter = 0.5  # a new setting: a new set of resamples, those drawn kept
    assert state.n_drawn == 0
    state.jitter = 0.0
    assert state.n_drawn == 2
    state.close()
