"""What a page is made of on the screen: the page protocol (:mod:`.page`), tabs (:mod:`.tab`), widgets
(:mod:`.widgets`), Presentation mode (:mod:`.presentation`), the glossary (:mod:`.glossary`) and the engine's status
(:mod:`.engine_status`)."""
