"""The serve and datasets commands (the server itself is tested in tests/test_app.py)."""
import json
import subprocess
import sys

import pytest

from explorer import cli, datasets


def test_serve_help_lists_the_options(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["serve", "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    for option in ("--port", "--address", "--allow-websocket-origin", "--data-dir", "--show", "--no-show"):
        assert option in text
    assert "127.0.0.1" in text and "5006" in text


def test_serve_rejects_a_missing_data_dir(capsys):
    assert cli.main(["serve", "--data-dir", "/no/such/folder"]) == 2
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
    assert parser.parse_args(["serve"]).handler.__module__ == "explorer.cli.app"
