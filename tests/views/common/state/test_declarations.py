"""The declarations of controls (explorer.views.common.state.declarations) and what the sidebar and links derive from them."""

import numpy as np
import panel as pn
import param

from explorer.views.common.layout import widgets
from explorer.views.common.state import declarations, links
from explorer.views.common.state.declarations import control


class _Toy(param.Parameterized):
    dataset = param.Selector(default="a", objects=["a", "b"], metadata=control("Data", invalidates=("data",)))
    noise = param.Number(default=0.1, bounds=(0, 1), metadata=control("Model", invalidates=("kernel", "theory")))
    loss = param.Selector(default="square", objects=["square", "eps"], metadata=control("Model",
                                                                                        invalidates=("theory",)))
    eps = param.Number(default=0.5, bounds=(0, 2), metadata=control(
        "Model", invalidates=("theory",), applies=lambda s: s.loss == "eps"))
    s_over_n = param.Number(default=1.0, bounds=(0.05, 5), metadata=control(
        "Bootstrap", invalidates=("mc",), widget="FloatSlider", step=0.05))
    index = param.Integer(default=0, bounds=(0, 10), metadata=control(None))
    tab = param.Selector(default="x", objects=["x", "y"], metadata=control(None, link=False))
    result = param.Parameter(default=None, precedence=-1)


def test_declarations_keep_their_order_and_leave_outputs_out():
    assert declarations.control_names(_Toy) == ("dataset", "noise", "loss", "eps", "s_over_n", "index", "tab")
    assert declarations.groups(_Toy) == {"Data": ("dataset",), "Model": ("noise", "loss", "eps"),
                                         "Bootstrap": ("s_over_n",)}


def test_what_invalidates_what():
    assert declarations.invalidating(_Toy, "theory") == ("noise", "loss", "eps")
    assert declarations.invalidating(_Toy, "data", "mc") == ("dataset", "s_over_n")
    assert declarations.invalidating(_Toy) == ("dataset", "noise", "loss", "eps", "s_over_n")
    assert declarations.view_options(_Toy) == ("index", "tab")  # every other control, computing nothing


def test_links_and_settings_follow_the_declarations():
    toy = _Toy(loss="square", noise=np.float64(0.25))
    assert links.link_parameters(toy) == ("dataset", "noise", "loss", "eps", "s_over_n", "index")
    assert declarations.settings_of(toy) == {"dataset": "a", "noise": 0.25, "loss": "square", "s_over_n": 1.0,
                                             "index": 0}
    toy.loss = "eps"
    assert declarations.settings_of(toy)["eps"] == 0.5
    assert type(declarations.settings_of(toy)["noise"]) is float


def test_the_sidebar_is_derived_and_hides_what_does_not_apply():
    toy = _Toy()
    made = widgets.declared_widgets(toy, "toy")
    assert list(made) == ["dataset", "noise", "loss", "eps", "s_over_n"]
    assert isinstance(made["s_over_n"], pn.widgets.FloatSlider) and made["s_over_n"].step == 0.05
    assert isinstance(made["dataset"], pn.widgets.Select)
    assert "toy-s-over-n" in made["s_over_n"].css_classes
    note = pn.pane.Markdown("upload")
    column = widgets.declared_sidebar(toy, made, inserts={"dataset": [note]})
    texts = [getattr(o, "object", None) for o in column.objects]
    assert texts[0] == "### Data" and column.objects[1] is made["dataset"] and column.objects[2] is note
    assert texts[3] == "### Model" and texts[7] == "### Bootstrap"
    widgets.show_applicable(toy, made)
    assert not made["eps"].visible
    toy.loss = "eps"
    assert made["eps"].visible
