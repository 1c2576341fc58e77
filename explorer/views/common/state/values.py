"""Clean values and plain messages for the controls of every state: numbers without float noise, and a rejected
value that says why.

:class:`CheckedState` is mixed into each tab's state (before ``param.Parameterized``): every real number set
on it is rounded to :data:`SIGNIFICANT` significant digits (a slider's ``0.45000000000000007`` is stored, shown
and linked as ``0.45``, √10 as ``3.16228``), and :meth:`CheckedState.tell` keeps one notice per cause in the
state's ``notice`` (a cause that goes away takes its notice with it). :func:`rejection` is the sentence a
numeric input shows instead of reverting silently.
"""

from __future__ import annotations

import math

import param

__all__ = ["SIGNIFICANT", "clean_number", "CheckedState", "rejection"]

#: Significant digits kept of every real-valued control (widgets, URL, state).
SIGNIFICANT = 6


def clean_number(value: float) -> float:
    """``value`` rounded to :data:`SIGNIFICANT` significant digits (float noise of sliders and sums goes)."""
    return float(f"{value:.{SIGNIFICANT}g}") if math.isfinite(value) else value


def _real_parameters(cls) -> frozenset[str]:
    """Names of the real-valued (``param.Number`` but not ``param.Integer``) parameters of ``cls``."""
    found = cls.__dict__.get("_real_names")
    if found is None:
        found = frozenset(name for name, p in cls.param.objects(instance=False).items()
                          if isinstance(p, param.Number) and not isinstance(p, param.Integer))
        cls._real_names = found
    return found


class CheckedState:
    """Mixin of the states: real numbers rounded on set (also the defaults), notices kept per cause.

    The state declares a ``notice`` string parameter; :meth:`tell` writes it.
    """

    def __init__(self, **params):
        super().__init__(**params)
        for name in _real_parameters(type(self)):
            value = getattr(self, name)
            if isinstance(value, float) and clean_number(value) != value:
                setattr(self, name, value)  # the default, rounded (no watcher is installed yet)

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, float) and name in _real_parameters(type(self)):
            value = clean_number(value)
        super().__setattr__(name, value)

    def tell(self, cause: str, text: str = "") -> None:
        """Show ``text`` as the notice of ``cause`` ("" removes it); the notices of other causes stay."""
        told = self.__dict__.setdefault("_told", {})
        if text:
            told[cause] = text
        else:
            told.pop(cause, None)
        self.notice = " ".join(told.values())


def _shown(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def rejection(state: param.Parameterized, name: str, value) -> str:
    """Why ``value`` cannot be set as ``state.<name>`` ("" if it can): the allowed range and the value kept.

    >>> class S(param.Parameterized):
    ...     n = param.Integer(500, bounds=(2, 100_000), label="MC samples per S")
    >>> rejection(S(), "n", 200_000)
    'MC samples per S must be between 2 and 100000; kept 500.'
    """
    p = state.param[name]
    lo, hi = p.bounds if p.bounds is not None else (None, None)
    kept = _shown(getattr(state, name))
    if value is None:
        return f"{p.label} needs a value; kept {kept}." if not p.allow_None else ""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{p.label} must be a finite number; kept {kept}."
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        allowed = (f"between {_shown(lo)} and {_shown(hi)}" if lo is not None and hi is not None
                   else f"at least {_shown(lo)}" if lo is not None else f"at most {_shown(hi)}")
        return f"{p.label} must be {allowed}; kept {kept}."
    return ""
