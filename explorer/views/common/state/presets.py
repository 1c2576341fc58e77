""""Reproduce a figure": presets that set every control a figure or table of a seed paper needs.

A :class:`Preset` is a stored link: the tab it opens (a URL tab name of a page, :mod:`explorer.views.pages`)
and, per state, the values it sets, under the prefixes the URL uses (each page declares its states' prefixes).
Each paper's presets live in its page folder (``explorer/views/<paper>/presets.py``); this module holds the
machinery. :func:`apply_preset` sets them with the link's own
setter (:func:`~explorer.views.common.state.links.apply_query`, the :data:`~explorer.views.common.state.links.LEADING` choices
first), starts the jobs that otherwise wait for a button, and opens the tab. The presets work on states, never on
widgets: a tab whose view is not built yet shows the preset's values when it is first opened.

Sample counts are smaller than the papers' so that each preset's jobs finish within a minute on the 2-core machine
the app was developed on (``seconds``, measured with ``benchmarks/bench_presets.py``); every description says
which counts are used and how they differ from the paper's. Where the paper prints numbers, ``numbers`` lists them
(typed from the paper's text, with where they are printed) beside a function that reads ours from the states;
:func:`comparison_frame` puts them side by side and :class:`PresetMenu` shows that table under the header.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd
import panel as pn
import param

from explorer.views.common.state.links import Linked, apply_query

__all__ = [
    "MENU_LABEL",
    "PaperNumber",
    "Preset",
    "PresetError",
    "PresetMenu",
    "apply_preset",
    "comparison_frame",
    "comparison_text",
    "matches",
    "menu_items",
    "percent",
    "preset_values",
]

#: The label of the header menu.
MENU_LABEL = "Reproduce a figure"
#: What "ours" says while the states have not computed a number yet.
PENDING = "… (computing)"

States = Mapping[str, param.Parameterized]


class PresetError(ValueError):
    """A preset that names no known preset or a state the page does not have, or a value a state refuses."""


@dataclass(frozen=True)
class PaperNumber:
    """A number the paper prints, where it prints it, and how to read ours from the states.

    ``paper`` is the text as printed ("86.2 %"), ``value`` its number (None for a statement), ``where`` the place
    in the paper (section, figure or table), ``ours`` a function of the states returning our number as text (None
    while it is not computed), or None where the paper's number has no counterpart the app computes; ``why_none``
    then says why (shown in the "ours" column).
    """

    quantity: str
    paper: str
    value: float | None
    where: str
    ours: Callable[[States], str | None] | None = field(default=None, compare=False, repr=False)
    why_none: str = ""


@dataclass(frozen=True)
class Preset:
    """The settings that reproduce one figure or table of a seed paper.

    ``settings`` maps a state prefix (a key of a page's ``states``) to the values it sets; ``tab`` is the tab opened
    (a key of a page's ``tabs``); ``run`` the prefixes whose waiting jobs are started
    (:meth:`~explorer.views.common.state.jobs.HasJobs.run`); ``seconds`` the time its jobs took here (caches
    empty, 2 cores shared with other work; None: not measured yet); ``numbers`` the paper's printed numbers, empty when the figure prints none (the description
    then says so).
    """

    key: str
    name: str
    reproduces: str
    tab: str
    settings: Mapping[str, Mapping[str, object]]
    description: str
    seconds: float | None
    numbers: tuple[PaperNumber, ...] = ()
    run: tuple[str, ...] = ()


# ------------------------------------------------------------------------------------ reading our numbers


def percent(x: float) -> str:
    """A fraction as the presets' tables print it (``0.862`` → ``86.2%``)."""
    return f"{x:.1%}"


# ------------------------------------------------------------------------------------ applying a preset


def preset_values(p: Preset, states: States) -> dict[str, dict[str, object]]:
    """The values of the states that ``p`` sets, per prefix, as the states hold them now."""
    return {prefix: {name: getattr(states[prefix], name) for name in values} for prefix, values in p.settings.items()}


def matches(p: Preset, states: States) -> bool:
    """Whether the states still hold every value ``p`` sets (the real numbers as the states round them)."""
    return all(_same(states[prefix].param[name], value, getattr(states[prefix], name))
               for prefix, values in p.settings.items() for name, value in values.items())


def _same(parameter: param.Parameter, wanted, held) -> bool:
    if isinstance(wanted, float) and isinstance(held, (int, float)):
        return math.isclose(wanted, held, rel_tol=1e-5)
    if isinstance(parameter, param.ListSelector):
        return sorted(wanted) == sorted(held)
    return wanted == held


def apply_preset(p: Preset, states: States, open_tab: Callable[[str], None] | None = None,
                 labels: Mapping[str, str] | None = None) -> Preset:
    """Set the values of preset ``p`` on ``states`` (prefix → state), start the jobs it runs and open its tab with
    ``open_tab(tab)``. ``labels`` names the states by prefix in messages (the pages' ``states``; default the
    prefix). Returns the preset.

    Raises
    ------
    PresetError
        If ``p`` is no preset, ``states`` lacks a state it sets, or a state refuses one of its values.
    """
    labels = labels or {}
    missing = [labels.get(prefix, prefix) for prefix in p.settings if prefix not in states]
    if missing:
        raise PresetError(f"Preset {p.name!r} sets the {', '.join(missing)} state(s), which this page does not "
                          "have.")
    for prefix, values in p.settings.items():
        linked = Linked(states[prefix], prefix, tuple(values))
        bad = apply_query(linked, {prefix + name: value for name, value in values.items()})
        if bad:
            raise PresetError(f"Preset {p.name!r}: the {labels.get(prefix, prefix)} state refused "
                              f"{', '.join(bad)}. {p.description}")
    for prefix in p.run:
        states[prefix].run()
    if open_tab is not None:
        open_tab(p.tab)
    return p


# ------------------------------------------------------------------------------------ the paper beside ours


def comparison_frame(p: Preset, states: States) -> pd.DataFrame:
    """The paper's printed numbers of ``p`` beside ours, one row each (``ours`` says when it is not computed yet;
    "—" and why where the paper's number has no counterpart we compute)."""
    rows = []
    for number in p.numbers:
        if number.ours is None:
            ours = f"— ({number.why_none})" if number.why_none else "—"
        else:
            ours = number.ours(states) or PENDING
        rows.append({"quantity": number.quantity, "paper": number.paper, "ours": ours, "where": number.where})
    return pd.DataFrame(rows, columns=["quantity", "paper", "ours", "where"])


def comparison_text(p: Preset, states: States) -> str:
    """Markdown shown under the header while ``p`` is active: what it reproduces, its counts and time, the paper's
    numbers beside ours, and a warning once a control differs from the preset."""
    took = "time not measured" if p.seconds is None else f"about {p.seconds:.0f} s on 2 cores"
    head = f"**{MENU_LABEL}: {p.name}** ({p.reproduces}; {took})\n\n{p.description}"
    if not matches(p, states):
        head += ("\n\n⚠ A control has changed since the preset was applied: the figure and the numbers below are no "
                 "longer the preset's.")
    if not p.numbers:
        return head
    frame = comparison_frame(p, states)
    table = "| | paper | ours | where |\n|---|---|---|---|\n" + "\n".join(
        f"| {r.quantity} | {r.paper} | {r.ours} | {r.where} |" for r in frame.itertuples())
    return f"{head}\n\n{table}"


#: The menu (Bokeh 3.9 draws it as a ``.bk-Menu`` element as wide as ``--menu-width``, by default its button's 190
#: px, where the entries wrapped to four lines): as wide as its longest entry (about 620 px at 14 px) so that every
#: entry is one line, never wider than the window right of the button, and scrolling within the window below the
#: header (a projector's 720 px holds about 15 of its 17 entries). The button keeps its label and caret on one line
#: at presentation's larger text (it grows with the label), and the entries grow with it (17 px: about 800 px).
MENU_CSS = """
:host { --menu-width: max-content; width: max-content !important; min-width: 190px; }
:host .bk-btn { white-space: nowrap; }
:host .bk-Menu { max-width: calc(100vw - 360px); max-height: calc(100vh - 70px); overflow-y: auto; }
:host-context(.explorer-presentation) .bk-Menu { font-size: 17px; }
"""


def menu_items(presets: Sequence[Preset], names: Mapping[str, str]) -> list[tuple[str, str] | None]:
    """The menu's ``(label, key)`` items, the label from ``names`` (default the preset's name), a separator (None)
    between two papers (the seed number that starts a key)."""
    items: list[tuple[str, str] | None] = []
    for p in presets:
        if items and items[-1] is not None and items[-1][1].split("-")[0] != p.key.split("-")[0]:
            items.append(None)
        items.append((names.get(p.key, p.name), p.key))
    return items


class PresetMenu(pn.viewable.Viewer):
    """The header menu "Reproduce a figure" and the panel that shows the active preset with the paper's numbers.

    ``presets`` are the menu's entries (those whose states are all in ``states`` are offered, grouped by paper and
    named by ``menu_names`` by key, default their name); ``states`` maps the
    link prefixes to the page's states, ``labels`` names them (:func:`apply_preset`); ``open_tab`` opens a tab by its
    URL name. :attr:`menu` goes into the header, :attr:`panel`
    above the tabs (hidden until a preset is chosen). ``active`` is the key of the preset last applied ("" none).
    """

    active = param.String(default="", label="Active preset", doc="Key of the preset last applied; empty for none.")

    def __init__(self, presets: Sequence[Preset], states: States, open_tab: Callable[[str], None] | None = None,
                 labels: Mapping[str, str] | None = None, menu_names: Mapping[str, str] | None = None, **params):
        super().__init__(**params)
        self.states, self.open_tab, self.labels = dict(states), open_tab, dict(labels or {})
        self.presets = {p.key: p for p in presets}
        usable = [p for p in presets if all(prefix in self.states for prefix in p.settings)]
        self.menu = pn.widgets.MenuButton(label=MENU_LABEL, items=menu_items(usable, menu_names or {}),
                                          color="light", align="center", width=190,
                                          css_classes=["explorer-presets"], stylesheets=[MENU_CSS])
        self.menu.on_click(lambda event: self.choose(event.new) if event.new != MENU_LABEL else None)
        self.text = pn.pane.Markdown("", sizing_mode="stretch_width", css_classes=["explorer-preset-text"])
        self.close = pn.widgets.Button(label="Hide", color="light", width=80,
                                       css_classes=["explorer-preset-hide"])
        self.close.on_click(lambda event: setattr(self, "active", ""))
        self.panel = pn.Column(self.text, self.close, visible=False, sizing_mode="stretch_width",
                               css_classes=["explorer-preset"])
        for state in {id(s): s for s in self.states.values()}.values():
            names = [n for n in (*getattr(state, "outputs", ()), "error") if n in state.param]
            state.param.watch(self._update, names + [n for n, p_ in state.param.objects().items()
                                                     if n != "name" and (p_.precedence is None or p_.precedence >= 0)])
        self.param.watch(self._update, "active")

    def choose(self, key: str) -> None:
        """Apply the preset ``key`` (an error of the preset is shown in the panel, not raised)."""
        try:
            if key not in self.presets:
                raise PresetError(f"There is no preset {key!r}; the presets are {', '.join(self.presets)}.")
            apply_preset(self.presets[key], self.states, self.open_tab, self.labels)
        except PresetError as err:
            self.active = ""
            self.text.object, self.panel.visible = f"⚠ {err}", True
            return
        self.active = key
        self._update()

    def _update(self, *events) -> None:
        if not self.active:
            self.panel.visible = False
            return
        self.text.object = comparison_text(self.presets[self.active], self.states)
        self.panel.visible = True

    def __panel__(self):
        return pn.Column(self.menu, self.panel)
