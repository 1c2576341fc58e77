"""The data source every state holds: the session's upload and the server's data folder, read, keyed and described
the same way by every page."""

import hashlib

import pytest

pytest.importorskip("panel")

from explorer import datasets  # noqa: E402
from explorer.views.common.files.uploads import UPLOAD  # noqa: E402
from explorer.views.common.state.data_source import DataSource  # noqa: E402

CSV = "x1,x2,y\n" + "".join(f"{i},{i % 3},{2 * i + 1}\n" for i in range(12))


def test_an_upload_is_kept_keyed_by_its_hash_and_read_as_a_table():
    source = DataSource()
    with pytest.raises(datasets.DatasetError, match=r"^no CSV has been uploaded in this session; upload the file "):
        source.uploaded()
    assert source.settings() == {}
    upload = source.accept("data.csv", CSV.encode())
    sha = hashlib.sha256(CSV.encode()).hexdigest()
    assert upload.sha256 == sha and source.uploaded() is upload
    assert source.key("y") == ("upload", sha, "y") != source.key("x2")
    assert source.columns("inputs and a target") == ["x1", "x2", "y"]
    table = source.table("y")
    assert table.name == "data" and table.n == 12 and table.d == 2 and list(table.targets[:3]) == [1.0, 3.0, 5.0]
    assert source.settings() == {"file": "data.csv", "sha256": sha}


def test_a_refused_upload_keeps_the_earlier_one():
    source = DataSource()
    first = source.accept("a.csv", CSV)
    with pytest.raises(ValueError, match=r"empty"):
        source.accept("b.csv", b"")
    assert source.upload is first


def test_the_data_folder_offers_its_csv_files_by_name_only(tmp_path):
    (tmp_path / "series.csv").write_text(CSV)
    (tmp_path / "notes.txt").write_text("not offered")
    source = DataSource(data_dir=str(tmp_path))
    assert source.files() == ["series.csv"]
    assert source.read("series.csv").text == CSV
    with pytest.raises(datasets.DatasetError, match=r"there is no file"):
        source.read("../series.csv")
    assert DataSource().files() == []


@pytest.mark.parametrize("make", ["gp", "svm", "selection", "fastboot"])
def test_every_state_holds_its_own_source(make, tmp_path):
    from explorer.views.common.layout.page import PageContext
    from explorer.views.pages import PAGES

    page = {p.key: p for p in PAGES}[make]
    one, two = page.view(PageContext(data_dir=str(tmp_path))), page.view(PageContext(data_dir=str(tmp_path)))
    try:
        for a, b in zip(one.states.values(), two.states.values()):
            assert isinstance(a.source, DataSource) and a.source is not b.source
    finally:
        for view in (one, two):
            for state in view.states.values():
                state.close()


def test_an_upload_reaches_the_state_through_its_source():
    from explorer.views.svm_bootstrap import SVMState

    state = SVMState()
    try:
        labels = "x1,x2,label\n" + "".join(f"{i},{i * i % 7},{'a' if i % 2 else 'b'}\n" for i in range(20))
        state.upload_csv("two.csv", labels)
        assert state.dataset == UPLOAD and state.target == "label"
        assert state.uploaded_file is state.source.upload and state.source.upload.filename == "two.csv"
    finally:
        state.close()
