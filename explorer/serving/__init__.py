"""The server: :mod:`~explorer.serving.server` serves the app (:mod:`explorer.app`) and the class room's pages with
Panel, handles signals and releases memory. With the command line (:mod:`explorer.cli`) it is the last layer: it may
import every layer before it — the core, the runtime (:mod:`explorer.runtime`), the pages (:mod:`explorer.views`) and
the app — and nothing imports it.
"""
