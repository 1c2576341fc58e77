"""Redraw an overlay that only got new data by writing its columns into the Bokeh data sources on the page.

A figure shown through a DynamicMap is redrawn by HoloViews' whole plotting pipeline: the overlay is built
again with its options, then every layer recomputes its style, ranges, legend and glyphs. For the learning
curve that is about 120 ms of the server's single event loop on an idle core, several times that under a
class's load, and every other session waits behind it. When the new figure has the same layers (types,
labels, columns) as the one on the page, :func:`patch_overlay` instead writes each layer's columns into its
``ColumnDataSource`` and sets the axis ranges as HoloViews would (``framewise`` with ``padding``): the same
figure at about a tenth of the cost. Anything else (another set of layers, nothing drawn yet) is left to
HoloViews: the function says so by returning ``False``. Only what changed travels to the page
(:func:`write_columns`): rows appended are streamed, a rolling window (the last 20 curves) streams its new rows with
``rollover``, unchanged columns are not sent; a step of "Bootstrap, step by step" sends a fifth of its figures' data.

A figure function describes its layers as :class:`Layer` values; :func:`overlay` builds the HoloViews overlay
from the same description, so the figure on the page, the exported one and the patched one cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import holoviews as hv
import numpy as np
import panel as pn

from explorer.runtime.compat import drawn_plots

__all__ = ["Layer", "forget_frames", "overlay", "overlay_extents", "overlay_ranges", "patch_overlay", "patch_layers",
           "write_columns"]

#: The columns Bokeh's data source of an element type names otherwise than its dimensions (in their order).
_SOURCE_NAMES = {hv.Rectangles: ("left", "bottom", "right", "top")}


def _name(dimension: hv.Dimension | str) -> str:
    """A dimension's name, without making a ``Dimension`` (a Parameterized: slow to make on every redraw)."""
    return dimension.name if isinstance(dimension, hv.Dimension) else dimension


@dataclass(frozen=True)
class Layer:
    """One layer of an overlay: a HoloViews element type, its dimensions, its data and its style.

    ``data`` holds one array per dimension (key dimensions, then value dimensions). The x axis shows the
    first key dimension, and for ``hv.Segments`` also the third; the y axis the first value dimension, or
    for ``hv.Segments`` the second and fourth key dimensions. A y dimension other than the overlay's first one
    gets its own axis (``multi_y``).
    """

    kind: type[hv.Element]
    kdims: tuple[hv.Dimension | str, ...]
    vdims: tuple[hv.Dimension | str, ...]
    data: tuple[np.ndarray, ...]
    label: str
    style: dict = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        """The column names: the dimensions' names (what HoloViews calls the data source's columns)."""
        return [_name(d) for d in (*self.kdims, *self.vdims)]

    @property
    def columns(self) -> dict[str, np.ndarray]:
        return {name: np.asarray(values) for name, values in zip(self.names, self.data)}

    @property
    def source_columns(self) -> dict[str, np.ndarray]:
        """The columns as the figure's data source names them (``Rectangles``: left, bottom, right, top); a layer
        without data has one row of NaN (:func:`_drawn_data`)."""
        names = _SOURCE_NAMES.get(self.kind, self.names)
        return {name: np.asarray(values) for name, values in zip(names, _drawn_data(self.data))}

    @property
    def x(self) -> list[str]:
        return [self.names[0], self.names[2]] if self.kind in (hv.Segments, hv.Rectangles) else [self.names[0]]

    @property
    def y(self) -> list[str]:
        if self.kind in (hv.Segments, hv.Rectangles):
            return [self.names[1], self.names[3]]
        return [self.names[len(self.kdims)]]

    def element(self) -> hv.Element:
        """The styled HoloViews element (``framewise``: axes follow each new frame of a DynamicMap); a layer
        without data has one row of NaN (:func:`_drawn_data`)."""
        return self.kind(_drawn_data(self.data), list(self.kdims), list(self.vdims),
                         label=self.label).opts(framewise=True, **self.style)


