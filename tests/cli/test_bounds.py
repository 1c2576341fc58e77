"""Bounded CLI inputs (issue 21, item 3): every count, size and tolerance has a documented lower and upper bound,
checked by its option's type before any work starts; a value outside is one line on stderr and exit code 2.

The hostile calls of the issue each have a test here (before the bounds: tracebacks, runs still going at 20 s,
gigabytes of memory); then one ``match=`` test per message of the option types.
"""
import argparse
import os
import re
import socket
import subprocess
import sys
import time

import pytest

from explorer import cli
from explorer.cli import common, fast_bootstrap, gp_bootstrap, model_selection

HUGE = str(10**12)
DIGITS_400 = "9" * 400
BOSTON = os.path.join(os.path.dirname(__file__), "..", "..", "datasets", "boston.csv")


def _usage_error(capsys, argv: list[str]) -> str:
    """The one stderr line of a command line that must be refused (exit code 2), in this process."""
    try:
        code = cli.main(argv)
    except SystemExit as exit_info:
        code = exit_info.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


# ----------------------------------------------------------------------------- the issue's hostile calls


@pytest.mark.parametrize("argv, message", [
    (["fast-bootstrap", "--lags", DIGITS_400], r"argument --lags: expected the number of lags, a whole number "
                                               r"from 1 to 50, got '9999.*… \(400 characters\)"),
    (["fast-bootstrap", "--max-epochs", HUGE], r"argument --max-epochs: .* from 1 to 10,000, got '1000000000000'"),
    (["fast-bootstrap", "--full-grid", "1,1e9,1e-9"], r"argument --full-grid: '1,1e9,1e-9' has 1e\+18 grid points; "
                                                     r"at most 1,000"),
    (["select", "--csv", ""], r"argument --csv: expected the path of a CSV file, got an empty string"),
    (["serve", "--scheduler", "tls://10.0.0.5:8786"], r"argument --scheduler: expected a Dask scheduler address "
                                                      r"tcp://HOST:PORT, got 'tls://10.0.0.5:8786'"),
    (["learning-curve", "--mc-samples", HUGE], r"argument --mc-samples: expected the number of Monte-Carlo samples, "
                                               r"a whole number from 1 to 100,000"),
    (["svm-curve", "--mc-samples", HUGE], r"argument --mc-samples: .* from 1 to 100,000"),
    (["select", "--dataset", "teacher", "--restarts", HUGE], r"argument --restarts: .* from 1 to 64"),
    (["fast-bootstrap", "--restarts", HUGE], r"argument --restarts: .* from 1 to 50"),
    (["select-experiment", "curves", "--repetitions", HUGE], r"argument --repetitions: .* from 1 to 256"),
    (["select", "--dataset", "teacher", "--partitions", HUGE], r"argument --partitions: .* from 1 to 256"),
    (["learning-curve", "--s-over-n", ",".join(["1"] * 3000)], r"argument --s-over-n: expected 1 to 16 "
                                                               r"comma-separated bootstrap sizes S/N, got 3,000"),
    (["learning-curve", "--workers", HUGE], r"argument --workers: expected the number of worker processes, a whole "
                                            r"number from 1 to \d+, .*start a Dask cluster and pass --scheduler"),
    (["learning-curve", "--tol", "1e-20"], r"argument --tol: expected a tolerance from 2.22e-16 to 1, got '1e-20'. "
                                           r"A tolerance below machine precision"),
])
def test_hostile_calls_of_the_issue_are_one_line_usage_errors(capsys, argv, message):
    assert re.search(message, _usage_error(capsys, argv))


def test_a_csv_over_the_size_limit_is_refused_before_it_is_read(capsys, tmp_path):
    big = tmp_path / "sparse.csv"
    with open(big, "wb") as handle:  # 2 GB, sparse: no disk space used, and never read
        handle.truncate(2_000_000_000)
    err = _usage_error(capsys, ["learning-curve", "--csv", str(big), "--target", "y"])
    assert re.search(r"argument --csv: '.*sparse.csv' has 2,000,000,000 bytes; at most 50,000,000 are read", err)


@pytest.mark.parametrize("path, message", [
    ("/", r"is not a regular file \(a directory or a device\)"),
    ("/dev/zero", r"is not a regular file"),
    ("/no/such/file.csv", r"cannot read '/no/such/file.csv': No such file or directory"),
])
def test_path_options_take_only_regular_files(capsys, path, message):
    for option in (["select", "--test-csv", path, "--dataset", "teacher"],
                   ["select-experiment", "hyperparameters", "--temperature-csv", path],
                   ["fast-bootstrap", "--series-csv", path]):
        assert re.search(message, _usage_error(capsys, option))


