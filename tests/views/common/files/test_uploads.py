"""Uploads and the server's data folder: the limits, the messages, and the file input's checks (without a browser;
``tests/browser/test_uploads.py`` drives the input in Chromium)."""
from __future__ import annotations

import base64
import logging

import pytest

pytest.importorskip("panel")

from explorer import datasets
from explorer.views.common.files.data_folder import data_file_names, read_data_file
from explorer.views.common.files.file_input import CSVFileInput, too_large_message
from explorer.views.common.files.uploads import (
    MAX_UPLOAD_BYTES,
    MAX_UPLOAD_ROWS,
    MAX_UPLOAD_VALUES,
    csv_columns,
    read_upload,
)


def test_an_upload_is_read_within_its_limits():
    upload = read_upload("a.csv", b"\xef\xbb\xbfx,y\n1,2\n")
    assert upload.text == "x,y\n1,2\n" and upload.filename == "a.csv" and len(upload.sha256) == 64
    assert csv_columns(upload, "inputs and a target") == ["x", "y"]


@pytest.mark.parametrize("content, match", [
    (b"", r"^e.csv is empty\. Upload a CSV with a header row"),
    (b" \n\n", r"^e.csv is empty\."),
    (b"x,y\n" + b"1,2\n" * (MAX_UPLOAD_ROWS + 1), rf"^e.csv has {MAX_UPLOAD_ROWS + 1:,} data rows; the app reads at most "
                                                  rf"{MAX_UPLOAD_ROWS:,}\. Upload a random sample of its rows\."),
    (b"x" * (MAX_UPLOAD_BYTES + 1), r"^e.csv has 5\.0 MB; the app reads files of at most 5 MB\."),
    (b"a,b,c,d,e,f,g,h,i,j,k,l,m\n" + b"1,2,3,4,5,6,7,8,9,0,1,2,3\n" * 20_000,
     r"^e.csv has 20,000 rows of 13 columns; the app reads at most 250,000 values\. Upload fewer rows"),
    (b"x,y\n1,\xff\n", r"^e.csv is not UTF-8 text \(invalid start byte at byte 6\)"),
])
def test_an_upload_outside_the_limits_says_why(content, match):
    with pytest.raises(ValueError, match=match):
        read_upload("e.csv", content)


