"""The machinery of a page's session state: values checked and rounded (:mod:`.values`), controls declared once
(:mod:`.declarations`, :mod:`.controls`), background jobs (:mod:`.jobs`), data sources (:mod:`.data_source`), links
(:mod:`.links`), presets (:mod:`.presets`) and the wording of errors (:mod:`.errors`). No widget is built here but
by links and presets, which apply values to a page."""
