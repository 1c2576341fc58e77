"""Where the CLI's Monte-Carlo runs: ``--workers N`` / ``--scheduler ADDRESS`` on every Monte-Carlo command,
the same JSON in-process and on Dask workers, and one clear line for an unreachable scheduler."""
import argparse
import json
import subprocess
import sys

import pytest

from explorer import cli
from explorer.cli.common import engine_executor

pytestmark = pytest.mark.usefixtures("one_blas_thread")

#: The commands that run Monte-Carlo (or repeated experiments) with an executor.
MONTE_CARLO_COMMANDS = ("learning-curve", "distribution", "holdout", "svm-curve", "fast-bootstrap", "select-experiment")
UNREACHABLE = "tcp://127.0.0.1:9"  # the discard port: nothing listens there


@pytest.mark.parametrize("command", MONTE_CARLO_COMMANDS + ("serve",))
def test_monte_carlo_commands_take_workers_and_scheduler(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main([command, "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "--workers N" in text and "--scheduler ADDRESS" in text


@pytest.mark.parametrize("options", [["--workers", "0"], ["--workers", "two"],
                                     ["--workers", "2", "--scheduler", UNREACHABLE]])
def test_bad_engine_options_are_usage_errors(options, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["learning-curve", *options])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "expected the number of worker processes, a whole number from 1" in err or "not allowed with argument" in err
    assert len(err.strip().splitlines()) == 1


def test_without_engine_options_the_monte_carlo_runs_in_this_process():
    with engine_executor(argparse.Namespace(workers=None, scheduler=None)) as executor:
        assert executor is None


def test_the_json_is_the_same_in_process_and_on_two_workers(capsys):
    argv = ["learning-curve", "--dataset", "boston", "--s-over-n", "0.5,1", "--mc-samples", "40", "--seed", "3",
            "--json"]
    outputs = []
    for extra in ([], ["--workers", "2"]):
        assert cli.main(argv + extra) == 0
        out = json.loads(capsys.readouterr().out)
        assert out.pop("timing")["mc_sample_s"] > 0  # wall-clock figures: the only fields that may differ
        outputs.append(out)
    assert outputs[0] == outputs[1]
    assert [row["mc_samples"] for row in outputs[1]["rows"]] == [40, 40]


def test_svm_curve_gives_the_same_numbers_on_one_worker_process(capsys):
    argv = ["svm-curve", "--s-over-n", "0.5,1", "--mc-samples", "20", "--no-exact-loo", "--json"]
    outputs = []
    for extra in ([], ["--workers", "1"]):
        assert cli.main(argv + extra) == 0
        out = json.loads(capsys.readouterr().out)
        outputs.append([(row["s_over_n"], row["mc_mean"], row["mc_se"]) for row in out["rows"]])
    assert outputs[0] == outputs[1] and len(outputs[0]) == 2


@pytest.mark.parametrize("command", ["learning-curve", "serve"])
def test_an_unreachable_scheduler_is_one_line_and_exit_code_2(command):
    out = subprocess.run([sys.executable, "-m", "explorer.cli", command, "--scheduler", UNREACHABLE],
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]  # one line, no traceback
    assert out.stderr.startswith(f"explorer: error: Cannot reach the Dask scheduler at {UNREACHABLE}")
    assert out.stdout == ""


def test_fast_bootstrap_and_select_experiment_give_the_same_json_on_one_worker_process(capsys):
    commands = [["fast-bootstrap", "--model", "ls-svm", "--dataset", "toy", "--full-replications", "8",
                 "--fast-replications", "8", "--no-replica", "--json"],
                ["select-experiment", "beta", "--repetitions", "2", "--seed", "1"]]
    for argv in commands:
        outputs = []
        for extra in ([], ["--workers", "1"]):
            assert cli.main(argv + extra) == 0
            out = json.loads(capsys.readouterr().out)
            out.pop("timing", None), out.pop("seconds", None)   # wall-clock figures: the only fields that may differ
            outputs.append(out)
        assert outputs[0] == outputs[1], argv[0]
