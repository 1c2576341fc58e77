"""Error wordings: each page's sentences in its own folder (``explorer/views/<page>/errors.py``), first match wins,
then what every page says (``explorer.views.common.state.errors.COMMON``)."""

import re

import numpy as np
import pytest

pytest.importorskip("panel")

from explorer.bootstrap.replica import ConvergenceError  # noqa: E402
from explorer.datasets import DatasetError  # noqa: E402
from explorer.runtime.engine import EngineError  # noqa: E402
from explorer.svm_bootstrap.classifier import NotSeparableError  # noqa: E402
from explorer.views.common.state.errors import describe_error  # noqa: E402
from explorer.views.fast_bootstrap.errors import WORDING as FASTBOOT  # noqa: E402
from explorer.views.gp_bootstrap.errors import WORDING as GP  # noqa: E402
from explorer.views.model_selection.errors import WORDING as SELECTION  # noqa: E402
from explorer.views.svm_bootstrap.errors import WORDING as SVM  # noqa: E402

#: Each page's wordings by the key the tests name them with.
WORDINGS = {"gp": GP, "svm": SVM, "selection": SELECTION, "fastboot": FASTBOOT, None: ()}


@pytest.mark.parametrize("page,err,expected", [
    ("gp", ConvergenceError("no fixed point.", None), r"^The replica \(ADATAP\) theory did not converge: no fixed "
                                                      r"point\. Try a larger noise σ²"),
    ("gp", np.linalg.LinAlgError("not positive definite"), r"^The kernel matrix could not be factorised \(not "
                                                           r"positive definite\)\. Increase the noise σ²"),
    ("svm", NotSeparableError("two identical inputs carry different labels"),
     r"^The data cannot be separated by a hard-margin SVM: two identical inputs carry different labels$"),
    ("svm", NotSeparableError("no margin"), r"^The data cannot be separated by a hard-margin SVM with this kernel: "
                                            r"no margin A shorter lengthscale L"),
    ("selection", ConvergenceError("stuck.", None), r"bootstrap \.632 criterion did not converge: stuck\. Leave out"),
    ("fastboot", np.linalg.LinAlgError("singular"), r"^A least-squares or kernel system could not be solved"),
    ("fastboot", FloatingPointError("overflow"), r"^FloatingPointError: overflow$"),  # no wording: its type
    ("svm", DatasetError("column 'y' has one class"), r"^The data cannot be used: column 'y' has one class$"),
    (None, ValueError("S/N must be positive."), r"^S/N must be positive\.$"),
    (None, EngineError("The Dask engine dropped this job."), r"^The Dask engine dropped this job\.$"),
    (None, KeyError("x"), r"^KeyError: 'x'$"),
])
def test_each_page_says_its_sentence(page, err, expected):
    text = describe_error(err, WORDINGS[page])
    assert re.search(expected, text), text


def test_a_brace_in_an_error_message_is_kept():
    assert describe_error(ValueError("a {b} c")) == "a {b} c"


def test_the_states_use_their_page_s_wordings():
    from explorer.views.fast_bootstrap.state import FastBootstrapState
    from explorer.views.gp_bootstrap.state import GPBootstrapState
    from explorer.views.model_selection.state import SelectionState
    from explorer.views.step_by_step.state import StepState
    from explorer.views.svm_bootstrap.state import SVMState

    err = np.linalg.LinAlgError("x")
    for cls, key in ((GPBootstrapState, "gp"), (SVMState, "svm"), (SelectionState, "selection"),
                     (FastBootstrapState, "fastboot"), (StepState, "gp")):
        assert cls.describe_error(err) == describe_error(err, WORDINGS[key]) != describe_error(err)


# ------------------------------------------------------------------------------ where a tab shows them


def _alert(text: str = ""):
    import panel as pn

    return pn.pane.Alert(text, visible=bool(text))


def _show(alert, text: str) -> None:
    alert.param.update(object=text, visible=bool(text))


def test_an_error_covers_the_figure_and_a_notice_lies_over_its_top():
    import panel as pn

    from explorer.views.common.state.errors import over_figure

    figure, error, notice = pn.pane.Markdown("the figure"), _alert(), _alert()
    box = over_figure(figure, error, notice)
    shown, layer = box.objects
    assert shown is figure and box.styles["position"] == "relative"  # the layer's positions are the figure's
    assert not layer.visible  # no message: nothing over the figure
    _show(notice, "Kernel se chosen by maximum evidence.")
    assert layer.visible and layer.styles["position"] == "absolute" and layer.styles["height"] == "auto"
    _show(error, "big.csv has 1,500 rows")
    assert layer.visible and layer.styles["height"] == "100%" and layer.styles["background"] != "transparent"
    _show(error, "")
    assert layer.visible and layer.styles["height"] == "auto"  # the notice again, the figure uncovered


def test_the_hide_button_hides_a_notice_until_its_text_changes():
    import panel as pn

    from explorer.views.common.state.errors import OVER_FIGURE_CSS, over_figure

    notice = _alert("Ignored link parameter(s): x=1.")
    layer = over_figure(pn.pane.Markdown("figure"), None, notice).objects[1]
    (row,) = layer.objects
    hide = next(w for w in row.objects if OVER_FIGURE_CSS["hide"] in w.css_classes)
    hide.clicks += 1
    assert not layer.visible
    _show(notice, "Ignored link parameter(s): y=2.")  # a new notice shows again
    assert layer.visible and row.visible
