"""Drawing: the figures' style (:mod:`.figure_style`) and figures patched in place (:mod:`.patching`)."""
