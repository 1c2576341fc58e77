"""The fast-bootstrap figures ([LSWV05]) are readable at 1280x720 and on a projector: legends beside the data
with click-to-hide, y-axis labels short enough for the plots' height, the better direction stated."""
import pytest

from explorer.views import fast_bootstrap as V
from explorer.views.common.layout.presentation import presented
from tests.views.common.figures import right_legend, title_fits, y_label_fits
from tests.views.fast_bootstrap.settings import small_state

pytestmark = pytest.mark.usefixtures("one_blas_thread", "empty_view_caches")

FIGURES = {"optimism": V.optimism_plot, "generalization": V.generalization_plot}
#: The width of the tab's figures at 1280x720 with the controls in the sidebar (the plots are responsive).
WIDTH_AT_1280 = 850


@pytest.fixture(scope="module")
def computed():
    state = small_state()
    state.refresh()
    assert state.error == "" and state.wait(timeout=60)
    yield state
    state.close()


@pytest.mark.parametrize("what", list(FIGURES))
def test_legend_sits_beside_the_data_and_hides_a_method_on_click(computed, what):
    legend = right_legend(FIGURES[what](computed))
    assert legend.click_policy == "hide" and len(legend.items) >= 2


@pytest.mark.parametrize("presentation", [False, True])
@pytest.mark.parametrize("what", list(FIGURES))
def test_y_label_and_title_fit_the_plot_at_1280x720(computed, what, presentation):
    for state in (computed, small_state()):  # with a result and before one
        figure = presented(FIGURES[what](state), presentation)
        assert y_label_fits(figure, figure.opts.get().kwargs["height"])
        assert title_fits(figure, WIDTH_AT_1280)


def test_titles_say_what_the_optimism_is_and_which_error_is_better(computed):
    assert "Optimism = generalization − apparent error, eq. (6)" in V.optimism_plot(computed).opts.get().kwargs["title"]
    fit = [e.label for e in V.optimism_plot(computed) if e.label.startswith("degree-")]
    assert fit == [f"degree-2 fit in log q (F test p = {computed.comparison.fast.f_test.p_value:.2g})"]
    assert "lower is better" in V.generalization_plot(computed).opts.get().kwargs["title"]
    assert "eq. (8)" in V.generalization_plot(computed).opts.get().kwargs["title"]
