"""The served app: the page builds without a server, ``explorer serve`` has its options and serves the page.

The headless-browser test of the running page lives in its own file (marker ``browser``).
"""

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
import weakref
from pathlib import Path

import param
import pytest

pn = pytest.importorskip("panel")

from bokeh.document import Document  # noqa: E402
from bokeh.server.contexts import BokehSessionContext, _RequestProxy  # noqa: E402
from panel.io.state import set_curdoc  # noqa: E402
from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine  # noqa: E402

from explorer.app import SERVED_BOKEH_BUNDLES, create_app  # noqa: E402
from explorer.views import GP_TAB_TITLES, URL_PARAMETERS, clear_caches  # noqa: E402
from tests.conftest import free_port


@pytest.fixture
def app():
    clear_caches()
    template = create_app(dataset="teacher", curve_mc_samples=20, mc_samples=200, auto_mc=False, tab="curve")
    for tab in _others(template):  # no server here: their updates are applied by ``wait``
        assert tab.state.wait(timeout=300)
    yield template
    for state in _states(template):
        state.close()


def _others(template) -> list:
    """The deferred tabs of the pages after the Gaussian-process one."""
    return [view.tab for key, view in template.pages.items() if key != "gp"]


def _at(template, name: str) -> int:
    """The index of the tab whose URL name is ``name`` (tests name tabs, never count them)."""
    return template.tab_names.index(name)


def _states(template) -> list:
    return [state for view in template.pages.values() for state in view.states.values()]


def test_create_app_builds_the_template_with_every_page(app):
    assert isinstance(app, pn.template.FastListTemplate)
    view = app.pages["gp"].view
    assert app.tabs.titles == ["Bootstrap, step by step", "Learning curve", "Predictive distribution", "L1 map",
                               "Test inputs",
                               "SVM bootstrap", "Model selection", "Fast bootstrap"]
    assert app.tab_names == ["steps", "curve", "distribution", "l1", "holdout", "svm", "selection", "fastboot"]
    assert list(GP_TAB_TITLES.values()) == app.tabs.titles[1:5]
    assert "explorer-tabs" in app.tabs.css_classes
    assert any("explorer-controls" in column.css_classes for item in app.sidebar.objects
               for column in item.select(pn.Column))
    assert view.state.problem.name == "teacher" and view.state.error == ""


def test_the_sidebar_says_where_monte_carlo_runs_and_links_the_dask_dashboard(app, dask_engine):
    [pane] = [p for item in app.sidebar.objects for p in item.select(pn.pane.HTML) if "explorer-engine" in p.css_classes]
    assert f"Monte-Carlo runs on: {dask_engine.description}" in pane.object
    assert dask_engine.description == "local Dask cluster, 2 worker processes"  # conftest: a core each
    assert f"href='{dask_engine.dashboard_link}'" in pane.object and "Dask dashboard" in pane.object
    assert app.pages["gp"].view.state.engine is dask_engine  # the page's jobs run there (the shared engine by default)


def test_an_unreachable_scheduler_is_an_alert_on_the_page(monkeypatch):
    from explorer.runtime import engine
    from explorer.views.common.layout.engine_status import engine_status

    monkeypatch.setenv(engine.SCHEDULER_ENV, "tcp://127.0.0.1:9")
    monkeypatch.setattr(engine, "_SHARED", {})  # no shared engine opened yet in this process
    pane = engine_status()
    assert isinstance(pane, pn.pane.Alert) and "explorer-engine-error" in pane.css_classes
    assert pane.object.startswith("Cannot reach the Dask scheduler at tcp://127.0.0.1:9")


def test_page_elements_carry_stable_css_classes(app):
    view = app.pages["gp"].view
    for name in ("dataset", "kernel", "noise_var", "s_over_n", "loss", "mc_samples", "seed"):
        assert f"explorer-{name.replace('_', '-')}" in view.controls.widgets[name].css_classes
    curve = view.tab_views["curve"]
    for element, css in ((curve.plot, "explorer-plot-curve"), (curve.progress, "explorer-progress-curve"),
                         (curve.cancel, "explorer-cancel-curve"), (curve.csv, "explorer-csv-curve"),
                         (curve.html, "explorer-html-curve"), (curve.json, "explorer-json-curve")):
        assert css in element.css_classes


