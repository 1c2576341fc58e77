"""Fuzz of every CLI command's options (issue 21, item 6): hostile values never give a traceback.

Hypothesis draws command lines from the parser itself (every option of every command, its type and bounds):
hostile values (huge, negative, zero, fractional, 5,000-digit and garbage numbers, 3,000-item lists, empty and odd
paths, missing files, directories, devices, /etc/passwd) or a valid value. Two properties:

- *parse* (in this process, many examples): the parser accepts the command line or refuses it with exit code 2
  and one line on stderr, never another exception;
- *run* (a subprocess per example, ``python -m explorer.cli``, under a time limit of :data:`SECONDS` and a memory
  limit of :data:`MEMORY_BYTES` set with ``RLIMIT_AS``): the command exits 0, or 2 (3: the theory did not
  converge) with exactly one line on stderr, never a traceback, never past the time limit, never killed.

For a run, valid numbers are drawn small (:data:`RUN_HIGH`) and every command starts from the small settings of
:data:`BASE`, so that a command line that is accepted does little work; the bounds themselves are tested in
``test_bounds.py``. The default run is bounded (about a minute); ``-m slow`` runs many more examples. The counts
of calls and exit codes are printed at the end of the session (``tests/cli/conftest.py``).
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import io
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import cli
from explorer.cli import common

#: Time limit of one run, and its address-space limit (bytes).
SECONDS = 20.0
MEMORY_BYTES = 3 * 2**30
#: Calls made, by kind and exit code: printed in the terminal summary.
COUNTS: Counter = Counter()
DURATION: Counter = Counter()

ROOT = Path(__file__).resolve().parents[2]
FAST = {"--mc-samples": "5", "--s-over-n": "1"}
#: Small settings every run starts from (a drawn option replaces the same option here).
BASE = {
    "learning-curve": {"--dataset": "toy", **FAST},
    "distribution": {"--dataset": "toy", **FAST},
    "holdout": {"--dataset": "toy", "--holdout": "5", **FAST},
    "svm-curve": {**FAST, "--no-exact-loo": None},
    "select": {"--dataset": "teacher", "--criteria": "evidence", "--restarts": "1", "--max-iter": "2",
               "--partitions": "2"},
    "select-experiment": {"hyperparameters": None, "--repetitions": "1", "--criteria": "evidence", "--restarts": "1",
                          "--max-iter": "2", "--partitions": "2"},
    "fast-bootstrap": {"--no-full": None, "--no-replica": None, "--fast-grid": "5,50,15", "--fast-replications": "2",
                       "--max-epochs": "5", "--restarts": "1"},
    "serve": {},  # --port: a port in use (the run must stop at the port check)
    "datasets": {},
}
#: fast-bootstrap options of the MLP alone (the BASE gives them small values for a drawn ``--model mlp``).
MLP_ONLY = ("--max-epochs", "--restarts")
#: Options of which one data source may be given (drawing one drops the others from BASE).
DATA_SOURCES = ("--dataset", "--csv", "--series-csv")

# ----------------------------------------------------------------------------- hostile values

GARBAGE = ["", " ", "-", "--", "nan", "-nan", "inf", "-inf", "1e999", "-1e999", "1e-999", "0x10", "1,2", "½", "١٢",
           "+5", " 7 ", "None", "true", "-0", "0.5", "1e3", "1_000", "9" * 400, "9" * 5000, "-" + "9" * 400,
           "1" + "0" * 30, "\n", "a\nb", "💥", "%s", "%(prog)s", "{}"]
#: Per option, the largest valid value drawn for a run (default: the lower bound + 2); None: no valid value is
#: drawn for a run (a local cluster or a scheduler connection would start).
RUN_HIGH = {"--mc-samples": 20, "--seed": 2**32 - 1, "--holdout": 10, "--objects": 8, "--folds": 5, "--lags": 8,
            "--kappa1": 3, "--workers": None, "--scheduler": None}
#: Words tried for the options that take names (besides garbage); the choices of an option are added.
WORDS = {"--dataset": ["boston", "toy", "teacher", "crabs", "pima", "../../etc/passwd"], "--target": ["y", "x", "medv",
         "value", "label"], "--inputs": ["x", "crim,rm", "x,x"], "--column": ["value", "x", "t"],
         "--criteria": ["evidence", "loo,kfold", "evidence,evidence", "asc-boltzmann", "bootstrap632", ","],
         "--rank": ["se", "se,rq", "se,se", "gibbs"], "--address": ["127.0.0.1", "0.0.0.0", "", "localhost",
         "256.1.1.1", "10.255.255.1"], "--allow-websocket-origin": ["example.org:5006", "*", ""],
         "--scheduler": ["tcp://127.0.0.1:9", "tls://127.0.0.1:9", "ucx://x:1", "tcp://:0", "host:99999"]}


def _text(max_size: int = 12) -> st.SearchStrategy[str]:
    return st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=max_size)


def _refused(kind, text: str) -> bool:
    """Whether the option type ``kind`` refuses ``text``."""
    try:
        kind(text)
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        return True
    return False


def _hostile(kind) -> st.SearchStrategy[str]:
    """Values the option type refuses: garbage, huge, negative, long lists."""
    return st.one_of(st.sampled_from(GARBAGE), _text(), st.integers(-10**40, 10**40).map(str),
                     st.integers(10**12, 10**400).map(str), st.floats().map(repr),
                     st.integers(17, 3000).map(lambda n: ",".join(["1"] * n)),
                     st.lists(st.floats().map(repr), max_size=20).map(",".join),
                     st.tuples(st.floats(), st.floats(), st.floats()).map(lambda t: ",".join(map(repr, t))),
                     st.sampled_from(["1,1e9,1e-9", "1,1e308,1e-308", "0,0,0", "5,1,1", "1,2,3,4"])
                     ).filter(lambda text: _refused(kind, text))


def _valid(option: str, kind, run: bool) -> st.SearchStrategy[str] | None:
    """Values the option type accepts: any for parsing, small ones for a run (None: none for a run)."""
    high = RUN_HIGH.get(option, "default")
    if run and high is None:
        return None
    if isinstance(kind, common.IntRange):
        top = kind.high if not run else min(kind.high, kind.low + 2 if high == "default" else high)
        return st.integers(kind.low, top).map(str)
    if isinstance(kind, common.FloatRange):
        return st.floats(kind.low, kind.high).map(repr)
    if isinstance(kind, common.NumberList):
        return st.lists(st.floats(kind.low, kind.high).map(repr), min_size=1,
                        max_size=3 if run else kind.max_items).map(",".join)
    if isinstance(kind, common.Grid):
        small = st.tuples(st.integers(1, 10), st.integers(10, 30), st.integers(3, 10))
        return small.map(lambda t: "{},{},{}".format(*t)) if run else st.sampled_from(["5,50,0.1", "1,1000,1", "10,19,3"])
    return None


def _paths(tmp: Path) -> st.SearchStrategy[str]:
    """Paths: small valid CSVs, and empty, odd, missing, oversized, binary, device and system paths."""
    return st.sampled_from(["", " ", ".", "..", "~", "/", "/etc/passwd", "/etc/shadow", "/proc/self/environ",
                            "/dev/zero", "/dev/null", "/dev/stdin", "/nonexistent/x.csv", "no-such.csv",
                            str(tmp), str(tmp / "big.csv"), str(tmp / "empty.csv"), str(tmp / "binary.csv"),
                            str(tmp / "toy.csv"), str(tmp / "series.csv"), str(ROOT / "datasets" / "boston.csv"),
                            "-", "--", "a\nb", "x" * 5000])


def _words(option: str, choices) -> st.SearchStrategy[str]:
    names = list(choices or ()) + WORDS.get(option, ["x"])
    return st.one_of(st.sampled_from(names), st.lists(st.sampled_from(names), max_size=5).map(",".join),
                     st.sampled_from(GARBAGE), _text())


def value_strategy(action: argparse.Action, tmp: Path, port: int, run: bool) -> st.SearchStrategy[str] | None:
    """How the values of one option are drawn (None: a switch without a value)."""
    option, kind = action.option_strings[-1], action.type
    if action.nargs == 0:
        return None
    if option == "--port" and run:
        return st.one_of(st.just(str(port)), _hostile(kind))  # a valid port is the busy one: serve stops there
    if kind in (common.csv_path, common.directory):
        return _paths(tmp)
    if isinstance(kind, (common.IntRange, common.FloatRange, common.NumberList, common.Grid)):
        valid = _valid(option, kind, run)
        return _hostile(kind) if valid is None else st.one_of(valid, _hostile(kind))
    if run and RUN_HIGH.get(option, "default") is None:
        return _hostile(kind) if kind is not None else st.sampled_from(GARBAGE)
    return _words(option, action.choices)


@functools.cache
def option_actions(command: str) -> dict[str, argparse.Action]:
    """The options of ``command`` (not --help), by their longest name."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return {a.option_strings[-1]: a for a in sub._actions if a.option_strings and a.dest != "help"}


