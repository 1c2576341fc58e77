"""Widgets and panes every tab builds the same way: linked controls, uploads, alerts, job indicators, live
figures and tabs that stay in the page once opened.

Widgets are made per call (per session), never as class attributes; every element carries a stable CSS class
``<prefix>-…`` for browser tests and the tour.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial

import holoviews as hv
import panel as pn
import param

from explorer.runtime.compat import handle_changes_at_once
from explorer.views.common.files.file_input import CSVFileInput
from explorer.views.common.state import declarations
from explorer.views.common.state.values import rejection

__all__ = ["JobIndicators", "job_indicators", "WIDGET_KINDS", "widget_kind", "param_widget", "param_widgets",
           "declared_widgets", "declared_sidebar", "show_applicable",
           "respond_at_once", "checked_input",
           "csv_upload", "message_alert", "Revision", "layers", "live", "LazyTabs", "terms_line", "BOOTSTRAP_TERMS",
           "REPLICATION_TERMS"]

#: What N, S and "drawn with replacement" mean, in one line for students (the pages whose bootstrap sample has S
#: points).
BOOTSTRAP_TERMS = ("**N** = the training points. A bootstrap sample draws **S** points from them *with "
                   "replacement*: each draw takes any of the N again, so a point comes 0, 1, 2, … times and at S = N "
                   "about 37 % of the points are left out. **S/N** is the sample's size relative to the data.")
#: The same for a page whose bootstrap samples have N points (the fast bootstrap of [LSWV05]).
REPLICATION_TERMS = ("**N** = the training points. A bootstrap replication refits the model on N points drawn from "
                     "them *with replacement*: each draw takes any of the N again, so a point comes 0, 1, 2, … times "
                     "and about 37 % of the points are left out of each.")


@dataclass(frozen=True)
class JobIndicators:
    """A progress bar, a message and an error alert per job a tab shows, keyed by the name the tab gives it
    (``kinds`` maps that name to the state's job kind). Each shows its job's status by references to the status's
    parameters (``progress``, ``running``, ``message``, ``error``): Panel redraws it when they change."""

    kinds: Mapping[str, str]
    progress: dict[str, pn.indicators.Progress]
    message: dict[str, pn.pane.Str]
    error: dict[str, pn.pane.Alert]


def _percent(progress: float) -> int:
    return int(round(100 * progress))


def _labelled(message: str, label: str = "") -> str:
    """``message``, prefixed by ``label`` ("curve: done") when both are non-empty."""
    return f"{label}: {message}" if label and message else message


def job_indicators(state, prefix: str, on_job: Callable, width: int = 160,
                   kinds: Mapping[str, str] | None = None,
                   css: Callable[[str, str], str] | None = None, label_messages: bool = False) -> JobIndicators:
    """The :class:`JobIndicators` of the jobs ``kinds`` (name → job kind; default: every job of ``state`` under
    its own kind), with CSS classes ``{prefix}-progress-<name>``, ``{prefix}-job-message-<name>`` and
    ``{prefix}-job-error-<name>`` (or ``css(what, name)`` for ``what`` in "progress", "job-message" and
    "job-error", if given); each message prefixed by its job's kind if ``label_messages``. ``on_job(name, *events)``
    watches each job's status for the tab's side effects (its Cancel button, a redraw)."""
    kinds = dict(kinds) if kinds is not None else {kind: kind for kind in state.jobs}
    css = css or (lambda what, name: f"{prefix}-{what}-{name}")
    progress, message, error = {}, {}, {}
    for name, kind in kinds.items():
        status = state.jobs[kind].param
        progress[name] = pn.indicators.Progress(value=pn.bind(_percent, status.progress), max=100,
                                                active=status.running, width=width,
                                                css_classes=[css("progress", name)])
        message[name] = pn.pane.Str(pn.bind(_labelled, status.message, kind if label_messages else ""),
                                    css_classes=[css("job-message", name)])
        error[name] = pn.pane.Alert(status.error, alert_type="danger", visible=pn.bind(bool, status.error),
                                    css_classes=[css("job-error", name)])
        state.jobs[kind].param.watch(partial(on_job, name), ["running", "progress", "message", "error"])
    return JobIndicators(kinds, progress, message, error)


#: The widget a parameter gets unless a tab asks for another, by parameter type (the first that matches: a
#: ``ListSelector`` is a ``Selector`` and an ``Integer`` a ``Number``, so they come first).
WIDGET_KINDS: tuple[tuple[type[param.Parameter], type[pn.widgets.Widget]], ...] = (
    (param.ListSelector, pn.widgets.MultiChoice), (param.Selector, pn.widgets.Select),
    (param.Boolean, pn.widgets.Checkbox), (param.Integer, pn.widgets.IntInput), (param.Number, pn.widgets.FloatInput),
    (param.String, pn.widgets.TextInput))


def widget_kind(parameter: param.Parameter) -> type[pn.widgets.Widget]:
    """The widget of :data:`WIDGET_KINDS` for ``parameter``'s type (a TypeError for a type it does not list)."""
    for ptype, kind in WIDGET_KINDS:
        if isinstance(parameter, ptype):
            return kind
    raise TypeError(f"no default widget for the {type(parameter).__name__} parameter {parameter.name!r}; "
                    "give its widget kind explicitly.")


def param_widget(state, name: str, kind: type[pn.widgets.Widget] | None, prefix: str,
                 **options) -> pn.widgets.Widget:
    """A ``kind`` widget (None: :func:`widget_kind` of the parameter) linked to ``state.<name>``, with the CSS class
    ``{prefix}-<name with - for _>`` (stretching to the width of its column unless ``sizing_mode`` says
    otherwise). A number typed into an ``IntInput`` or ``FloatInput`` is checked by :func:`checked_input`."""
    kind = kind or widget_kind(state.param[name])
    options.setdefault("sizing_mode", "stretch_width")
    css_classes = [f"{prefix}-{name.replace('_', '-')}"]
    if issubclass(kind, (pn.widgets.IntInput, pn.widgets.FloatInput)):
        return checked_input(state, name, kind, css_classes=css_classes, **options)
    return kind.from_param(state.param[name], css_classes=css_classes, **options)


def checked_input(state, name: str, kind: type[pn.widgets.Widget], **options) -> pn.widgets.Widget:
    """A numeric input linked to ``state.<name>`` that never reverts silently.

    The input has no ``start``/``end`` of its own (the browser would clamp to them without a word, and soft
    bounds would block values the hard bounds allow): a value outside the parameter's bounds is refused by
    the state's ``tell("input", ...)`` with the allowed range (:func:`~explorer.views.common.state.values.rejection`)
    and the input shows the value kept; the next accepted value takes the message away.
    """
    p = state.param[name]
    if p.step is not None and issubclass(kind, pn.widgets.FloatInput):
        options.setdefault("step", p.step)
    widget = kind(label=p.label, value=getattr(state, name), description=p.doc, **options)
    tell = getattr(state, "tell", None)

    def to_state(event) -> None:
        if event.new == getattr(state, name):
            return
        message = rejection(state, name, event.new)
        if tell is not None:
            tell("input", message)
        if message:
            widget.value = getattr(state, name)
        else:
            setattr(state, name, event.new)

    widget.param.watch(to_state, "value")
    state.param.watch(lambda event: setattr(widget, "value", event.new), name)
    return widget


def respond_at_once(widget: pn.widgets.Widget) -> pn.widgets.Widget:
    """``widget``, whose changes in the browser reach the server's callbacks at once (without Panel's 50 ms wait,
    which has no public setting: :func:`explorer.runtime.compat.handle_changes_at_once`). For a control whose update
    is fast (S/N: a cached theory curve and one replica solve), those 50 ms are a third of the server's share of the
    update. A composite widget's parts get it too."""
    return handle_changes_at_once(widget)


def param_widgets(state, names: Iterable[str] | Mapping[str, type[pn.widgets.Widget]], prefix: str,
                  kinds: Mapping[str, type[pn.widgets.Widget]] | None = None) -> dict[str, pn.widgets.Widget]:
    """:func:`param_widget` for every name of ``names``, in order: the widget of ``kinds`` (or, when ``names`` is
    a mapping, of ``names``) for that name, else the parameter type's (:func:`widget_kind`)."""
    kinds = names if isinstance(names, Mapping) else kinds or {}
    return {name: param_widget(state, name, kinds.get(name), prefix) for name in names}


def declared_widgets(state, prefix: str, names: Iterable[str] | None = None) -> dict[str, pn.widgets.Widget]:
    """:func:`param_widget` for every declared control of ``state`` in a sidebar group (or of ``names``), of the
    widget class and options its declaration names (:mod:`~explorer.views.common.state.declarations`)."""
    found = declarations.declarations(state)
    names = [n for n, d in found.items() if d.group is not None] if names is None else list(names)
    widgets = {}
    for name in names:
        d = found[name]
        kind = getattr(pn.widgets, d.widget) if d.widget else None
        widgets[name] = param_widget(state, name, kind, prefix, **d.widget_options)
    return widgets


def show_applicable(state, widgets: Mapping[str, pn.viewable.Viewable]) -> Callable[..., None]:
    """Keeps each of ``widgets`` visible only while its control applies (its declaration's ``applies``), checked
    after every change of a declared control; returns the check (a page may call it after changes of its own)."""

    def check(*events) -> None:
        for name, widget in widgets.items():
            widget.visible = declarations.applies(state, name)

    state.param.watch(check, list(declarations.control_names(state)))
    check()
    return check


def declared_sidebar(state, widgets: Mapping[str, pn.viewable.Viewable], *,
                     inserts: Mapping[str, Iterable[pn.viewable.Viewable]] | None = None,
                     **column_options) -> pn.Column:
    """The sidebar of ``state``: a heading "### <group>" per declared group, each followed by the widgets of its
    controls in the order of their declarations; ``inserts[name]`` go right after the widget of ``name`` (e.g. an
    upload after the dataset)."""
    inserts = inserts or {}
    items: list = []
    for group, names in declarations.groups(state).items():
        items.append(f"### {group}")
        for name in names:
            if name in widgets:
                items += [widgets[name], *inserts.get(name, ())]
    return pn.Column(*items, **column_options)


def csv_upload(css_class: str, on_file: Callable[[str, bytes], None], *,
               on_refused: Callable[[str], None]) -> CSVFileInput:
    """A CSV file input; ``on_file(filename, content)`` gets every file the user picks within the upload limit
    (checked in the browser, before sending), ``on_refused(message)`` says why another was not taken."""
    return CSVFileInput(on_file, on_refused, css_classes=[css_class], sizing_mode="stretch_width")


def terms_line(text: str, css_class: str) -> pn.pane.Markdown:
    """One short line of ``text`` (e.g. :data:`BOOTSTRAP_TERMS`) in small grey type, with the CSS class
    ``css_class``."""
    return pn.pane.Markdown(text, css_classes=[css_class], sizing_mode="stretch_width", margin=(0, 10),
                            styles={"color": "#555", "font-size": "0.9em"})


def message_alert(state, name: str, css_class: str, alert_type: str = "danger") -> pn.pane.Alert:
    """An alert showing the text of ``state.<name>`` (e.g. ``error``), hidden while it is empty: its text and its
    visibility are references to the parameter (Panel follows them)."""
    text = state.param[name]
    return pn.pane.Alert(text, alert_type=alert_type, visible=pn.bind(bool, text), css_classes=[css_class],
                         sizing_mode="stretch_width")


#: Stream whose events make a DynamicMap re-evaluate its figure (the value counts the redraws).
Revision = hv.streams.Stream.define("Revision", revision=0)


def layers(figure: hv.Element | hv.Overlay) -> tuple[tuple[str, str], ...]:
    """What the Bokeh plot of ``figure`` is made of: the element type and label of each layer."""
    elements = figure.values() if isinstance(figure, hv.Overlay) else [figure]
    return tuple((type(element).__name__, element.label) for element in elements)


def live(figure: Callable[[], hv.Element | hv.Overlay], stream) -> hv.DynamicMap:
    """A DynamicMap showing ``figure()``; ``stream.event(revision=n)`` updates the plot in place."""
    return hv.DynamicMap(lambda revision: figure(), streams=[stream], cache_size=1)


class LazyTabs(pn.Tabs):
    """``pn.Tabs`` whose tabs are put on the page when first opened and then stay there, hidden, when closed.

    Panel's ``dynamic=True`` also builds a tab only when opened, but it detaches a hidden tab's Bokeh models
    from the page's document. A background job that then updates a pane there (a progress message) makes
    Panel 1.9 re-render the pane without a document: ``Reactive._get_properties`` falls back to
    ``CDN_DIST`` and rewrites the page's shared stylesheets (e.g. ``css/loading.css``) to cdn.holoviz.org,
    which offline fails in the browser console. Here every tab's models stay in the document once built.

    Each tab is an empty column until first opened (or open when the tabs are first drawn), when its object is
    made into a Panel object (a
    :class:`pn.viewable.Viewer`'s ``__panel__`` runs then, not before); ``append``, ``extend`` and ``insert``
    take ``(title, object)`` pairs or objects as ``pn.Tabs`` does. Keep ``dynamic`` False (the default).
    """

    def __init__(self, *tabs, **params):
        self._contents: dict[int, pn.viewable.Viewable] = {}  # id(placeholder column) -> the tab's content
        super().__init__(*[self._hold(tab) for tab in tabs], **params)
        self.param.watch(self._fill, "active")  # (the tab open when first drawn is filled then: _get_model)

    def _get_model(self, doc, root=None, parent=None, comm=None):
        self._fill()
        return super()._get_model(doc, root, parent, comm)

    def _hold(self, tab) -> tuple[str, pn.Column]:
        name, content = tab if isinstance(tab, tuple) else (None, tab)
        if name is None:
            content = pn.panel(content)
            name = content.name
        placeholder = pn.Column(sizing_mode="stretch_width", name=name)  # named as its tab: see ``titles``
        self._contents[id(placeholder)] = content  # made into a Panel object (``__panel__``) when first opened
        return name, placeholder

    @property
    def titles(self) -> list[str]:
        """The tabs' titles, in order."""
        return [placeholder.name for placeholder in self.objects]

    def _fill(self, *events) -> None:
        """Put the active tab's content into its placeholder (once)."""
        if 0 <= self.active < len(self):
            placeholder = self.objects[self.active]
            content = self._contents.pop(id(placeholder), None)
            if content is not None:
                placeholder.objects = [pn.panel(content)]

    def append(self, tab) -> None:
        super().append(self._hold(tab))
        self._fill()

    def extend(self, tabs) -> None:
        super().extend([self._hold(tab) for tab in tabs])
        self._fill()

    def insert(self, index: int, tab) -> None:
        super().insert(index, self._hold(tab))
        self._fill()
