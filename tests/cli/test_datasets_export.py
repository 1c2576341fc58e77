"""``explorer datasets --export NAME PATH``: every data set written as the CSV that ``--csv`` reads back to the same
numbers, a generated set of N rows, and one-line errors."""
import json

import numpy as np
import pytest

from explorer import cli, datasets


@pytest.mark.parametrize("name", datasets.available())
def test_an_exported_set_reads_back_to_the_same_numbers(name, tmp_path, capsys):
    path = tmp_path / f"{name}.csv"
    assert cli.main(["datasets", "--export", name, str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    original = (datasets.load(name, rng=datasets.GENERATED_DATA_SEED) if name in datasets.GENERATED
                else datasets.load(name))
    assert out["rows"] == original.n and out["columns"][-1] == out["target"] == original.target_name
    back = datasets.load_csv(path, original.target_name)
    np.testing.assert_array_equal(back.inputs, original.inputs)
    np.testing.assert_array_equal(back.targets, original.targets)
    assert back.feature_names == original.feature_names and back.task == original.task


def test_the_exported_csv_gives_the_dataset_s_numbers_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "mydata.csv"
    assert cli.main(["datasets", "--export", "boston", str(path)]) == 0
    assert f"--csv {path} --target medv" in capsys.readouterr().out
    rows = []
    for source in (["--dataset", "boston"], ["--csv", str(path), "--target", "medv"]):
        assert cli.main(["learning-curve", *source, "--preset", "paper", "--s-over-n", "1", "--mc-samples", "5",
                         "--methods", "adatap,mc", "--json"]) == 0
        rows.append(json.loads(capsys.readouterr().out)["rows"][0])
    assert rows[0]["theory"] == rows[1]["theory"] and rows[0]["mc_mean"] == rows[1]["mc_mean"]


def test_a_generated_set_of_n_rows_with_its_seed(tmp_path, capsys):
    path = tmp_path / "big.csv"
    assert cli.main(["datasets", "--export", "toy", str(path), "--rows", "20000", "--seed", "3"]) == 0
    assert "toy: 20,000 rows, 1 input and the target 'y'" in capsys.readouterr().out
    back = datasets.load_csv(path, "y")
    np.testing.assert_array_equal(back.inputs, datasets.toy_function(20000, rng=3).inputs)
    assert path.read_text(encoding="utf-8").splitlines()[0] == "x,y"


@pytest.mark.parametrize("argv, message", [
    (["--export", "nosuch", "x.csv"], "unknown data set 'nosuch'"),
    (["--export", "boston", "x.csv", "--rows", "100"], "boston is a shipped table"),
    (["--export", "teacher", "x.csv", "--rows", "6000"], "at most 5,000 rows"),
    (["--export", "toy", "no/such/folder/x.csv"], "cannot write no/such/folder/x.csv"),
    (["--rows", "100"], "add --export"),
])
def test_bad_exports_are_one_line_and_exit_2(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["datasets", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_rows_out_of_bounds_are_refused_when_parsed(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["datasets", "--export", "toy", "x.csv", "--rows", "5"])
    assert info.value.code == 2 and "from 10 to 1,000,000" in capsys.readouterr().err
