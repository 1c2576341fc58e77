"""The "Reproduce a figure" presets: each sets exactly its values on the states, opens its tab, lists the papers'
printed numbers (checked against the paper text), and the app computes numbers the paper printed."""
from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import pytest

pn = pytest.importorskip("panel")

from explorer.runtime.caches import clear_caches
from explorer.views import GPBootstrapState
from explorer.views.common.state.presets import (
    MENU_LABEL,
    PENDING,
    PresetError,
    PresetMenu,
    apply_preset,
    comparison_frame,
    comparison_text,
    matches,
    preset_values,
)
from explorer.views.fast_bootstrap import FastBootstrapState
from explorer.views.model_selection import SelectionState
from explorer.views.model_selection.experiments_state import SelectionExperimentState
from explorer.views.pages import PAGE_TITLES, PRESETS, STATE_LABELS, preset
from explorer.views.svm_bootstrap import SVMState

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"


@pytest.fixture
def states(tmp_path):
    """Fresh states of every tab whose jobs never start (the presets' values are what is tested here); the
    server's data folder holds the Santa Fe laser file the Table 2 presets choose."""
    (tmp_path / "santafe_laser_A.csv").write_text("t,value\n" + "".join(f"{t},{t % 7}\n" for t in range(60)))
    made = {"": GPBootstrapState(), "svm_": SVMState(), "sel_": SelectionState(auto_run=False),
            "selx_": SelectionExperimentState(), "fb_": FastBootstrapState(data_dir=str(tmp_path))}
    for state in made.values():
        state.defer_jobs()
    yield made
    for state in made.values():
        state.close()


def _apply(p, states, open_tab=None):
    """Apply preset ``p`` (or its key) as the app's menu does: the states named as the pages name them."""
    return apply_preset(preset(p) if isinstance(p, str) else p, states, open_tab, STATE_LABELS)


def _assert_holds(p, states) -> None:
    held = preset_values(p, states)
    for prefix, values in p.settings.items():
        for name, value in values.items():
            got = held[prefix][name]
            if isinstance(value, float):
                assert got == pytest.approx(value, rel=1e-5), (p.key, prefix, name)
            elif isinstance(value, list):
                assert sorted(got) == sorted(value), (p.key, prefix, name)
            else:
                assert got == value, (p.key, prefix, name)
    assert matches(p, states)


@pytest.mark.parametrize("p", PRESETS, ids=[p.key for p in PRESETS])
def test_every_preset_applies_and_sets_exactly_its_values(p, states):
    opened = []
    assert _apply(p.key, states, opened.append) is p
    _assert_holds(p, states)
    assert opened == [p.tab] and p.tab in PAGE_TITLES
    assert all(getattr(states[prefix], "notice", "") == "" for prefix in p.settings), "a value was refused"


def test_presets_hold_their_values_whatever_was_applied_before(states):
    """Applied one after the other (forwards, then backwards), each preset's values all arrive: a choice that
    resets others (a model, a data set, a kernel) is set first and never undoes the preset's values."""
    for p in [*PRESETS, *reversed(PRESETS)]:
        _apply(p, states)
        _assert_holds(p, states)


def test_a_changed_control_is_said_and_pending_numbers_say_so(states):
    p = _apply("000-fig5", states)
    assert "86.2 %" in comparison_text(p, states) and "⚠" not in comparison_text(p, states)
    assert list(comparison_frame(p, states)["ours"]) == [PENDING] * 3  # jobs deferred: nothing computed
    states[""].mc_samples = 200
    assert not matches(p, states)
    assert ("⚠ A control has changed since the preset was applied: the figure and the numbers below are no longer "
            "the preset's.") in comparison_text(p, states)


def test_by_eye_percentages_have_no_number_of_ours(states):
    p = _apply("000-fig3-4", states)
    frame = comparison_frame(p, states)
    assert list(frame["paper"]) == ["80 %", "20 %", "2 %"]
    assert all(ours.startswith("— (judged by eye in the paper; the L1 map preset") for ours in frame["ours"])


def test_every_paper_number_has_ours_or_says_why_not():
    for p in PRESETS:
        for number in p.numbers:
            assert number.ours is not None or number.why_none, (p.key, number.quantity)


def test_unknown_presets_and_missing_states_are_refused(states):
    with pytest.raises(PresetError, match=r"There is no preset 'fig-9'; the presets are 000-fig1-left, "):
        _apply("fig-9", states)
    only_gp = {"": states[""]}
    with pytest.raises(PresetError, match=r"sets the Fast bootstrap state\(s\), which this page does not have"):
        _apply("002-t1-mlp", only_gp)


