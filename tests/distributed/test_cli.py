"""``learning-curve`` beyond one machine: the rule that chooses the in-memory or the chunked path (printed), the
chunked run equal to the in-memory one, Parquet and CSV read by partitions, and every bad input one line, exit 2."""
import json
import subprocess
import sys
import time

import numpy as np
import pytest

from explorer import cli
from explorer.distributed.rows import teacher_rows

MODEL = ["--rank", "64", "--kernel", "se", "--lengthscale", "2", "--noise-var", "0.01", "--s-over-n", "1",
         "--methods", "adatap,approx", "--seed", "3"]


def one_line_error(capsys, argv) -> str:
    code = cli.main(argv)
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


@pytest.mark.parametrize("rows", ["0", "-5", "many"])
def test_chunk_rows_zero_negative_or_not_a_number_is_a_usage_error(rows, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["learning-curve", "--dataset", "teacher", "--rows", "1000", *MODEL, "--chunk-rows", rows])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--chunk-rows" in err[0] and "the rows of a chunk" in err[0]


def test_a_rank_above_the_chunk_rows_is_refused_before_anything_runs(capsys):
    started = time.perf_counter()
    line = one_line_error(capsys, ["learning-curve", "--dataset", "teacher", "--rows", "100000", *MODEL,
                                   "--chunk-rows", "50"])
    assert "--rank 64 is above --chunk-rows 50" in line
    assert time.perf_counter() - started < 2          # no cluster was started, no row made


def test_options_the_chunked_path_does_not_offer_are_named(capsys):
    line = one_line_error(capsys, ["learning-curve", "--dataset", "teacher", "--rows", "1000", *MODEL,
                                   "--chunk-rows", "500", "--holdout", "10"])
    assert line.startswith("explorer: error: --holdout is not offered on the chunked path")
    line = one_line_error(capsys, ["learning-curve", "--dataset", "teacher", "--rows", "1000", "--chunk-rows", "500"])
    assert "give --rank M" in line


def test_a_scheduler_address_that_does_not_parse_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["learning-curve", "--dataset", "teacher", "--rows", "1000", *MODEL, "--chunk-rows", "500",
                  "--scheduler", "tcp://no such host"])
    assert exit_info.value.code == 2
    assert "expected a Dask scheduler address" in capsys.readouterr().err


def test_a_scheduler_that_does_not_answer_is_one_line_within_ten_seconds():
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "explorer.cli", "learning-curve", "--dataset", "teacher", "--rows",
                          "1000", *MODEL, "--chunk-rows", "500", "--scheduler", "tcp://127.0.0.1:9"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]
    assert out.stderr.startswith("explorer: error: Cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert time.perf_counter() - started < 60          # the interpreter's start-up on a busy machine included


def test_the_scheduler_is_given_up_within_ten_seconds():
    import distributed  # noqa: F401 - imported before the clock starts (seconds on a busy machine)

    from explorer.runtime.engine import EngineError, connect

    started = time.perf_counter()
    with pytest.raises(EngineError, match="Cannot reach the Dask scheduler"):
        connect("tcp://127.0.0.1:9", timeout=10.0, dashboard=False)   # what the chunked path calls
    assert time.perf_counter() - started < 10 + 2     # connect's timeout, and a margin for a busy machine


def _frame(n=3000, seed=3):
    import pandas as pd

    X, y = teacher_rows(0, n, n, 4, seed, 0.01)
    return pd.DataFrame({**{f"x{j}": X[:, j] for j in range(4)}, "price": y})


def test_parquet_without_the_target_column_is_one_line(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    path = tmp_path / "data.parquet"
    _frame().to_parquet(path)
    line = one_line_error(capsys, ["learning-curve", "--parquet", str(path), "--target", "cost", *MODEL,
                                   "--workers", "1"])
    assert "has no column 'cost'" in line and "price" in line


def test_the_rule_keeps_a_small_generated_set_in_memory_and_the_chunks_give_its_numbers(capsys):
    argv = ["learning-curve", "--dataset", "teacher", "--rows", "6000", *MODEL, "--json"]
    assert cli.main(argv) == 0
    memory = json.loads(capsys.readouterr().out)
    assert memory["path"] == "in memory" and "≤ 2 GB" in memory["rule"]
    assert cli.main(argv + ["--chunk-rows", "1000", "--workers", "2"]) == 0
    chunked = json.loads(capsys.readouterr().out)
    assert chunked["path"] == "chunked" and chunked["chunks"] == 6 and chunked["n"] == 6000
    # mixed precision (the default) starts in single precision: the chunks add in another order (test_operator.py)
    a, b = memory["rows"][0], chunked["rows"][0]
    assert abs(a["theory"] - b["theory"]) < 1e-6 * a["theory"]
    assert abs(a["theory_approx"] - b["theory_approx"]) < 1e-10 * a["theory_approx"]
    assert cli.main(argv[:-1] + ["--chunk-rows", "1000", "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("path: chunked on Dask (--chunk-rows 1,000 forces the chunked path)")


@pytest.mark.slow
def test_parquet_and_csv_are_read_by_partitions_with_the_numbers_of_the_rows_in_memory(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    frame = _frame(4000)
    frame.iloc[:2500].to_parquet(tmp_path / "part-0.parquet")
    frame.iloc[2500:].to_parquet(tmp_path / "part-1.parquet")
    frame.to_csv(tmp_path / "data.csv", index=False)
    results = []
    for source in (["--parquet", str(tmp_path)], ["--csv", str(tmp_path / "data.csv"), "--chunk-rows", "4000"]):
        assert cli.main(["learning-curve", *source, "--target", "price", *MODEL, "--workers", "2", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["n"] == 4000 and out["d"] == 4
        results.append(out["rows"][0]["theory_approx"])
    assert np.isclose(results[0], results[1], rtol=1e-10, atol=0)


def _lowest_niceness() -> int:
    """The lowest nice value of any thread of the process this runs in (Linux keeps one per thread)."""
    import os

    return min(os.getpriority(os.PRIO_PROCESS, int(tid)) for tid in os.listdir("/proc/self/task"))


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="Linux thread priorities")
def test_the_local_cluster_of_the_command_line_runs_its_workers_below_the_client(capsys, monkeypatch):
    """On a loaded machine the workers' chunks must not starve the client and the scheduler: every thread of every
    worker of the command's local cluster runs at least LOCAL_WORKER_NICENESS lower; the command's own is untouched."""
    import os

    from explorer.runtime import engine

    connect, seen = engine.connect, {}

    def connect_and_look(*args, **kwargs):
        made = connect(*args, **kwargs)
        seen.update(made.client.run(_lowest_niceness))
        return made

    monkeypatch.setattr(engine, "connect", connect_and_look)
    assert cli.main(["learning-curve", "--dataset", "teacher", "--rows", "2000", *MODEL, "--chunk-rows", "1000",
                     "--workers", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["path"] == "chunked"
    assert len(seen) == 2 and all(nice >= engine.LOCAL_WORKER_NICENESS for nice in seen.values()), seen
    assert os.getpriority(os.PRIO_PROCESS, 0) < engine.LOCAL_WORKER_NICENESS