def test_a_fast_bootstrap_estimated_over_an_hour_is_refused_before_it_starts(capsys):
    err = _usage_error(capsys, ["fast-bootstrap", "--model", "mlp", "--full-replications", "10000"])
    assert re.search(r"explorer: error: this run would take about \d+\.\d hours on one core \(N = 200\); at most 1 "
                     r"hour is started", err)


@pytest.mark.parametrize("argv, message", [
    (["select", "--dataset", "teacher", "--criteria", "loo,loo"], r"--criteria names 'loo' more than once"),
    (["select", "--dataset", "teacher", "--rank", "se,se"], r"--rank names 'se' more than once"),
])
def test_repeated_names_are_refused(capsys, argv, message):
    assert re.search(message, _usage_error(capsys, argv))


# ----------------------------------------------------------------------------- serve: address and port first


def _serve(*argv: str, env: dict | None = None) -> tuple[subprocess.CompletedProcess, list[int]]:
    """Run ``explorer serve`` (in its own process group) until it exits; the pids left in its group after."""
    psutil = pytest.importorskip("psutil")
    proc = subprocess.Popen([sys.executable, "-m", "explorer.cli", "serve", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "OPENBLAS_NUM_THREADS": "1", **(env or {})})
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
    time.sleep(0.5)
    left = [p.pid for p in psutil.process_iter() if _group(p.pid) == proc.pid]
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), left


def _group(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def test_serve_refuses_a_port_in_use_before_starting_workers():
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        result, left = _serve("--port", str(port), "--workers", "2")
    assert result.returncode == 2 and left == []
    assert re.fullmatch(rf"explorer: error: cannot listen on address '127.0.0.1', port {port}: Address already in "
                        r"use\. Give an address of this machine .* and a free port \(e\.g\. --port 5007\)\.\n",
                        result.stderr)
    assert time.monotonic() - started < 60  # before: the error came after the cluster, 32 s


def test_serve_refuses_an_address_it_cannot_bind():
    result, left = _serve("--address", "10.255.255.1", "--port", "5999")
    assert result.returncode == 2 and left == []
    assert re.fullmatch(r"explorer: error: cannot listen on address '10.255.255.1', port 5999: .*\n", result.stderr)


def test_serve_checks_the_scheduler_of_the_environment(capsys, monkeypatch):
    monkeypatch.setenv("EXPLORER_SCHEDULER", "tls://10.0.0.5:8786")
    assert cli.main(["serve"]) == 2
    assert re.fullmatch(r"explorer: error: \$EXPLORER_SCHEDULER: expected a Dask scheduler address tcp://HOST:PORT, "
                        r"got 'tls://10.0.0.5:8786'\. .*\n", capsys.readouterr().err)


# ----------------------------------------------------------------------------- one test per message


def test_int_range_message():
    with pytest.raises(argparse.ArgumentTypeError, match=r"^expected the number of Monte-Carlo samples, a whole "
                                                         r"number from 1 to 100,000, got '1.5'\. Larger runs"):
        common.MC_SAMPLES("1.5")
    assert common.MC_SAMPLES("1e3") == common.MC_SAMPLES("1_000") == 1000
    assert common.SEED("0") == 0 and common.SEED(str(2**32 - 1)) == 2**32 - 1
    with pytest.raises(argparse.ArgumentTypeError, match=r"got '9{40}'… \(5,000 characters\)"):
        common.SEED("9" * 5000)  # longer than Python reads as an int: still the same message


def test_float_range_message():
    with pytest.raises(argparse.ArgumentTypeError, match=r"^expected a bin width from 0.001 to 1e\+03, got 'nan'"):
        gp_bootstrap.BIN_WIDTH("nan")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^expected a tolerance from 2.22e-16 to 1, got '1e999'"):
        common.TOLERANCE("1e999")


def test_number_list_messages():
    with pytest.raises(argparse.ArgumentTypeError, match=r"^expected 1 to 16 comma-separated bootstrap sizes S/N, "
                                                         r"got 0 \(','\)\. Give 1 to 16 values"):
        common.S_OVER_N(",")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^expected bootstrap sizes S/N from 0.001 to 100, got "
                                                         r"'1e3' in '1,1e3'"):
        common.S_OVER_N("1,1e3")