def test_s_slider_updates_on_release_only(app):
    slider = app.pages["gp"].view.controls.widgets["s_over_n"]
    state = app.pages["gp"].view.state
    slider.value = 2.0  # dragging
    assert state.s_over_n == 1.0
    with param.edit_constant(slider):  # the browser sets it when the handle is released
        slider.value_throttled = 2.0
    assert state.s_over_n == 2.0


def test_tabs_and_state_follow_each_other(app):
    view = app.pages["gp"].view
    app.tabs.active = _at(app, "l1")
    assert view.state.tab == "l1"
    view.state.tab = "holdout"
    assert app.tabs.active == _at(app, "holdout")


def test_a_tab_is_built_when_first_opened_and_stays_in_the_document(app):
    """LazyTabs: with Panel's dynamic tabs a left tab's models left the document, and a job updating them there
    made Panel 1.9 load the page's stylesheets from cdn.holoviz.org (the browser test: test_browser_tabs.py)."""
    view, doc = app.pages["gp"].view, Document()
    doc.add_root(app.tabs.get_root(doc))
    job_message = view.tab_views["holdout"].job_message
    assert not job_message._models  # never opened: not on the page
    app.tabs.active = _at(app, "holdout")
    app.tabs.active = _at(app, "curve")
    job_message.object = "Monte-Carlo: 100/200 samples"  # a job reports while the tab is hidden
    models = [model for model, _ in job_message._models.values()]
    assert models and all(model.document is doc for model in models)


def test_job_progress_drives_the_progress_bar(app):
    tab, status = app.pages["gp"].view.tab_views["curve"], app.pages["gp"].view.state.jobs["curve"]
    status.param.update(running=True, progress=0.4, message="Monte-Carlo at S/N = 1: 200/500 samples")
    assert tab.progress.value == 40 and tab.progress.active and not tab.cancel.disabled
    status.param.update(running=False, progress=1.0, message="done")
    assert tab.progress.value == 100 and tab.cancel.disabled


def test_state_error_shows_in_an_alert(app):
    view = app.pages["gp"].view
    view.state.upload_csv("bad.csv", b"a,b\n1,2\n")
    assert view.error.visible and "at least 10" in view.error.object


def test_download_callbacks_return_content(app):
    curve = app.pages["gp"].view.tab_views["curve"]
    assert app.pages["gp"].view.state.wait(60)
    assert curve.csv.callback().getvalue().splitlines()[0].startswith("s_over_n,theory")  # the header comes first
    assert "<html" in curve.html.callback().getvalue()[:200].lower()
    assert json.loads(curve.json.callback().getvalue())["settings"]["dataset"] == "teacher"


LINK = "/?dataset=teacher&tab=distribution&mc_samples=200&s_over_n=2.0"


@pytest.fixture
def unconnected_session():
    """The document of a served session opened with ``LINK`` whose Bokeh session does not exist yet.

    That is the state while bokeh builds the page (``create_app``) and until the session object is made:
    ``pn.state.execute(..., schedule=True)`` leaves its callbacks in the document, which keeps them in a
    set; the session made afterwards schedules them in hash order, not in the order they were added.
    """
    clear_caches()
    doc = Document()
    request = HTTPServerRequest(start_line=RequestStartLine("GET", LINK, "HTTP/1.1"),
                                headers=HTTPHeaders({"Host": "127.0.0.1:5006"}))
    context = BokehSessionContext("unconnected", None, doc)  # as bokeh's ApplicationContext makes it
    context._request = _RequestProxy(request)
    doc._session_context = weakref.ref(context)
    with set_curdoc(doc):
        yield doc
    del context