def test_a_refused_value_is_an_error_naming_it(states):
    from dataclasses import replace

    bad = replace(preset("000-fig5"), settings={"": {"mc_samples": -5}})
    with pytest.raises(PresetError, match=r"the Gaussian process state refused mc_samples=-5"):
        _apply(bad, states)


def test_a_laser_preset_without_the_file_in_the_data_folder_says_where_to_put_it():
    no_folder = FastBootstrapState()
    no_folder.defer_jobs()
    with pytest.raises(PresetError, match=r"refused fb_series_csv='santafe_laser_A.csv'\. .*reads "
                                          r"santafe_laser_A.csv .* from the server's data folder .*upload the file"):
        _apply("002-t2-lssvm", {"fb_": no_folder})
    no_folder.close()


# ------------------------------------------------------------------------------------ the papers' numbers


def _number(key: str, quantity: str) -> float:
    [n] = [n for n in preset(key).numbers if n.quantity == quantity]
    return n.value


def test_paper_numbers_are_the_papers():
    # [MO03], §5, the paragraph on Figs. 3-5: "L1 ≤ 0.1 for 86.2% of all inputs and L1 ≥ 0.2 for 2% of all
    # inputs. The maximal value is L1 = 0.3109."
    assert [n.value for n in preset("000-fig5").numbers] == [0.862, 0.02, 0.3109]
    # [MO03b], inset of Fig. 1 right: "S: 0.376 T: 0.405" (p(−1|x), simulation and theory)
    assert [n.value for n in preset("004-fig1-right").numbers] == [0.376, 0.405]
    # [LSWV05], Table 1: MLP F_{1,2} = 3.2545, gain 96.2 %, 1300 and 50 experiments; RBFN F_{1,1} = 16.3085,
    # selected 17 (bootstrap) and 16 (FB) in the text; LS-SVM 45100 and 100 experiments, gain 99.8 %
    assert _number("002-t1-mlp", "Fisher's F (fast)") == 3.2545 and _number("002-t1-mlp", "gain") == 0.962
    assert (_number("002-t1-mlp", "experiments J·Q (full)"), _number("002-t1-mlp", "experiments J·Q (fast)")) == (
        1300, 50)
    assert _number("002-t1-rbfn", "Fisher's F (fast)") == 16.3085
    assert (_number("002-t1-rbfn", "selected (full bootstrap)"), _number("002-t1-rbfn", "selected (fast bootstrap)")) \
        == (17, 16)
    assert _number("002-t1-lssvm", "experiments J·Q (full)") == 45100 and _number("002-t1-lssvm", "gain") == 0.998
    # [LSWV05], Table 2: MLP F_{1,3} = 0.2002, RBFN F_{1,2} = 1.6472 (60 and 100 experiments)
    assert _number("002-t2-mlp", "Fisher's F (fast)") == 0.2002 and _number("002-t2-rbfn", "Fisher's F (fast)") == 1.6472
    assert _number("002-t2-mlp", "experiments J·Q (fast)") == 60


@pytest.mark.parametrize("p", [p for p in PRESETS if p.numbers], ids=[p.key for p in PRESETS if p.numbers])
def test_every_printed_number_is_in_the_paper_text(p):
    """Each number typed as printed ("86.2 %", "F(1,2) = 3.2545", "45100") occurs in the seed's text (spaces and
    the per-cent sign as the text has them); statements ("each time (text)") are quoted from it."""
    seed = p.key.split("-")[0]
    files = list(SEEDS.glob(f"{seed}_*.txt"))
    if not files:
        pytest.skip("../shared/seeds is not beside the project")
    text = re.sub(r"\s+", "", files[0].read_text(encoding="utf-8"))
    for number in p.numbers:
        if number.paper.endswith("(text)"):
            words = {"each time (text)": "selectingtherightmodeleachtime",
                     "close to 1 (text)": r"closeto\beta=1"}[number.paper]
            assert words in text.replace("$", ""), number
            continue
        printed = re.sub(r"^F\(\d+,\d+\) = ", "", number.paper).replace(" ", "").rstrip("*")
        assert printed.replace("%", "") in text, number
        if number.value is not None and printed[0].isdigit():
            shown = float(printed.rstrip("%")) / (100 if printed.endswith("%") else 1)
            assert math.isclose(shown, number.value), number


# ------------------------------------------------------------------------------------ ours beside the paper's


