"""View of [Fis16] (model selection): the session state (:mod:`~explorer.views.model_selection.state`), its figures, tables and exports
(:mod:`~explorer.views.model_selection.figures`), the thesis experiments of the "Experiments" sub-panel (:mod:`~explorer.views.model_selection.experiments_state`), the tab (:mod:`~explorer.views.model_selection.tab`),
presets (:mod:`~explorer.views.model_selection.presets`) and the page declaration (:mod:`~explorer.views.model_selection.page`). The package exports what those modules export."""

from explorer.views.model_selection import experiments_state as experiments
from explorer.views.model_selection import figures, state, tab
from explorer.views.model_selection.experiments_state import *  # noqa: F403
from explorer.views.model_selection.figures import *  # noqa: F403
from explorer.views.model_selection.state import *  # noqa: F403
from explorer.views.model_selection.tab import *  # noqa: F403

__all__ = [*state.__all__, *tab.__all__, *figures.__all__, *experiments.__all__]
