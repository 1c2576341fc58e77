"""Links and plain messages without a server: the query round trip of every state, clean numbers, and the
sentence a refused value shows (one ``match`` per message)."""

import pytest

pn = pytest.importorskip("panel")

from explorer.views.common.layout.widgets import param_widget
from explorer.views.common.state import links
from explorer.views.common.state.values import clean_number, rejection
from explorer.views.fast_bootstrap.state import FastBootstrapState
from explorer.views.gp_bootstrap.state import GPBootstrapState
from explorer.views.model_selection.experiments_state import SelectionExperimentState
from explorer.views.model_selection.state import SelectionState
from explorer.views.svm_bootstrap import SVMState

#: A non-default value for some controls of each state, and its link prefix.
CHANGES = {
    "gp": ("", GPBootstrapState, {"dataset": "toy", "kernel": "rq", "lengthscale": 0.3, "signal_var": 2.5, "alpha": 0.7,
                                      "s_over_n": 0.45000000000000007, "loss": "eps-insensitive", "eps": 0.2, "seed": 7,
                                      "standardize": True, "holdout": 20, "input_index": 3, "auto_mc": False}),
    "svm": ("svm_", SVMState, {"dataset": "pima", "lengthscale": 1.0, "curve_grid": [0.25, 2.0], "curve_mc_samples": 20000,
                                   "s_over_n": 1.5, "mc_samples": 300, "holdout": 4, "test_index": 2, "seed": 5, "auto_mc": False}),
    "sel": ("sel_", SelectionState, {"dataset": "toy", "n_points": 40, "standardize": True, "kernel": "rq",
                                         "criteria": ["evidence", "loo"], "parameter": "alpha", "curve_decades": 0.7000000001,
                                         "rank_kernels": ["se", "periodic"], "select_by": "kfold", "seed": 3,
                                         "subpanel": "experiments", "auto_run": False}),
    "fb": ("fb_", FastBootstrapState, {"model": "rbfn", "full_start": 2.0, "full_stop": 20.0, "full_step": 1.0,
                                           "fast_step": 3.0, "wsf": 4.5, "kappa1": 3, "seed": 2, "with_full": False,
                                           "auto_run": False}),
    "selx": ("selx_", SelectionExperimentState, {"repetitions": 3, "noise_std": 0.05, "seed": 4}),
}


@pytest.mark.parametrize("which", list(CHANGES))
def test_query_round_trip_of_every_state(which):
    """Set controls, write the query, open it on a fresh state: every linked control is equal."""
    prefix, cls, changes = CHANGES[which]
    state = cls()
    for name, value in changes.items():  # one by one, as a user would (a model resets the grids first)
        setattr(state, name, value)
    linked = links.Linked(state, prefix, links.link_parameters(state))
    query = links.query_of(linked)
    assert all(name.startswith(prefix) for name in query)
    fresh = cls()
    assert links.apply_query(linked.__class__(fresh, prefix, linked.names), query) == []
    for name in linked.names:
        assert getattr(fresh, name) == getattr(state, name), name
    for name in changes:
        if name in linked.names:
            assert getattr(fresh, name) == getattr(state, name), name


def test_query_names_do_not_collide_across_tabs():
    names = [prefix + name for prefix, cls, _ in CHANGES.values() for name in links.link_parameters(cls())]
    assert len(names) == len(set(names))
    assert "tab" not in names  # the page's own


def test_values_are_rounded_in_the_state_and_the_query():
    state = GPBootstrapState(auto_mc=False)
    state.s_over_n = 0.45000000000000007
    assert state.s_over_n == 0.45
    assert links.query_of(links.Linked(state, "", ("s_over_n",))) == {"s_over_n": "0.45"}
    assert SVMState().lengthscale == 3.16228  # √10 as the widget and the URL show it
    assert clean_number(0.1 + 0.2) == 0.3


def test_a_link_value_that_does_not_fit_is_named_in_the_notice():
    state = SVMState()
    linked = links.Linked(state, "svm_", links.link_parameters(state))
    bad = links.apply_query(linked, {"svm_dataset": "nope", "svm_seed": 4})
    assert bad == ["svm_dataset='nope'"] and state.seed == 4
    assert state.notice.startswith("Ignored link parameter(s) that do not fit this app: svm_dataset='nope'")


