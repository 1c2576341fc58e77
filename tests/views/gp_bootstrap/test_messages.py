"""Messages beside the figure and kernel fields only where they apply (issue 36): the state's error and notice lie
over each tab's figure (an error covers it: no axes of other data), not under the tabs; α shows for the rq kernel
only, the period for the periodic one only."""

import pytest

pytest.importorskip("panel")

from explorer.views.common.state.errors import OVER_FIGURE_CSS  # noqa: E402
from explorer.views.gp_bootstrap.state import GP_TABS, KERNELS, GPBootstrapState  # noqa: E402
from explorer.views.gp_bootstrap.tab import GPBootstrapView, GPControls  # noqa: E402

pytestmark = pytest.mark.usefixtures("empty_view_caches")


def _over_figure_layer(tab):
    """The layer over ``tab``'s main figure (the first element of its content)."""
    box = tab.content().objects[0]
    assert OVER_FIGURE_CSS["figure"] in box.css_classes
    return box.objects[1]


def test_a_refused_upload_covers_every_tab_s_figure_with_its_reason():
    state = GPBootstrapState(dataset="toy", auto_mc=False)
    view = GPBootstrapView(state=state)
    state.upload_csv("bad.csv", b"a,b\n1,2\n")  # 1 row: refused with a message
    assert state.error and state.problem is None
    for name in GP_TABS:
        tab = view.tab_views[name]
        layer = _over_figure_layer(tab)
        assert tab.error in layer.objects and tab.error.visible and tab.error.object == state.error
        assert layer.visible and layer.styles["height"] == "100%"  # the empty figure's axes are covered
        assert "see the message over the figure" in tab.describe() or name != "curve"
    assert view.error is view.tab_views[state.tab].error  # the notebook's handle: the open tab's alert


def test_the_page_shows_no_second_copy_of_the_messages_under_the_tabs():
    from explorer.views.common.layout.page import PageContext
    from explorer.views.gp_bootstrap.page import PAGE

    page = PAGE.view(PageContext(settings={"dataset": "toy", "auto_mc": False}))
    try:
        assert page.messages is None
    finally:
        page.view.state.close()


def test_a_notice_lies_over_the_top_of_the_figure_and_leaves_it_uncovered():
    state = GPBootstrapState(dataset="toy", auto_mc=False)
    tab = GPBootstrapView(state=state).tab_views["curve"]
    state.tell("link", "Ignored link parameter(s) that do not fit this app: x=1.")
    layer = _over_figure_layer(tab)
    assert tab.notice.visible and layer.visible and layer.styles["height"] == "auto"
    assert not tab.error.visible


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_fields_show_only_for_the_kernel_that_uses_them(kernel):
    state = GPBootstrapState(dataset="toy", auto_mc=False)
    widgets = GPControls(state=state).widgets
    state.kernel = kernel
    shown = {name for name in ("l2", "lengthscale", "signal_var", "alpha", "period") if widgets[name].visible}
    expected = {"paper": {"l2"}, "rq": {"lengthscale", "signal_var", "alpha"},
                "periodic": {"lengthscale", "signal_var", "period"}}.get(kernel, {"lengthscale", "signal_var"})
    assert shown == expected