def test_exactly_the_row_limit_is_read():
    assert read_upload("r.csv", b"x,y\n" + b"1,2\n" * MAX_UPLOAD_ROWS).filename == "r.csv"
    assert read_upload("v.csv", b"x" + b",x" * 49 + b"\n" + (b"1" + b",1" * 49 + b"\n") * (MAX_UPLOAD_VALUES // 50))


def test_the_data_folder_offers_its_csv_files_only(tmp_path):
    (tmp_path / "b.csv").write_text("x,y\n1,2\n")
    (tmp_path / "A.CSV").write_text("x,y\n1,2\n")
    (tmp_path / ".hidden.csv").write_text("x,y\n")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "sub.csv").mkdir()
    assert data_file_names(tmp_path) == ["A.CSV", "b.csv"]
    assert data_file_names(None) == [] and data_file_names(tmp_path / "gone") == []
    assert read_data_file(tmp_path, "b.csv").text == "x,y\n1,2\n"
    for name in ("../b.csv", str(tmp_path / "b.csv"), "notes.txt", ".hidden.csv", "sub.csv", "/etc/passwd"):
        with pytest.raises(datasets.DatasetError, match=r"there is no file .* in the server's data folder") as err:
            read_data_file(tmp_path, name)
        assert str(tmp_path) not in str(err.value)


def test_a_data_folder_file_over_the_limit_is_not_read(tmp_path):
    (tmp_path / "big.csv").write_bytes(b"x,y\n" + b"1,2\n" * 40)
    with pytest.raises(ValueError, match=r"^big.csv is larger than the 0\.0001 MB the app reads") as err:
        read_data_file(tmp_path, "big.csv", max_bytes=100)
    assert "164" not in str(err.value)  # not the file's size


class _Receiver:
    def __init__(self):
        self.files, self.refused = [], []

    def on_file(self, filename, content):
        self.files.append((filename, content))

    def on_refused(self, message):
        self.refused.append(message)


def test_the_file_input_takes_a_file_within_the_limit_and_refuses_others():
    got = _Receiver()
    widget = CSVFileInput(got.on_file, got.on_refused, max_bytes=100)
    widget._handle_msg({"filename": "ok.csv", "size": 8, "content": base64.b64encode(b"x,y\n1,2\n").decode()})
    assert got.files == [("ok.csv", b"x,y\n1,2\n")] and got.refused == []
    widget._handle_msg({"filename": "big.csv", "size": 6_000_000})  # refused in the browser: no content sent
    widget._handle_msg({"filename": "liar.csv", "size": 8, "content": "A" * 200})  # more than it said
    widget._handle_msg({"filename": "bad.csv", "size": 4, "content": "!!!!"})
    assert got.refused == [too_large_message("big.csv", 6_000_000, 100), too_large_message("liar.csv", 8, 100),
                           "bad.csv did not arrive whole. Upload it again."]
    assert got.refused[0] == "big.csv has 6.0 MB; the app reads files of at most 0.0001 MB. Upload a smaller extract of it."
    assert len(got.files) == 1


def test_a_failing_upload_logs_its_name_and_size_not_its_content(caplog):
    def explode(filename, content):
        raise MemoryError("Unable to allocate 31.9 GiB")

    got = _Receiver()
    widget = CSVFileInput(explode, got.on_refused)
    secret = b"x,y\n" + b"SECRET-CELL,1\n" * 1000
    with caplog.at_level(logging.DEBUG):
        widget._handle_msg({"filename": "s.csv", "size": len(secret), "content": base64.b64encode(secret).decode()})
    assert got.refused == ["s.csv could not be used. Check that it is a CSV table and upload it again."]
    assert "SECRET-CELL" not in caplog.text and "s.csv" in caplog.text and str(len(secret)) in caplog.text


def test_every_tab_names_the_file_and_its_hash_in_its_settings(tmp_path):
    """The settings JSON of an upload (or a data folder's file) says which file, by name and SHA-256."""
    import hashlib
    import json

    from explorer.views import svm_bootstrap as svm
    from explorer.views.fast_bootstrap import exports as fb_exports
    from explorer.views.fast_bootstrap.state import SERIES, FastBootstrapState
    from explorer.views.model_selection import figures as sel_figures
    from explorer.views.model_selection.experiments_state import SelectionExperimentState, experiment_json
    from explorer.views.model_selection.state import SelectionState

    table = "a,y\n" + "\n".join(f"{i / 10},{(i % 7) / 3}" for i in range(40)) + "\n"
    digest = hashlib.sha256(table.encode()).hexdigest()
    selection = SelectionState(auto_run=False)
    selection.upload_csv("mine.csv", table.encode())
    assert sel_figures.settings(selection)["file"] == "mine.csv" and sel_figures.settings(selection)["sha256"] == digest
    labels = "a,label\n" + "\n".join(f"{i},{'A' if i % 2 else 'B'}" for i in range(30)) + "\n"
    classes = svm.SVMState()
    classes.upload_csv("two.csv", labels.encode())
    assert svm.settings(classes)["file"] == "two.csv"
    assert svm.settings(classes)["sha256"] == hashlib.sha256(labels.encode()).hexdigest()
    (tmp_path / "series.csv").write_text("t,value\n" + "".join(f"{t},{t % 5}\n" for t in range(50)))
    series = FastBootstrapState(dataset=SERIES, data_dir=str(tmp_path), series_csv="series.csv")
    assert fb_exports.settings(series)["file"] == "series.csv"
    assert fb_exports.settings(series)["sha256"] == hashlib.sha256((tmp_path / "series.csv").read_bytes()).hexdigest()
    temperature = SelectionExperimentState(experiment="hyperparameters")
    temperature.upload_temperature("days.csv", b"day_of_year,mean_anomaly_by_file_doy\n1,0.5\n2,0.25\n")
    assert json.loads(experiment_json(temperature))["settings"]["file"] == "days.csv"
    for state in (selection, classes, series, temperature):
        state.close()