def test_job_updates_apply_in_order_whatever_order_the_session_runs_them(unconnected_session):
    doc = unconnected_session
    added, add = [], doc.add_next_tick_callback
    doc.add_next_tick_callback = lambda callback: added.append(add(callback)) or added[-1]  # note the order
    app = create_app()
    state, status = app.pages["gp"].view.state, app.pages["gp"].view.state.jobs["distribution"]
    assert (state.dataset, state.tab, state.mc_samples, state.s_over_n) == ("teacher", "distribution", 200, 2.0)
    assert status.running  # the job starts with the page, before the browser shows it
    assert state.wait(60), "the distribution job did not finish"
    assert added and set(added) == set(doc.session_callbacks) and state.distribution is None  # all waiting
    for callback in reversed(added):  # the worst order the session could run them in: newest first
        # (before the fix: "solving the replica theory" stayed, with the job long finished)
        callback.callback()
    assert state.distribution is not None and state.distribution.samples.shape == (200, 64)
    assert status.message == "done" and status.progress == 1.0 and not status.running
    assert app.pages["gp"].view.tab_views["distribution"].job_message.object == "done"
    pn.state._on_load(doc)  # Panel's handler of the page's DocumentReady event (runs the onload callbacks)
    search = pn.state.location.search  # a short link, once the page is shown: what differs from the defaults
    assert "mc_samples=200" in search and "dataset=teacher" in search and "tab=distribution" in search
    assert "kernel=" not in search and "seed=" not in search
    state.close()


def test_url_parameters_cover_the_controls():
    assert {"dataset", "kernel", "l2", "lengthscale", "noise_var", "s_over_n", "loss", "eps", "beta",
            "curve_mc_samples", "mc_samples", "seed", "tab"} <= set(URL_PARAMETERS)




