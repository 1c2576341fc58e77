"""Drawing: the figures' style (:mod:`~explorer.views.common.drawing.figure_style`) and figures patched in place
(:mod:`~explorer.views.common.drawing.patching`).
"""
