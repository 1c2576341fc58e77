"""``distribution`` and ``holdout`` beyond one machine: the options of ``learning-curve`` (--chunk-rows, --parquet,
--scheduler, --dataset teacher --rows N), the rule printed, the JSON equal to the in-memory run's (the theory and the
infinitesimal jackknife; the Monte-Carlo within its errors: other draws, seeded per sample and block of rows), and
bad input one line with exit code 2."""
import json

import numpy as np
import pytest

from explorer import cli
from explorer.distributed.rows import teacher_rows

DATA = ["--dataset", "teacher", "--rows", "12000"]
MODEL = ["--rank", "48", "--kernel", "se", "--lengthscale", "2", "--noise-var", "0.01", "--s-over-n", "1", "--seed",
         "3", "--tol", "1e-6"]
CHUNKED = ["--chunk-rows", "2500", "--workers", "2"]       # 4 chunks of 2,500 and an uneven last one of 2,000


def run(capsys, argv) -> dict:
    assert cli.main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def one_line_error(capsys, argv) -> str:
    code = cli.main(argv)
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def relative(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def test_holdout_on_the_chunks_gives_the_in_memory_json(capsys):
    argv = ["holdout", *DATA, *MODEL, "--holdout", "6", "--mc-samples", "400"]
    memory = run(capsys, argv)
    assert memory["path"] == "in memory" and "≤ 2 GB" in memory["rule"]
    chunked = run(capsys, argv + CHUNKED)
    assert chunked["path"] == "chunked" and chunked["rule"] == "--chunk-rows 2,500 forces the chunked path"
    assert chunked["n"] == 11_994 and chunked["chunks"] == 5 and "the first 6 rows held out" in chunked["data"]
    for name in ("ij_mean", "ij_var", "ij_mean_second_order"):    # no iteration: double precision throughout
        assert relative(chunked[name], memory[name]) < 1e-10, name
    for name in ("theory_mean", "theory_var"):                    # ADATAP to --tol from a single-precision start
        assert relative(chunked[name], memory[name]) < 1e-5, name
    mc, mean, se = (np.array(chunked[k]) for k in ("mc_mean", "theory_mean", "mc_mean_se"))
    assert np.all(np.abs(mc - np.array(memory["mc_mean"])) < 5 * (se + np.array(memory["mc_mean_se"])))
    assert np.all(np.abs(mc - mean) < 5 * se + 0.05 * np.abs(mean))
    assert chunked["mc_samples"] == memory["mc_samples"] == 400
    assert cli.main(argv + CHUNKED) == 0
    text = capsys.readouterr().out
    assert text.startswith("path: chunked on Dask (--chunk-rows 2,500 forces the chunked path); local Dask cluster")
    assert "mean IJ" in text and len(text.strip().splitlines()) == 3 + 1 + 6


def test_learning_curve_runs_the_jackknife_and_the_loo_limit_on_the_chunks(capsys):
    argv = ["learning-curve", "--dataset", "teacher", "--rows", "6000", *MODEL[:-6], "--s-over-n", "0.5,2",
            "--methods", "adatap,ij,loo", "--seed", "3"]
    memory, chunked = run(capsys, argv), run(capsys, argv + ["--chunk-rows", "2500", "--workers", "2"])
    assert chunked["path"] == "chunked" and chunked["chunks"] == 3
    for a, b in zip(chunked["rows"], memory["rows"]):   # eq. (13) at the same 2,000 rows drawn: to round-off
        for name in ("ij", "ij_second_order", "loo_limit"):
            assert abs(a[name] - b[name]) < 1e-10 * b[name], name
        assert "theory_approx" not in a and b["theory_approx"] is None


def test_distribution_on_the_chunks_maps_the_rows_of_the_in_memory_run(capsys):
    argv = ["distribution", *DATA, *MODEL, "--mc-samples", "200"]
    memory = run(capsys, argv)
    chunked = run(capsys, argv + CHUNKED)
    assert chunked["path"] == "chunked" and memory["path"] == "in memory"
    assert chunked["inputs"] == memory["inputs"] and len(chunked["inputs"]) == 2000   # the same 2,000 rows drawn
    floor, wanted = chunked["noise_floor"], memory["noise_floor"]  # the theory's own draws: the same
    assert floor["n_samples"] == 200 and abs(floor["max"] - wanted["max"]) < 1e-6
    assert abs(floor["frac_le_0_1"] - wanted["frac_le_0_1"]) <= 1 / 2000
    a, b = chunked["summary"], memory["summary"]               # other Monte-Carlo draws: the same distribution
    assert abs(a["frac_le_0_1"] - b["frac_le_0_1"]) < 0.05 and a["bin_width"] == b["bin_width"]
    assert a["frac_le_0_1"] > 0.5 * floor["frac_le_0_1"]


@pytest.mark.parametrize("command", ["distribution", "holdout"])
def test_the_memory_rule_chooses_chunks_above_two_gigabytes_and_says_why(command):
    from explorer.cli import build_parser, distributed_options

    def chosen(rows):
        args = build_parser().parse_args([command, "--dataset", "teacher", "--rows", rows, *MODEL])
        return distributed_options.plan(args)

    small, large = chosen("1000000"), chosen("2000000")          # 8·3.1·N·48 bytes: 1.19 GB and 2.38 GB
    assert not small.chunked and small.reason == "the in-memory low-rank path needs 8·3.1·N·M = 1.19 GB ≤ 2 GB"
    assert large.chunked and large.reason == "the in-memory low-rank path needs 8·3.1·N·M = 2.38 GB > 2 GB"


def test_parquet_distribution_is_read_by_partitions(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    X, y = teacher_rows(0, 3000, 3000, 4, 3, 0.01)
    pd.DataFrame({**{f"x{j}": X[:, j] for j in range(4)}, "price": y}).to_parquet(tmp_path / "data.parquet")
    out = run(capsys, ["distribution", "--parquet", str(tmp_path / "data.parquet"), "--target", "price", *MODEL,
                       "--mc-samples", "50", "--workers", "1"])
    assert out["path"] == "chunked" and out["n"] == 3000 and out["inputs"] is None   # all rows up to 5,000
    assert len(out["l1"]) == 3000 and "read by partitions" in out["rule"] and "2 partitions" not in out["data"]


@pytest.mark.parametrize("command", ["distribution", "holdout"])
def test_bad_input_is_one_line_and_exit_two(command, capsys):
    for rows in ("0", "-3"):
        with pytest.raises(SystemExit) as exit_info:
            cli.main([command, *DATA, *MODEL, "--chunk-rows", rows])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--chunk-rows" in err[0]
    line = one_line_error(capsys, [command, *DATA, *MODEL, "--chunk-rows", "20"])
    assert "--rank 48 is above --chunk-rows 20" in line
    line = one_line_error(capsys, [command, *DATA, *MODEL, "--chunk-rows", "500", "--features", "rff"])
    assert "Nyström features" in line
    line = one_line_error(capsys, [command, "--parquet", "x.parquet", *MODEL])
    assert "--parquet needs --target" in line
    with pytest.raises(SystemExit) as exit_info:
        cli.main([command, *DATA, *MODEL, "--chunk-rows", "500", "--scheduler", "tcp://no such host"])
    assert exit_info.value.code == 2 and "expected a Dask scheduler address" in capsys.readouterr().err
    line = one_line_error(capsys, [command, *DATA, *MODEL, "--chunk-rows", "500", "--s-over-n", "1,2"])
    assert f"`{command}` takes one --s-over-n value" in line


def test_holdout_needs_held_out_rows_and_the_estimate_refuses_hours(capsys):
    line = one_line_error(capsys, ["holdout", *DATA, *MODEL, "--chunk-rows", "500", "--holdout", "0"])
    assert "give --holdout K with K ≥ 1" in line
    line = one_line_error(capsys, ["distribution", "--dataset", "teacher", "--rows", "100000000", "--rank", "256",
                                   "--kernel", "se", "--chunk-rows", "1000000", "--mc-samples", "100000",
                                   "--workers", "1"])
    assert "would take about" in line and "hours" in line


def test_a_scheduler_that_does_not_answer_is_one_line(capsys):
    line = one_line_error(capsys, ["holdout", *DATA, *MODEL, "--chunk-rows", "500", "--scheduler",
                                   "tcp://127.0.0.1:9"])
    assert line.startswith("explorer: error: Cannot reach the Dask scheduler at tcp://127.0.0.1:9")