@st.composite
def command_lines(draw, tmp: Path, port: int, commands: tuple[str, ...], run: bool) -> list[str]:
    """A command, its small BASE settings and one to three drawn options (values hostile, or valid and small)."""
    command = draw(st.sampled_from(commands))
    actions = option_actions(command)
    drawn = draw(st.lists(st.sampled_from(sorted(actions)), min_size=1, max_size=3, unique=True))
    base = dict(BASE[command])
    if any(option in DATA_SOURCES for option in drawn):
        base = {k: v for k, v in base.items() if k not in DATA_SOURCES}
    if command == "serve":
        base["--port"] = str(port)
    argv = [command]
    for option, value in base.items():
        argv += [option] if value is None else [option, value]
    for option in drawn:
        strategy = value_strategy(actions[option], tmp, port, run)
        if strategy is None:
            argv.append(option)
        elif draw(st.booleans()):
            argv.append(f"{option}={draw(strategy)}")
        else:
            argv += [option, draw(strategy)]
    return _without_unused_base(command, argv)


def _without_unused_base(command: str, argv: list[str]) -> list[str]:
    """fast-bootstrap: the BASE's MLP options only with ``--model mlp`` (with another model they are refused)."""
    if command != "fast-bootstrap" or "--model=mlp" in argv or any(
            a == "--model" and b == "mlp" for a, b in zip(argv, argv[1:])):
        return argv
    base_mlp = [(k, v) for k, v in BASE[command].items() if k in MLP_ONLY]
    out, i = [], 0
    while i < len(argv):
        if i + 1 < len(argv) and (argv[i], argv[i + 1]) in base_mlp:
            i += 2  # the BASE's value (a drawn one stays: its refusal is part of the test)
            continue
        out.append(argv[i])
        i += 1
    return out


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """A folder of odd CSV files: oversized (sparse), empty, binary, and two small valid ones."""
    tmp = tmp_path_factory.mktemp("fuzz")
    with open(tmp / "big.csv", "wb") as handle:
        handle.truncate(2_000_000_000)  # sparse: 2 GB that take no disk space
    (tmp / "empty.csv").write_text("")
    (tmp / "binary.csv").write_bytes(bytes(range(256)) * 8)
    (tmp / "toy.csv").write_text("x,y\n" + "".join(f"{i / 40:.4f},{(i % 7) / 7:.4f}\n" for i in range(40)))
    (tmp / "series.csv").write_text("t,value\n" + "".join(f"{i},{(i * 37 % 101) / 101:.4f}\n" for i in range(60)))
    return tmp