def test_table1_lssvm_counts_and_gain_are_the_papers(dask_engine):
    """[LSWV05] Table 1, LS-SVM: the preset runs the paper's grids and replications, so the numbers of
    experiments (J·Q) must be the paper's exactly (45100 and 100) and the gain 99.8 % to the printed digit
    (±0.05 %). The selected γ and F depend on the toy draw and are only shown, not asserted."""
    clear_caches()
    made = {"fb_": FastBootstrapState(client=dask_engine)}
    try:
        p = _apply("002-t1-lssvm", made)
        assert made["fb_"].wait(timeout=300) and made["fb_"].error == ""
        ours = dict(zip(comparison_frame(p, made)["quantity"], comparison_frame(p, made)["ours"]))
        assert ours["experiments J·Q (full)"] == "45100" and ours["experiments J·Q (fast)"] == "100"
        assert abs(made["fb_"].comparison.paper_gain - _number("002-t1-lssvm", "gain")) <= 0.0005
        assert ours["gain"] == "99.8%"
    finally:
        made["fb_"].close()
        clear_caches()


@pytest.mark.slow
def test_fig5_l1_fractions_near_the_papers(dask_engine):
    """[MO03] Fig. 5 at the preset's sample count: L1 ≤ 0.1 at 70-90 % of the inputs (paper 86.2 %). Finite
    Monte-Carlo histograms only add L1 (the noise floor of 5000 samples is not zero), so ours lies at or a few
    points below the paper's; 70 % is the bound the 20000-sample test of tests/gp_bootstrap uses, and the largest
    L1 stays below 0.6 (paper 0.3109)."""
    clear_caches()
    made = {"": GPBootstrapState(client=dask_engine)}
    try:
        _apply("000-fig5", made)
        assert made[""].wait(timeout=600) and made[""].distribution is not None
        l1 = made[""].distribution.l1
        assert 0.70 < l1.frac_le_0_1 < 0.90 and l1.max < 0.6
    finally:
        made[""].close()
        clear_caches()


# ------------------------------------------------------------------------------------ the menu in the app


@pytest.fixture
def app():
    from explorer.app import create_app

    clear_caches()
    template = create_app(dataset="teacher", curve_mc_samples=20, mc_samples=200, auto_mc=False, tab="curve")
    states = template.presets.states
    for state in states.values():
        state.wait(timeout=300)
        state.defer_jobs()  # the presets' values are tested, not their Monte-Carlo
    yield template
    for state in states.values():
        state.close()
    clear_caches()


def test_the_header_menu_opens_the_presets_tab_and_shows_the_papers_numbers(app):
    menu = app.presets
    assert menu.menu in app.header.objects and menu.menu.label == MENU_LABEL
    assert [item[1] for item in menu.menu.items if item] == [p.key for p in PRESETS]
    papers = [p.key.split("-")[0] for p in PRESETS]
    assert menu.menu.items.count(None) == len(set(papers)) - 1  # one group per paper
    assert menu.menu.items[0][0] == "Malzahn & Opper 2005, GP bootstrap — Fig. 1 left: square-loss learning curve, boston"
    assert not menu.panel.visible
    for key in ("000-fig5", "004-fig1-crabs", "001-exp10", "002-t1-rbfn", "000-fig2"):
        menu.menu.clicked = key
        assert app.tab_names[app.tabs.active] == preset(key).tab and preset(key).tab in PAGE_TITLES
        assert menu.active == key and menu.panel.visible and preset(key).name in menu.text.object
        assert matches(preset(key), menu.states)
    assert app.pages["gp"].states[""].tab == "holdout" and app.pages["gp"].states[""].holdout == 50
    assert app.pages["selection"].states["sel_"].subpanel == "experiments"
    menu.menu.clicked = "000-fig5"
    assert "| inputs with L1 ≤ 0.1 | 86.2 % |" in menu.text.object
    menu.menu.clicked = MENU_LABEL  # the button itself is no preset
    assert menu.active == "000-fig5"
    menu.close.clicks += 1
    assert not menu.panel.visible and menu.active == ""


def test_a_preset_the_page_cannot_apply_shows_why():
    menu = PresetMenu(PRESETS, {"": GPBootstrapState()}, labels=STATE_LABELS)
    try:
        assert [item[1] for item in menu.menu.items if item] == [p.key for p in PRESETS if set(p.settings) == {""}]
        menu.choose("002-t1-mlp")
        assert menu.panel.visible and menu.active == ""
        assert menu.text.object.startswith("⚠ Preset '[LSWV05] Table 1: MLP on the toy function' sets the Fast "
                                           "bootstrap state(s), which this page does not have.")
    finally:
        menu.states[""].close()


def test_the_panel_says_the_measured_time_or_that_there_is_none(states):
    assert "([MO03], Fig. 5; about 19 s on 2 cores)" in comparison_text(_apply("000-fig5", states), states)
    assert "([LSWV05], Table 1 (MLP), Figs. 2-3; about 30 s on 2 cores)" in comparison_text(preset("002-t1-mlp"),
                                                                                          states)
    unmeasured = dataclasses.replace(preset("002-t1-mlp"), seconds=None)
    assert "([LSWV05], Table 1 (MLP), Figs. 2-3; time not measured)" in comparison_text(unmeasured, states)