def test_a_link_keeps_its_kernel_hyperparameters():
    """A link that chooses a kernel keeps the link's ℓ (the data-driven start is for a user's switch only)."""
    state = GPBootstrapState(auto_mc=False)
    links.apply_query(links.Linked(state, "", links.link_parameters(state)), {"kernel": "se", "lengthscale": 1.0})
    assert state.kernel == "se" and state.lengthscale == 1.0 and state.notice == ""


def test_an_out_of_range_value_says_its_range_and_soft_bounds_do_not_block():
    state = GPBootstrapState(auto_mc=False)
    widget = param_widget(state, "curve_mc_samples", pn.widgets.IntInput, "explorer")
    assert widget.start is None and widget.end is None  # the browser clamps nothing silently
    widget.value = 20_000  # above the soft bound 5000, within the hard bound 100000
    assert state.curve_mc_samples == 20_000 and state.notice == ""
    widget.value = 200_000
    assert state.curve_mc_samples == 20_000 and widget.value == 20_000
    assert state.notice == ("MC samples per S (learning curve) must be between 2 and 100000; kept 20000.")
    widget.value = 600  # accepted: the message goes
    assert state.notice == ""


def test_input_index_beyond_the_data_says_the_allowed_range():
    state = GPBootstrapState(dataset="teacher", auto_mc=False, tab="distribution")
    state.refresh()
    widget = param_widget(state, "input_index", pn.widgets.IntInput, "explorer")
    widget.value = 9999
    assert state.input_index == 0
    assert state.notice == f"Input index i must be between 0 and {state.problem.n - 1}; kept 0."


@pytest.mark.parametrize("value, message", [
    (None, "Seed needs a value; kept 0."),
    (float("nan"), "Lengthscale L must be a finite number; kept 3.16228."),
    (-1, "Seed must be between 0 and 2147483647; kept 0."),
])
def test_rejection_messages(value, message):
    state = SVMState()
    name = "lengthscale" if message.startswith("Lengthscale") else "seed"
    assert rejection(state, name, value) == message
    with pytest.raises(ValueError, match="must be at least 0"):
        state.seed = -1  # the state itself still refuses it


def test_a_short_link_carries_only_what_differs_from_the_defaults():
    from explorer.views.common.layout.page import PageContext
    from explorer.views.common.state.links import PageLink, linked_states, short_search
    from explorer.views.pages import PAGE_TITLES, PAGES

    views = [page.view(PageContext()) for page in PAGES]
    try:
        for view in views:
            for state in view.states.values():
                state.defer_jobs()
        linked, page = linked_states(views), PageLink(list(PAGE_TITLES))
        assert short_search(linked, page) == ""  # the default page is the bare URL
        by_key = {page.key: view for page, view in zip(PAGES, views)}
        gp, svm = by_key["gp"].states[""], by_key["svm"].states["svm_"]
        gp.s_over_n, svm.lengthscale, page.tab = 1.5, 2.5, "svm"
        assert short_search(linked, page) == "?tab=svm&s_over_n=1.5&svm_lengthscale=2.5"
        gp.s_over_n = gp.param.s_over_n.default  # back to the default: out of the link again
        assert short_search(linked, page) == "?tab=svm&svm_lengthscale=2.5"
        # the short link reopens the same view: applied to fresh states it gives the same values
        fresh = [p.view(PageContext()) for p in PAGES]
        try:
            query = dict(pair.split("=") for pair in short_search(linked, page)[1:].split("&"))
            for item in linked_states(fresh):
                links.apply_query(item, query)
            fresh_by_key = {page.key: view for page, view in zip(PAGES, fresh)}
            assert (fresh_by_key["svm"].states["svm_"].lengthscale == 2.5
                    and fresh_by_key["gp"].states[""].s_over_n == gp.s_over_n)
        finally:
            for view in fresh:
                for state in view.states.values():
                    state.close()
    finally:
        for view in views:
            for state in view.states.values():
                state.close()