@pytest.fixture(scope="module")
def busy_port():
    """A port in use (listening on every address): ``serve`` must stop at its port check."""
    import socket

    with socket.socket() as sock:
        sock.bind(("0.0.0.0", 0))
        sock.listen()
        yield sock.getsockname()[1]


# ----------------------------------------------------------------------------- the properties


@functools.cache
def _parser() -> argparse.ArgumentParser:
    return cli.build_parser()


def parse_in_process(argv: list[str]) -> tuple[int, str]:
    """Parse ``argv`` as ``explorer`` would (no command runs): exit code 0 (accepted) or argparse's, and stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            _parser().parse_args(argv)
            code = 0
        except SystemExit as exit_info:
            code = exit_info.code
    return code, err.getvalue()


def _limit_memory() -> None:  # preexec_fn: in the child, before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def run_subprocess(argv: list[str]) -> subprocess.CompletedProcess:
    """Run ``python -m explorer.cli argv`` under the time and memory limits (its process group killed after)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.Popen([sys.executable, "-m", "explorer.cli", *argv], cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, preexec_fn=_limit_memory,
                            start_new_session=True)
    started = time.monotonic()
    try:
        out, err = proc.communicate(timeout=SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        pytest.fail(f"still running after {SECONDS:.0f} s: explorer {_shown(argv)}")
    finally:
        DURATION["run"] += time.monotonic() - started
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)  # no worker process outlives a run
    return subprocess.CompletedProcess(argv, proc.returncode, out.decode("utf-8", "replace"),
                                       err.decode("utf-8", "replace"))


def _shown(argv: list[str]) -> str:
    return " ".join(a if len(a) < 60 else a[:60] + f"…({len(a)})" for a in argv)


def assert_clean_exit(kind: str, argv: list[str], code: int, err: str) -> None:
    """Exit 0, or 2 (3) with exactly one non-empty line on stderr; no traceback either way."""
    COUNTS[kind, code] += 1
    assert "Traceback" not in err, f"explorer {_shown(argv)}\n{err}"
    assert code in (0, 2, 3), f"exit code {code} (negative: killed by a signal) for explorer {_shown(argv)}\n{err}"
    if code:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1, f"explorer {_shown(argv)}: {len(lines)} lines on stderr\n{err}"


COMMANDS = tuple(BASE)
RUN_COMMANDS = tuple(c for c in COMMANDS if c != "datasets")
_SETTINGS = dict(deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _parse_property(files, busy_port, examples: int):
    @settings(max_examples=examples, **_SETTINGS)
    @given(argv=command_lines(files, busy_port, COMMANDS, run=False))
    def check(argv):
        assert_clean_exit("parse", argv, *parse_in_process(argv))

    check()


def _run_property(files, busy_port, command: str, examples: int):
    @settings(max_examples=examples, **_SETTINGS)
    @given(argv=command_lines(files, busy_port, (command,), run=True))
    def check(argv):
        result = run_subprocess(argv)
        assert_clean_exit("run", argv, result.returncode, result.stderr)

    check()


def test_fuzz_parse_every_command(files, busy_port):
    _parse_property(files, busy_port, 1000)


@pytest.mark.parametrize("command", RUN_COMMANDS)
def test_fuzz_run_every_command(files, busy_port, command):
    _run_property(files, busy_port, command, 2 if command == "serve" else 3)


@pytest.mark.slow
def test_fuzz_parse_every_command_long(files, busy_port):
    _parse_property(files, busy_port, 5000)


@pytest.mark.slow
@pytest.mark.parametrize("command", RUN_COMMANDS)
def test_fuzz_run_every_command_long(files, busy_port, command):
    _run_property(files, busy_port, command, 10 if command == "serve" else 40)
