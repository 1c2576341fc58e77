"""Progress, stopping and partial results of long computations: one :class:`Hooks` for every paper.

Every long-running core function (Monte-Carlo bootstraps, learning curves, the papers' experiments,
model-selection optimisation and rankings) takes ``hooks: Hooks | None = None`` and

* reports ``hooks.report(fraction, message)`` with the fraction of the work done, in [0, 1], and where it
  is as a :class:`Progress` (``done`` of ``total`` ``unit`` of a ``stage``; ``hooks.step(done, total, unit)``
  says both at once, a plain-text message is a stage);
* calls ``hooks.check(done, total, unit)`` between units of work (batches of bootstrap samples,
  replications, restarts, criteria, data sets), which raises :class:`Cancelled` once ``should_stop()``
  returns True;
* hands ``hooks.publish(value)`` its partial results (e.g. the curve so far), where it has any;
* gives nested work ``hooks.sub(start, span, label)``: the inner fractions are mapped to
  [start, start + span] of the outer range and its stages prefixed by ``label``.

Progress is data: a receiver gets ``progress(fraction, Progress)`` and writes its own sentence from the fields
(``str(progress)`` is the short form "stage: done/total unit"); it never parses text.

The hooks never change the numbers. :func:`best_time` measures what a long computation costs (the
experiments compare the theory's cost with a Monte-Carlo sample's or a fit's). Core module: numpy and scipy only.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

__all__ = ["Cancelled", "Hooks", "NO_HOOKS", "Progress", "best_time"]


@dataclass(frozen=True)
class Progress:
    """Where a long computation is: ``done`` of ``total`` ``unit`` of its ``stage``.

    Attributes
    ----------
    done, total : int or None
        Units of work finished and in all (None for a step that counts nothing, e.g. "solving the theory").
    unit : str
        What a unit is (``"samples"``, ``"replications"``, ``"values of γ"``, ...).
    stage : str
        Which part of the work: the labels of the nested stages joined by ": " (``"fast bootstrap"``,
        ``"Monte-Carlo"``), or a short description; empty for the outermost counting.

    ``str(progress)`` is the short form "stage: done/total unit" (the progress line of the command line).
    """

    done: int | None = None
    total: int | None = None
    unit: str = ""
    stage: str = ""

    def __str__(self) -> str:
        count = "" if self.done is None or self.total is None else f"{self.done}/{self.total} {self.unit}".rstrip()
        return ": ".join(part for part in (self.stage, count) if part)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def within(self, label: str) -> Progress:
        """This progress as a part of the stage ``label`` (``label: stage``; unchanged for an empty label)."""
        return replace(self, stage=f"{label}: {self.stage}" if label and self.stage else (label or self.stage))


class Cancelled(Exception):
    """Raised by :meth:`Hooks.check` when ``should_stop()`` returns True between two units of work.

    ``done`` units of ``total`` were finished (of the outermost function that counts them, see
    :meth:`Hooks.sub`).
    """

    def __init__(self, done: int, total: int, unit: str = "samples"):
        super().__init__(f"Run cancelled after {done} of {total} {unit}.")
        self.done, self.total, self.unit = done, total, unit

    def __reduce__(self):  # pickled from a Dask worker back to the job: rebuilt from its counts
        return type(self), (self.done, self.total, self.unit)


@dataclass(frozen=True)
class Hooks:
    """Callbacks of a long computation; every field is optional and None does nothing.

    Attributes
    ----------
    progress : callable(fraction, Progress), optional
        Receives the fraction of the work done, in [0, 1], and where the work is (:class:`Progress`).
    should_stop : callable() -> bool, optional
        Polled between units of work; True makes :meth:`check` raise :class:`Cancelled`.
    partial : callable(value), optional
        Receives partial results (the function's documentation says which).
    count : (done, total, unit), optional
        Set by :meth:`sub`: the outer count a :class:`Cancelled` raised in nested work reports.
    """

    progress: Callable[[float, Progress], None] | None = None
    should_stop: Callable[[], bool] | None = None
    partial: Callable[[object], None] | None = None
    count: tuple[int, int, str] | None = None

    def report(self, fraction: float, message: str | Progress = "") -> None:
        """Call ``progress`` with ``fraction`` clipped to [0, 1] and a :class:`Progress`; nothing if ``progress``
        is None.

        Parameters
        ----------
        fraction : float
            Fraction of the work done; clipped to [0, 1].
        message : Progress or str, optional
            Where the work is; a text is the stage of a step that counts nothing (``Progress(stage=message)``).
        """
        if self.progress is not None:
            step = message if isinstance(message, Progress) else Progress(stage=str(message))
            self.progress(min(max(float(fraction), 0.0), 1.0), step)

    def step(self, done: int, total: int, unit: str, stage: str = "") -> None:
        """Report ``done`` of ``total`` ``unit`` (the fraction ``done / total``; 1 when ``total`` is 0).

        Parameters
        ----------
        done, total : int
            Units of work finished and in all.
        unit : str
            What a unit is.
        stage : str, optional
            Which part of the work.
        """
        self.report(done / total if total else 1.0, Progress(done, total, unit, stage))

    def check(self, done: int, total: int, unit: str = "samples") -> None:
        """Raise :class:`Cancelled` (``done`` of ``total`` ``unit``, or the outer count) if asked to stop.

        Parameters
        ----------
        done : int
            Units of work finished so far.
        total : int
            Units of work in all.
        unit : str, optional
            What a unit is (``"samples"``, ``"replications"``, ...), for the message.

        Raises
        ------
        Cancelled
            If ``should_stop`` is set and returns True. It carries ``count`` (set by :meth:`sub`)
            if there is one, else (``done``, ``total``, ``unit``).
        """
        if self.should_stop is not None and self.should_stop():
            raise Cancelled(*(self.count or (done, total, unit)))

    def publish(self, value) -> None:
        """Hand ``value`` (a partial result) to ``partial``; nothing if ``partial`` is None.

        Parameters
        ----------
        value : object
            The partial result (the calling function's documentation says what it is).
        """
        if self.partial is not None:
            self.partial(value)

    def publishing(self, convert: Callable[[object], object]) -> Hooks:
        """These hooks for nested work whose partial results this level publishes as ``convert(value)``.

        Parameters
        ----------
        convert : callable(value) -> object
            Turns a partial result of the nested work into one of this level (e.g. a curve into its points).

        Returns
        -------
        Hooks
            The same ``progress``, ``should_stop`` and ``count``; ``partial`` publishes ``convert(value)`` here.
        """
        return Hooks(self.progress, self.should_stop, lambda value: self.publish(convert(value)), self.count)

    def sub(self, start: float, span: float, label: str = "", *, count: tuple[int, int, str] | None = None,
            partial: Callable[[object], None] | None = None) -> Hooks:
        """Hooks for nested work that covers [start, start + span] of this range.

        The stages of the nested work's :class:`Progress` are prefixed with ``label``; ``count`` (done, total, unit) of this
        level is what a cancellation inside reports (the outermost count wins); the nested work's partial
        results go to ``partial`` (default: nowhere, they are not this level's results).

        Parameters
        ----------
        start : float
            Outer fraction at which the nested work starts.
        span : float
            Width of the outer range the nested fractions [0, 1] are mapped to.
        label : str, optional
            Prefix of the nested stages (``"label: stage"``).
        count : tuple of (int, int, str), optional
            (done, total, unit) of this level, reported by a :class:`Cancelled` raised inside unless an
            outer count is already set.
        partial : callable(value), optional
            Receiver of the nested work's partial results.

        Returns
        -------
        Hooks
            Hooks sharing ``should_stop`` with these; ``progress`` is None if this level has none.
        """
        progress = None if self.progress is None else _Scaled(self, float(start), float(span), label)
        return Hooks(progress, self.should_stop, partial, self.count or count)


@dataclass(frozen=True)
class _Scaled:
    """``progress`` of :meth:`Hooks.sub`: maps a nested fraction into the outer range, prefixes the stage."""

    outer: Hooks
    start: float
    span: float
    label: str

    def __call__(self, fraction: float, message: Progress) -> None:
        self.outer.report(self.start + self.span * min(max(fraction, 0.0), 1.0), message.within(self.label))


NO_HOOKS = Hooks()
"""Hooks that do nothing (the default of every long-running function)."""


def best_time(fn: Callable[[], object], repeats: int = 3) -> float:
    """Wall-clock seconds of the fastest of ``repeats`` calls of ``fn`` (at least one call).

    The papers' experiments report the cost of the theory against that of a Monte-Carlo sample or a
    fit measured the same way, so that the ratio is meaningful.
    """
    best = math.inf
    for _ in range(max(repeats, 1)):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
