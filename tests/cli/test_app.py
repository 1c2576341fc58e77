"""The serve and datasets commands: options, and the Dask workers of ``serve`` (its page: tests/test_app.py)."""
import json
import os
import signal
import subprocess
import sys

import pytest

from explorer import cli, datasets
from tests.conftest import free_port, wait_for_http


def test_serve_help_lists_the_options(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["serve", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for option in ("--port", "--address", "--allow-websocket-origin", "--data-dir", "--show", "--no-show",
                   "--workers", "--scheduler"):
        assert option in text
    assert "127.0.0.1" in text and "5006" in text


def test_serve_help_names_every_tab_of_the_page_registry(capsys):
    from explorer.views.pages import PAGES

    with pytest.raises(SystemExit):
        cli.main(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the description
    titles = [title for page in PAGES for title in page.tabs.values()]
    assert len(titles) == 8  # the page has eight tabs today; each is named, in the order of the tab bar
    positions = [text.find(title) for title in titles]
    assert -1 not in positions and positions == sorted(positions), dict(zip(titles, positions))


def test_serve_rejects_a_missing_data_dir(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["serve", "--data-dir", "/no/such/folder"])
    assert exit_info.value.code == 2
    assert "not a directory" in capsys.readouterr().err


def test_datasets_lists_what_dataset_accepts(capsys):
    assert cli.main(["datasets", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"datasets": list(datasets.available())}
    assert cli.main(["datasets"]) == 0
    assert capsys.readouterr().out.split() == list(datasets.available())


def test_only_serve_imports_the_ui_stack():
    code = ("import sys\nfrom explorer import cli\ncli.main(['datasets'])\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "{'panel', 'holoviews', 'bokeh', 'param'})))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[-2] == ""
    parser = cli.build_parser()
    assert parser.parse_args(["serve"]).handler.__module__ == "explorer.cli.serve"


@pytest.mark.parametrize("stop", ["ctrl-c", "sigterm"])
def test_serve_runs_a_local_cluster_whose_workers_end_with_the_server(stop):
    """``explorer serve --workers 2``: two Dask worker processes under the server, none left after Ctrl-C (SIGINT
    to the whole process group, as a terminal sends it) or SIGTERM (as ``kill`` and service managers send it)."""
    psutil = pytest.importorskip("psutil")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "explorer.cli", "serve", "--port", str(port), "--workers", "2"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                              env={**{k: v for k, v in os.environ.items() if k != "PYTHONMALLOC"},
                                   "OPENBLAS_NUM_THREADS": "1"})
    try:
        wait_for_http(f"http://127.0.0.1:{port}/?dataset=teacher&auto_mc=false", server)
        assert psutil.Process(server.pid).environ().get("PYTHONMALLOC") == "malloc"  # restarted under the C allocator
        children = psutil.Process(server.pid).children(recursive=True)
        workers = [p for p in children if "spawn_main" in " ".join(p.cmdline())]
        assert len(workers) == 2, [p.cmdline() for p in children]
        if stop == "ctrl-c":
            os.killpg(server.pid, signal.SIGINT)
        else:
            server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=120) == 0
        _, alive = psutil.wait_procs(children, timeout=30)
        assert alive == [], f"processes outlived the server: {[p.pid for p in alive]}"
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=20)


def test_the_help_of_scheduler_gives_the_cluster_limit_of_the_gp_page():
    """``serve --help`` says how many rows the GP page takes on a cluster: the page's own constant."""
    from explorer.cli import serve as cli_serve
    from explorer.views.gp_bootstrap.cluster import CLUSTER_ROWS

    assert cli_serve.CLUSTER_ROWS == CLUSTER_ROWS
