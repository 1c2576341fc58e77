"""What a page is made of on the screen: the page protocol (:mod:`~explorer.views.common.layout.page`), tabs
(:mod:`~explorer.views.common.layout.tab`), widgets (:mod:`~explorer.views.common.layout.widgets`), Presentation
mode (:mod:`~explorer.views.common.layout.presentation`), the glossary
(:mod:`~explorer.views.common.layout.glossary`) and the engine's status
(:mod:`~explorer.views.common.layout.engine_status`).
"""
