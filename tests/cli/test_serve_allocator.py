"""``explorer serve`` restarts itself under the C library's allocator (``PYTHONMALLOC=malloc``) so that a closed
class room's memory goes back to the system (issue 48; figures in benchmarks/bench_class.py's docstring)."""
import sys

import pytest

from explorer.cli import serve


class Restarted(Exception):
    pass


@pytest.fixture
def execs(monkeypatch):
    calls = []

    def execve(path, args, env):
        calls.append((path, args, env))
        raise Restarted

    monkeypatch.setattr(serve.os, "execve", execve)
    monkeypatch.delenv(serve.ALLOCATOR_ENV, raising=False)
    return calls


def test_serve_is_the_same_command_line_again_with_the_c_allocator(execs, monkeypatch):
    monkeypatch.setattr(sys, "orig_argv", ["/venv/bin/python", "-X", "dev", "/venv/bin/explorer", "serve", "--port",
                                           "5007"])
    with pytest.raises(Restarted):
        serve.restart_under_c_allocator(["/venv/bin/explorer", "serve", "--port", "5007"])
    [(path, args, env)] = execs
    assert path == sys.executable
    assert args == ["/venv/bin/python", "-X", "dev", "/venv/bin/explorer", "serve", "--port", "5007"]
    assert env["PYTHONMALLOC"] == "malloc"
    assert env["PATH"] == serve.os.environ["PATH"]  # the rest of the environment kept


@pytest.mark.parametrize("argv", [["explorer", "learning-curve"], ["explorer", "datasets"], ["explorer"],
                                  ["explorer", "serve", "--help"], ["explorer", "serve", "-h"]])
def test_other_commands_and_help_run_where_they_are(execs, argv):
    serve.restart_under_c_allocator(argv)
    assert execs == []


@pytest.mark.parametrize("chosen", ["pymalloc", "malloc", "debug"])
def test_an_allocator_chosen_by_the_user_is_kept(execs, monkeypatch, chosen):
    """Also what stops the restarted process from restarting again."""
    monkeypatch.setenv(serve.ALLOCATOR_ENV, chosen)
    serve.restart_under_c_allocator(["explorer", "serve"])
    assert execs == []