def test_grid_messages():
    with pytest.raises(argparse.ArgumentTypeError, match=r"^expected START,STOP,STEP \(three finite numbers\), "
                                                         r"got '1,inf,1'"):
        fast_bootstrap.GRID("1,inf,1")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^a grid needs start ≤ stop and step > 0, got '3,1,1'"):
        fast_bootstrap.GRID("3,1,1")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^'1,1001,1' has 1001 grid points; at most 1,000"):
        fast_bootstrap.GRID("1,1001,1")
    assert fast_bootstrap.GRID("5,50,0.1") == (5.0, 50.0, 0.1)  # Table 1's LS-SVM grid, 451 points


def test_directory_and_scheduler_messages():
    with pytest.raises(argparse.ArgumentTypeError, match=r"^'' is not a directory\. Give an existing folder\."):
        common.directory("")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^expected a Dask scheduler address tcp://HOST:PORT, "
                                                         r"got 'tcp://host:99999'"):
        common.scheduler_address("tcp://host:99999")
    assert common.scheduler_address("tcp://10.0.0.5:8786") == "tcp://10.0.0.5:8786"
    assert common.scheduler_address("[::1]:8786") == "[::1]:8786"


def test_usage_errors_are_one_line_even_for_text_with_line_breaks(capsys):
    err = _usage_error(capsys, ["learning-curve", "a\nb"])
    assert err == "explorer: error: unrecognized arguments: a b (see: explorer --help)\n"


# ----------------------------------------------------------------------------- the bounds are documented


def _bounded_options():
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    for name, sub in commands.items():
        for action in sub._actions:
            if isinstance(action.type, (common.IntRange, common.FloatRange, common.NumberList, common.Grid)):
                yield name, action


def test_every_bounded_option_states_its_bounds_in_its_help():
    options = list(_bounded_options())
    assert len(options) > 60
    for name, action in options:
        assert str(action.type) in action.help, (name, action.option_strings)


def test_the_paper_settings_and_readme_examples_are_within_the_bounds():
    parser = cli.build_parser()
    for argv in (["learning-curve", "--s-over-n", "0.25,0.5,1,1.5,2,3,4", "--mc-samples", "2000"],
                 ["distribution", "--mc-samples", "20000"], ["holdout", "--holdout", "50", "--mc-samples", "5000"],
                 ["select-experiment", "curves", "--repetitions", "256", "--partitions", "32", "--restarts", "16"],
                 ["fast-bootstrap", "--full-grid", "5,50,0.1", "--full-replications", "100"],
                 ["svm-curve", "--mc-samples", "20000"], ["serve", "--port", "5006"]):
        parser.parse_args(argv)
    assert model_selection.RESTARTS.high >= 16 and fast_bootstrap.LAGS.high >= 6


def test_the_readme_states_the_bound_of_every_bounded_option():
    readme = (os.path.join(os.path.dirname(__file__), "..", "..", "README.md"))
    with open(readme, encoding="utf-8") as handle:
        text = handle.read()
    section = text[text.index("## Command line"):text.index("## Library")]
    named = set(re.findall(r"--[a-z0-9-]+", section))
    missing = {action.option_strings[-1] for _, action in _bounded_options()} - named
    assert not missing


def test_data_over_the_row_limit_is_refused_after_reading(capsys, tmp_path):
    path = tmp_path / "tall.csv"
    path.write_text("x,y\n" + "".join(f"{i},{i % 3}\n" for i in range(common.MAX_DENSE_ROWS + 1)))
    for command in (["learning-curve", "--target", "y"], ["svm-curve", "--target", "y"], ["select", "--target", "y"]):
        err = _usage_error(capsys, [*command, "--csv", str(path)])
        assert re.search(r"explorer: error: tall has 5,001 rows; the methods here build an N×N kernel matrix and "
                         r"take at most 5,000\. (Use a random subset of the rows|Add --rank M)", err)


def test_a_gp_run_estimated_over_an_hour_is_refused_before_it_starts(capsys, tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("x,y\n" + "".join(f"{i},{i % 3}\n" for i in range(2000)))
    err = _usage_error(capsys, ["distribution", "--csv", str(path), "--target", "y", "--mc-samples", "100000",
                                "--s-over-n", "1"])
    assert re.search(r"explorer: error: 100,000 Monte-Carlo samples on N = 2,000 rows would take about 3\.4 hours; "
                     r"at most 1 hour is started\. Use fewer --mc-samples", err)
