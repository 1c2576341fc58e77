"""The minimal page's "Reproduce a figure" preset."""
from __future__ import annotations

from explorer.views.common.state.presets import Preset

__all__ = ["PRESETS"]

PRESETS = (Preset(key="minimal-three", name="Three squares", reproduces="the first three squares", tab="minimal",
                  settings={"min_": {"count": 3}}, description="Lists 1, 4 and 9.", seconds=0.0),)