def test_explorer_serve_answers_on_localhost(tmp_path):
    port = free_port()
    env = {**os.environ, "EXPLORER_DATA_DIR": str(tmp_path)}
    server = subprocess.Popen([sys.executable, "-m", "explorer.cli", "serve", "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        deadline, page = time.monotonic() + 90, None
        url = f"http://127.0.0.1:{port}/?dataset=teacher&auto_mc=false&s_over_n=2"
        while time.monotonic() < deadline and page is None:
            try:
                with urllib.request.urlopen(url, timeout=30) as response:
                    assert response.status == 200
                    page = response.read().decode()
            except (ConnectionError, TimeoutError, urllib.error.URLError):
                assert server.poll() is None, server.stdout.read().decode()
                time.sleep(0.3)
        assert page is not None, "the server did not answer within 90 s"
        assert "Resampling Explorer" in page and "bokeh" in page.lower()
        # the bundles it needs, not WebGL nor MathJax (2 MB less JavaScript per page; no TeX, no WebGL here)
        bundles = set(re.findall(r"static/js/([a-z-]+)\.min\.js", page))
        assert bundles == {"bokeh", "bokeh-widgets", "bokeh-tables"}, bundles
    finally:
        server.terminate()
        server.wait(timeout=20)


#: Serves a page of each template class named on the command line (a Markdown pane in it, Panel's Fast design) and
#: prints, per page, the BokehJS bundles it loads and the addresses of another site it links, as one JSON line.
_PAGES_RESOURCES = """
import json, re, sys, threading, urllib.request
import panel as pn
from explorer.app import Page
from tests.conftest import free_port

classes = {"Page": Page, "FastListTemplate": pn.template.FastListTemplate}
port = free_port()
apps = {f"/{name}": (lambda cls=classes[name]: cls(title="x", main=[pn.pane.Markdown("hello")], design=pn.theme.Fast))
        for name in sys.argv[1:]}
server = pn.serve(apps, port=port, show=False, start=False)
server.start()
threading.Thread(target=server.io_loop.start, daemon=True).start()
for name in sys.argv[1:]:
    page = urllib.request.urlopen(f"http://127.0.0.1:{port}/{name}", timeout=60).read().decode()
    print(json.dumps({"bundles": sorted(set(re.findall(r"static/js/([a-z-]+)\\.min\\.js", page))),
                      "elsewhere": sorted(set(re.findall(r'(?:src|href)="(https?://[^"]+)"', page)))}))
"""


def _pages_resources(*classes: str) -> list[dict]:
    out = subprocess.run([sys.executable, "-c", _PAGES_RESOURCES, *classes], capture_output=True, text=True,
                         timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def test_panels_page_loads_every_bundle_and_a_web_font_and_the_explorers_only_what_it_uses():
    """Upstream: a Panel page served by Bokeh's server loads all five BokehJS bundles (no setting chooses them) and,
    with the Fast design, a web font from fonts.googleapis.com; the explorer's page (:class:`explorer.app.Page`,
    whose Jinja template leaves them out) loads the bundles of ``SERVED_BOKEH_BUNDLES`` and nothing from another
    site. When an upstream assertion fails, Bokeh or Panel has changed: check whether ``page.html`` still needs
    that part."""
    upstream, ours = _pages_resources("FastListTemplate", "Page")
    assert upstream["bundles"] == sorted(["bokeh", "bokeh-gl", "bokeh-widgets", "bokeh-tables", "bokeh-mathjax"])
    assert [url for url in upstream["elsewhere"] if "fonts.googleapis.com" in url]
    assert ours == {"bundles": sorted(SERVED_BOKEH_BUNDLES), "elsewhere": []}


def test_target_picker_defaults_to_the_last_column_with_the_widget_linked(tmp_path):
    (tmp_path / "houses.csv").write_text("size,rooms,price\n" + "".join(f"{i},{i % 3},{i * 7 % 11}\n" for i in range(12)))
    template = create_app(data_dir=tmp_path, dataset="teacher", auto_mc=False, tab="curve")
    state, widget = template.pages["gp"].view.state, template.pages["gp"].view.controls.widgets["target"]
    state.dataset = "file: houses.csv"
    assert state.target == widget.value == "price" and widget.visible
    widget.value = "size"
    assert state.wait(60)  # a CSV first gets the hyperparameters of largest evidence (a background job)
    assert state.target == "size" and state.problem.y.tolist() == list(range(12))
    state.dataset = "teacher"
    assert state.target is None and not widget.visible
    state.close()


def test_svm_and_selection_tabs_leave_the_gp_tab_alone(app):
    view = app.pages["gp"].view
    app.tabs.active = _at(app, "svm")
    assert view.state.tab == "curve"
    app.tabs.active = _at(app, "selection")
    assert view.state.tab == "curve"
    app.tabs.active = _at(app, "distribution")
    assert view.state.tab == "distribution"


def test_the_bare_page_opens_the_step_by_step_page_and_starts_it_alone():
    app = create_app()
    try:
        assert app.tab_names[app.tabs.active] == "steps" == app.tab_names[0]
        assert app.pages["steps"].started and app.pages["steps"].tab.state.started
        assert not any(view.started for key, view in app.pages.items() if key != "steps")
        assert app.tab_controls[0].visible and not any(c.visible for c in app.tab_controls[1:] if c is not
                                                       app.tab_controls[0])
    finally:
        for state in _states(app):
            state.close()
    with pytest.raises(ValueError, match="tab='nope'; the tabs are steps, curve"):
        create_app(tab="nope")


def test_sidebar_shows_the_controls_of_the_open_tab():
    app = create_app(tab="curve")
    view = app.pages["gp"].view
    try:
        gp = app.tab_controls[_at(app, "curve")]
        assert all(app.tab_controls[_at(app, name)] is gp for name in GP_TAB_TITLES)
        assert any("explorer-controls" in column.css_classes for column in gp.select(pn.Column))
        assert gp.visible and not any(c.visible for c in app.tab_controls if c is not gp)
        deferred = app.pages["fastboot"].tab
        assert not deferred.built and not app.tab_controls[_at(app, "fastboot")].objects  # made when first opened
        assert app.pages["gp"].started and view.state.started  # the open page computes from the start,
        assert not any(tab.state.started for tab in _others(app))  # the other pages when first opened
        app.tabs.active = _at(app, "fastboot")  # its controls are in the sidebar, not in the tab
        assert deferred.state.started and not app.pages["svm"].tab.state.started
        fast = deferred.view
        assert deferred.built and app.tab_controls[_at(app, "fastboot")].objects == [fast.controls]
        assert app.tab_controls[_at(app, "fastboot")].visible and not gp.visible
        assert "explorer-fastboot-controls" in fast.controls.css_classes
        assert fast.controls not in fast.layout().objects
        app.tabs.active = _at(app, "selection")  # the Explore sub-panel's controls, then the Experiments'
        selection = app.pages["selection"].tab.view
        assert selection.experiments is app.pages["selection"].tab.experiments  # the state made first
        explore, experiments = selection.controls.objects
        assert app.tab_controls[_at(app, "selection")].visible and not app.tab_controls[_at(app, "fastboot")].visible
        selection.layout()
        assert explore.visible and not experiments.visible
        selection.subtabs.active = 1
        assert experiments.visible and not explore.visible
        app.tabs.active = _at(app, "curve")
        assert gp.visible and not any(c.visible for c in app.tab_controls if c is not gp)
    finally:
        view.state.close()
        for tab in _others(app):
            tab.state.close()


def test_presentation_switch_redraws_every_tab_larger():
    app = create_app(dataset="teacher", auto_mc=False, tab="curve")
    view = app.pages["gp"].view
    try:
        (switch,) = [item for item in app.header.objects if isinstance(item, pn.widgets.Toggle)]
        from panel.links import Callback
        (callback,) = Callback.registry[switch]  # the browser switches the page's CSS class at once
        assert "explorer-presentation" in callback.code["value"]
        switch.value = True
        tabs = [*view.tab_views.values(), *_others(app)]
        assert all(tab.presentation for tab in tabs)
        figure = view.tab_views["curve"].plot.object[()]  # the DynamicMap's current frame
        assert figure.opts.get("plot").kwargs["fontscale"] > 1
        svm = app.pages["svm"].tab.view  # made now: it takes the switch's value
        assert svm.presentation
        assert svm.plots["curve"].object[()].opts.get("plot").kwargs["fontscale"] > 1
        switch.value = False
        assert not svm.presentation  # a tab made earlier follows the switch
        assert view.tab_views["curve"].plot.object[()].opts.get("plot").kwargs.get("fontscale", 1.0) == 1.0
    finally:
        view.state.close()
        for tab in _others(app):
            tab.state.close()


def test_a_session_that_ends_logs_what_the_result_caches_hold(caplog, monkeypatch):
    """``EXPLORER_LOG_LEVEL=info explorer serve`` says, as each session ends, what the shared caches hold (the
    soak benchmark reads it): the registry's bytes and results; then the server's callback runs."""
    import logging

    import numpy as np

    from explorer import app as app_module
    from explorer.runtime import caches

    registry = caches.CacheRegistry(max_bytes=256e6)
    monkeypatch.setattr(caches, "registry", registry)
    registry.lru("test.session_end", 4).put("a", np.zeros(250_000))  # 2 MB
    called = []
    with caplog.at_level(logging.INFO, logger="explorer.app"):
        app_module._session_ended(lambda: called.append(True), None)
    assert "a session ended; the result caches hold 2.0 MB in 1 results (budget 256 MB)" in caplog.text
    assert called == [True]


def test_an_idle_server_drops_its_sessions_results_and_keeps_the_warm_ups(caplog, monkeypatch):
    import logging
    from types import SimpleNamespace

    import numpy as np

    from explorer.runtime import caches
    from explorer.serving import server as server_module

    registry = caches.CacheRegistry(max_bytes=256e6)
    monkeypatch.setattr(caches, "registry", registry)
    cache = registry.lru("test.idle", 8)
    cache.put("warm", np.zeros(125_000))  # 1 MB, computed by the warm-up
    registry.keep_all()
    cache.put("student", np.zeros(375_000))  # 3 MB, a student's
    assert server_module.release_when_idle(lambda: 1) == 0  # a page is still open
    assert server_module.release_when_idle(lambda: 0, SimpleNamespace(finished=False)) == 0  # the warm-up computes
    assert registry.nbytes == 4_000_000
    with caplog.at_level(logging.INFO, logger="explorer.serving.server"):
        assert server_module.release_when_idle(lambda: 0, SimpleNamespace(finished=True)) == 3_000_000
    assert cache.get("warm") is not None and cache.get("student") is None
    assert "no page open: dropped 3.0 MB of the sessions' results; the result caches hold 1.0 MB in 1 results" in \
        caplog.text


def test_an_idle_server_has_its_workers_give_their_freed_memory_back(caplog):
    import logging
    import threading
    from types import SimpleNamespace

    from explorer.serving import server as server_module

    asked = threading.Event()

    def return_workers_memory() -> int:  # the engine's Client.run, off the event loop
        assert threading.current_thread() is not threading.main_thread()
        asked.set()
        return 2

    forgot = threading.Event()

    def forget_finished_jobs() -> int:  # the local scheduler's records (Client.run_on_scheduler): first
        assert threading.current_thread() is not threading.main_thread() and not asked.is_set()
        forgot.set()
        return 3

    engine = SimpleNamespace(return_workers_memory=return_workers_memory, forget_finished_jobs=forget_finished_jobs)
    server_module.release_when_idle(lambda: 1, None, engine)  # a page is open: the workers keep computing
    assert not asked.wait(0.3) and not forgot.is_set()
    with caplog.at_level(logging.INFO, logger="explorer.serving.server"):
        server_module.release_when_idle(lambda: 0, None, engine)
        assert asked.wait(10)
        for _ in range(100):
            if "2 workers gave their freed memory back" in caplog.text:
                break
            threading.Event().wait(0.05)
    assert "no page open: 2 workers gave their freed memory back" in caplog.text and forgot.is_set()


def test_only_sessions_with_a_page_connected_count_as_open_pages():
    """A bare HTTP request (a link preview, the probe whether the server answers) makes a session that lives on
    unconnected for ~30 s: the warm-up does not wait for it, nor does the release of an idle server."""
    from types import SimpleNamespace

    from explorer.serving.server import pages_open

    server = SimpleNamespace(get_sessions=lambda: [SimpleNamespace(connection_count=n) for n in (0, 1, 2, 0)])
    assert pages_open(server) == 2
    assert pages_open(SimpleNamespace(get_sessions=lambda: [])) == 0


@pytest.mark.parametrize("value,level", [("info", "INFO"), ("", "WARNING"), ("DEBUG", "DEBUG"), ("loud", "WARNING")])
def test_the_log_level_comes_from_the_environment(monkeypatch, value, level, capsys):
    import logging

    from explorer.serving import server as server_module

    logger = logging.getLogger("explorer")
    before = logger.level
    monkeypatch.setenv(server_module.LOG_LEVEL_ENV, value)
    server_module._configure_log()
    try:
        assert logging.getLevelName(logger.level) == level
        if value == "loud":  # an unknown level is said, once, on stderr
            assert "EXPLORER_LOG_LEVEL='loud' is not one of debug, info, warning, error" in capsys.readouterr().err
    finally:
        logger.removeHandler(logger._explorer_handler)
        del logger._explorer_handler
        logger.setLevel(before)
        logger.propagate = True


def test_a_log_line_comes_out_once_when_the_root_logger_has_a_handler(monkeypatch, capsys):
    # Bokeh's logging.debug on the root logger gives it a handler (logging.basicConfig): lines came out twice
    import logging
    import sys

    from explorer.serving import server as server_module

    logger, root = logging.getLogger("explorer"), logging.getLogger()
    before = logger.level
    monkeypatch.setenv(server_module.LOG_LEVEL_ENV, "info")
    server_module._configure_log()
    extra = logging.StreamHandler(sys.stderr)
    root.addHandler(extra)
    try:
        logging.getLogger("explorer.app").info("a session ended; once")
        assert capsys.readouterr().err.count("a session ended; once") == 1
    finally:
        root.removeHandler(extra)
        logger.removeHandler(logger._explorer_handler)
        del logger._explorer_handler
        logger.setLevel(before)
        logger.propagate = True
