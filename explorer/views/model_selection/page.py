"""The model-selection page ([Fis16]): one tab with its Explore and Experiments sub-panels, its view made when
first opened; the temperature series of the Experiments are the server's data folder's CSV files."""

from __future__ import annotations

from explorer.views.common.layout.page import DeferredPageView, Page, PageContext, states_settings
from explorer.views.model_selection.experiments_state import SelectionExperimentState
from explorer.views.model_selection.glossary import GLOSSARY
from explorer.views.model_selection.presets import PRESETS
from explorer.views.model_selection.state import SelectionState
from explorer.views.model_selection.tab import SelectionTab

__all__ = ["PAGE"]


def _build(page: Page, context: PageContext) -> DeferredPageView:
    state = SelectionState(client=context.engine, **states_settings(context, "sel_", SelectionState))
    experiments = SelectionExperimentState(client=context.engine, data_dir=context.data_dir,
                                           **states_settings(context, "selx_", SelectionExperimentState))
    return DeferredPageView(page, {"sel_": state, "selx_": experiments},
                            lambda state, experiments: SelectionTab(state=state, experiments=experiments,
                                                                    controls_in_sidebar=True))


PAGE = Page("selection", tabs={"selection": "Model selection"},
            states={"sel_": "Model selection", "selx_": "Model selection, Experiments"}, build=_build,
            presets=PRESETS, glossary=GLOSSARY, citation="Fischer 2016, model selection", extra_roles=("experiments",))
