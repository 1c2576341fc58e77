"""What the minimal page says when its computation fails."""
from __future__ import annotations

from explorer.views.common.state.errors import Wording

__all__ = ["WORDING"]

WORDING = (Wording(ZeroDivisionError, "The minimal page cannot list these squares ({err}): choose another count."),)
