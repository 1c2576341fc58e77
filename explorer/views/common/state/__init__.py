"""The machinery of a page's session state: values checked and rounded (:mod:`~explorer.views.common.state.values`),
controls declared once (:mod:`~explorer.views.common.state.declarations`,
:mod:`~explorer.views.common.state.controls`), background jobs (:mod:`~explorer.views.common.state.jobs`), data
sources (:mod:`~explorer.views.common.state.data_source`), links (:mod:`~explorer.views.common.state.links`),
presets (:mod:`~explorer.views.common.state.presets`) and the wording of errors
(:mod:`~explorer.views.common.state.errors`). No widget is built here but by links and presets, which apply values
to a page.
"""