def _drawn_data(data: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """``data``, or one row of NaN in each column if it has no rows: drawn as nothing, but its legend entry keeps
    its glyph. BokehJS draws an entry's glyph from a row of its renderer's data source and draws none for a source
    without rows (``GlyphRendererView.draw_legend`` returns when ``data_size == 0``): before the first resample most
    categories of "Bootstrap, step by step" (s_i = 2, k = 3, ...) were names without a colour."""
    if len(data[0]):
        return data
    return tuple(np.full(1, np.nan) for _ in data)


def overlay(layers: Sequence[Layer]) -> hv.Overlay:
    """The HoloViews overlay of ``layers``, in their order."""
    return hv.Overlay([layer.element() for layer in layers])


def _extent(values: list[np.ndarray]) -> tuple[float, float] | None:
    """The smallest and largest finite value of ``values``; ``None`` if there is none or they are equal
    (HoloViews widens a zero span its own way: that is left to HoloViews)."""
    finite = np.concatenate([v[np.isfinite(v)] for v in values]) if values else np.array([])
    if finite.size == 0 or finite.min() == finite.max():
        return None
    return float(finite.min()), float(finite.max())


def overlay_extents(layers: Sequence[Layer]) -> dict[str, tuple[float, float]] | None:
    """The data extents of ``layers``: ``"x"``, and per y dimension name that of its axis; ``None`` when an axis
    has no finite data or a zero span."""
    axes: dict[str, list[np.ndarray]] = {"x": []}
    for layer in layers:
        columns = layer.columns
        axes["x"] += [columns[name].astype(float) for name in layer.x]
        y = _name(layer.vdims[0] if layer.vdims else layer.kdims[1])
        axes.setdefault(y, []).extend(columns[name].astype(float) for name in layer.y)
    extents = {axis: _extent(values) for axis, values in axes.items()}
    return None if any(e is None for e in extents.values()) else extents


def overlay_ranges(plot, extents: dict[str, tuple[float, float]], padding: float) -> dict[str, tuple[float, float]]:
    """The axis ranges HoloViews gives ``extents`` in ``plot``: each widened at both ends by a fraction of its
    span, ``padding`` along the longer side of the plot and less along the other so that both margins take
    the same screen space (HoloViews' ``get_padding``, with the plot's own ``get_aspect``)."""
    (x0, x1), (y0, y1) = extents["x"], next(e for axis, e in extents.items() if axis != "x")
    aspect = plot.get_aspect(x1 - x0, y1 - y0)
    xpad, ypad = (padding / aspect, padding) if aspect > 1 else (padding, padding * aspect)
    ranges = {}
    for axis, (low, high) in extents.items():
        pad = (xpad if axis == "x" else ypad) * (high - low)
        ranges[axis] = (low - pad, high + pad)
    return ranges


def _matches(subplot, layer: Layer) -> bool:
    frame, source = subplot.current_frame, subplot.handles.get("source")
    return (type(frame) is layer.kind and frame.label == layer.label and source is not None
            and set(source.data) == set(layer.source_columns))


def _drawn_like(pane: pn.pane.HoloViews, layers: Sequence[Layer]) -> list:
    """Every copy of the figure ``pane`` has drawn, if each has the layers ``layers`` describe; else ``[]``.

    Panel has no public accessor for a pane's plots: :func:`explorer.runtime.compat.drawn_plots` reads them.
    ``tests/views/common/drawing/test_patching.py`` notices a change (a patched figure would be redrawn instead)."""
    drawn = drawn_plots(pane)
    if any(len(plot.subplots) != len(layers) or not all(map(_matches, plot.subplots.values(), layers))
           for plot in drawn):
        return []
    return drawn


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two columns hold the same values (NaN equal to NaN)."""
    if a.shape != b.shape:
        return False
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # not numbers: NaN cannot be told apart
        return bool(np.array_equal(a, b))


def _rolled_by(old: dict[str, np.ndarray], new: dict[str, np.ndarray], rows: int) -> int:
    """The number m of rows by which ``new`` is ``old`` rolled (its first ``rows`` − m rows are the last of
    ``old``, m new rows follow), 0 if it is not: the candidates are where ``old`` holds ``new``'s first row."""
    first = np.ones(rows, dtype=bool)
    for name, column in new.items():
        first &= (old[name] == column[0]) | (_is_nan(old[name]) & bool(_is_nan(column[:1]).all()))
    for m in np.flatnonzero(first)[:4]:
        if m and all(_same(old[name][m:], column[:rows - m]) for name, column in new.items()):
            return int(m)
    return 0


def _is_nan(column: np.ndarray) -> np.ndarray:
    return np.isnan(column) if column.dtype.kind == "f" else np.zeros(column.shape, dtype=bool)


def write_columns(source, columns: dict[str, np.ndarray]) -> None:
    """Write ``columns`` into the Bokeh data source ``source``, sending the page only what changed.

    Unchanged columns are not sent. Rows appended at the end are streamed (``source.stream``: only the new rows
    travel); rows appended while as many are dropped at the front (a rolling window, e.g. the last 20 curves) are
    streamed with ``rollover``; otherwise the changed columns are sent, all of them when the length or the columns
    differ. The source holds ``columns`` afterwards in every case.
    """
    old = {name: np.asarray(values) for name, values in source.data.items()}
    if set(old) != set(columns) or not columns:
        source.data = columns
        return
    rows_old, rows_new = len(next(iter(old.values()))), len(next(iter(columns.values())))
    if rows_new == rows_old:
        changed = {name: column for name, column in columns.items() if not _same(old[name], column)}
        if not changed:
            return
        m = _rolled_by(old, columns, rows_new) if rows_new else 0
        if m:
            source.stream({name: column[rows_new - m:] for name, column in columns.items()}, rollover=rows_new)
        else:
            source.data.update(changed)
    elif rows_new > rows_old and all(_same(old[name], column[:rows_old]) for name, column in columns.items()):
        source.stream({name: column[rows_old:] for name, column in columns.items()})
    else:
        source.data = columns


def _write_columns(plot, layers: Sequence[Layer]) -> None:
    for subplot, layer in zip(plot.subplots.values(), layers):
        write_columns(subplot.handles["source"], layer.source_columns)


def patch_overlay(pane: pn.pane.HoloViews, layers: Sequence[Layer], padding: float) -> bool:
    """Show ``layers`` in the figure ``pane`` has drawn by writing their columns into its data sources.

    Parameters
    ----------
    pane : pn.pane.HoloViews
        The pane showing an overlay built by :func:`overlay` (directly or through a DynamicMap), with
        ``padding`` and ``framewise`` ranges and, where it has several y dimensions, ``multi_y``.
    layers : sequence of Layer
        The new figure: the same element types, labels and columns as the drawn one, in the same order.
    padding : float
        The overlay's ``padding`` option.

    Returns
    -------
    bool
        ``True`` when every drawn copy of the figure (one per page showing it) was patched; ``False``, with
        nothing changed, when there is none or its layers differ, or an axis has no range of its own: then
        redraw through HoloViews.
    """
    drawn = _drawn_like(pane, layers)
    if not drawn:
        return False
    extents = overlay_extents(layers)
    if extents is None:
        return False
    first_y = next(name for name in extents if name != "x")
    extra = [name for name in extents if name not in ("x", first_y)]
    if any(name not in (plot.handles.get("extra_y_ranges") or {}) for plot in drawn for name in extra):
        return False
    for plot in drawn:
        axis = {"x": plot.handles["x_range"], first_y: plot.handles["y_range"], **plot.handles["extra_y_ranges"]}
        _write_columns(plot, layers)
        for name, (start, end) in overlay_ranges(plot, extents, padding).items():
            axis[name].update(start=start, end=end)
    return True


def patch_layers(pane: pn.pane.HoloViews, layers: Sequence[Layer], ranges: dict[str, tuple[float, float]]) -> bool:
    """Show ``layers`` in the figure ``pane`` has drawn by writing their columns into its data sources, with the
    axis ranges given (``ranges["x"]``, ``ranges["y"]``: what the figure's ``xlim`` and ``ylim`` say).

    For a figure whose ranges its figure function sets itself (e.g. a log axis, where :func:`patch_overlay`'s
    padding does not apply). Returns ``False``, with nothing changed, when the pane has drawn no copy of the
    figure or its layers differ from ``layers`` (types, labels, columns): then redraw through HoloViews.
    """
    drawn = _drawn_like(pane, layers)
    if not drawn:
        return False
    for plot in drawn:
        _write_columns(plot, layers)
        for axis in ("x", "y"):
            start, end = ranges[axis]
            plot.handles[f"{axis}_range"].update(start=start, end=end)
    return True


def forget_frames(pane: pn.pane.HoloViews) -> None:
    """Drop the frames the DynamicMaps of ``pane`` keep, so that a page drawing the figure anew (the same view
    shown again in a notebook) evaluates it, not a frame from before :func:`patch_overlay`. The stream that
    drives a DynamicMap must also take a new value (``stream.update``, no event), or its callback returns its
    memoized frame."""
    if isinstance(pane.object, hv.core.Dimensioned):
        for dmap in pane.object.traverse(lambda obj: obj, [hv.DynamicMap]):
            dmap.data.clear()
