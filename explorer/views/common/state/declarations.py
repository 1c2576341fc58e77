"""One declaration per control: what a state's parameter means for its page, held in the parameter's ``metadata``.

A page declares each control once, in its state, as a ``param`` parameter with ``metadata=control(...)``:

``group``
    the sidebar heading it is shown under ("Data", "Model", "Bootstrap", ...), in the order of the declarations;
    None: not in the sidebar (a control a tab shows, such as the input of the distribution tab, or the open tab);
``link``
    whether links and the settings JSON of the exports carry it (a link of the page sets it back);
``invalidates``
    the page's computations a change makes stale, by the names the page gives them (e.g. ``"data"``, ``"kernel"``,
    ``"theory"``, ``"mc"``); empty for a pure view option, whose change redraws and computes nothing;
``applies``
    ``applies(state)``: whether the control means anything for the current settings (ε only for the ε-insensitive
    loss): the sidebar hides it otherwise and the settings JSON leaves it out; None: always;
``widget``
    the name of the Panel widget class that shows it when the parameter type's default
    (:func:`explorer.views.common.layout.widgets.widget_kind`) is not the one, and ``widget_options`` for it.

Everything a page used to list by hand is derived from those declarations: its sidebar
(:func:`explorer.views.common.layout.widgets.declared_sidebar`), the parameters the state watches to recompute
(:func:`invalidating`), the link (:func:`link_names`, read by :func:`explorer.views.common.state.links.link_parameters`),
the settings of the exports (:func:`settings_of`). No widget here: states import it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import param

__all__ = ["Declaration", "control", "declarations", "control_names", "groups", "link_names", "invalidating",
           "view_options", "applies", "settings_of", "json_value"]


@dataclass(frozen=True)
class Declaration:
    """What the ``metadata`` of the parameter ``name`` says (see the module's docstring)."""

    name: str
    group: str | None = None
    link: bool = True
    invalidates: tuple[str, ...] = ()
    applies: Callable[[Any], bool] | None = None
    widget: str | None = None
    widget_options: Mapping[str, Any] = field(default_factory=dict)


def control(group: str | None, *, invalidates: Iterable[str] = (), link: bool = True,
            applies: Callable[[Any], bool] | None = None, widget: str | None = None,
            **widget_options) -> dict[str, Any]:
    """The ``metadata`` of a control: ``param.Number(..., metadata=control("Model", invalidates=("kernel",)))``."""
    return {"group": group, "link": bool(link), "invalidates": tuple(invalidates), "applies": applies,
            "widget": widget, "widget_options": dict(widget_options)}


def declarations(state: param.Parameterized | type[param.Parameterized]) -> dict[str, Declaration]:
    """The declared controls of ``state`` (an instance or its class), in the order of their declarations (a base
    class's first); parameters without ``control`` metadata (outputs, settings of the server) are no controls."""
    found = {}
    for name, parameter in state.param.objects("existing").items():
        meta = parameter.metadata
        if meta and "group" in meta:
            found[name] = Declaration(name, meta["group"], meta["link"], meta["invalidates"], meta["applies"],
                                      meta["widget"], meta["widget_options"])
    return found


def control_names(state) -> tuple[str, ...]:
    """The names of the declared controls of ``state``, in the order of their declarations."""
    return tuple(declarations(state))


def groups(state) -> dict[str, tuple[str, ...]]:
    """The sidebar: group heading → its controls, both in the order of the declarations."""
    out: dict[str, list[str]] = {}
    for name, d in declarations(state).items():
        if d.group is not None:
            out.setdefault(d.group, []).append(name)
    return {group: tuple(names) for group, names in out.items()}


def link_names(state) -> tuple[str, ...]:
    """The controls a link (and the settings JSON) carries."""
    return tuple(name for name, d in declarations(state).items() if d.link)


def invalidating(state, *stages: str) -> tuple[str, ...]:
    """The controls whose change makes one of ``stages`` stale (no stage given: any computation at all)."""
    wanted = set(stages)
    return tuple(name for name, d in declarations(state).items()
                 if d.invalidates and (not wanted or wanted & set(d.invalidates)))


def view_options(state) -> tuple[str, ...]:
    """The declared controls that make nothing stale (no ``invalidates``): they only change what is shown (a test
    input, a point i), so a tab redraws for them and computes nothing."""
    return tuple(name for name, d in declarations(state).items() if not d.invalidates)


def applies(state, name: str) -> bool:
    """Whether the control ``name`` means anything for the current settings of ``state`` (its ``applies``)."""
    rule = declarations(state)[name].applies
    return True if rule is None else bool(rule(state))


def json_value(value: Any) -> Any:
    """``value`` as JSON holds it: numpy scalars as Python numbers, tuples as lists."""
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        return value.item()
    if isinstance(value, tuple):
        return [json_value(v) for v in value]
    return value


def settings_of(state, names: Iterable[str] | None = None) -> dict[str, Any]:
    """The settings JSON's controls: every control a link carries (or of ``names``) that applies now, by its value."""
    chosen = link_names(state) if names is None else tuple(names)
    return {name: json_value(getattr(state, name)) for name in chosen if applies(state, name)}
