"""No "Reproduce a figure" preset: the step-by-step page teaches the bootstrap of [MO03], it reproduces no figure."""

from __future__ import annotations

__all__ = ["PRESETS"]

PRESETS = ()
