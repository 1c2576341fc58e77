"""Files the user uploads to a tab: decoded once, named by their content (for the caches)."""
from __future__ import annotations

import csv
import hashlib
import io
from typing import NamedTuple

__all__ = ["MAX_UPLOAD_BYTES", "MAX_UPLOAD_ROWS", "MAX_UPLOAD_VALUES", "UPLOAD", "Upload", "file_settings", "read_upload", "csv_columns", "use_uploaded_table",
           "use_uploaded_file"]

#: The ``dataset`` value of an uploaded CSV, in every tab.
UPLOAD = "uploaded CSV"
#: The largest file a page reads (an upload, or a file of the server's data folder). The browser refuses a larger
#: upload before sending it, and the server again. 5 MB is some 50,000 rows of ten numbers: far more than any
#: method of the app takes (each refuses more rows than it can handle with its own message), and, sent in one
#: websocket message as base64 (4/3 larger), well below Bokeh's 20 MiB message limit, above which the browser's
#: connection would be dropped without a word.
MAX_UPLOAD_BYTES = 5_000_000
#: The most lines a page parses (a header and data rows), counted before parsing: a CSV of short rows can hold
#: some 400,000 within the byte limit, whose parsing alone would hold the server for seconds. Each method then
#: takes fewer rows still (the Gaussian-process pages offer a random subsample of a larger file).
MAX_UPLOAD_ROWS = 20_000
#: The most values (data rows × header columns) a page parses. Parsing runs in the server's event loop, where it
#: holds every session: measured on the 2-core machine, a 20,000 × 30 table (600,000 values, 5.1 MB) took 1.4 s,
#: a 20,000 × 100 one 5.1 s; 250,000 values take about half a second at most.
MAX_UPLOAD_VALUES = 250_000


class Upload(NamedTuple):
    """An uploaded text file: its name, its text and the SHA-256 of the text (a cache key)."""

    filename: str
    text: str
    sha256: str


def read_upload(filename: str, content: bytes | str, *, max_bytes: int = MAX_UPLOAD_BYTES,
                max_rows: int = MAX_UPLOAD_ROWS, max_values: int = MAX_UPLOAD_VALUES) -> Upload:
    """Decode an upload as UTF-8 (a byte-order mark dropped). Raises ValueError with a message for the user: a
    file larger than ``max_bytes``, of more than ``max_rows`` data rows or ``max_values`` values, not UTF-8 text, or
    empty (a file of the server's data folder may be given larger limits than an upload)."""
    if len(content) > max_bytes:
        raise ValueError(f"{filename} has {len(content) / 1e6:.1f} MB; the app reads files of at most "
                         f"{max_bytes / 1e6:g} MB. Upload a smaller extract of it.")
    try:
        text = content.decode("utf-8-sig") if isinstance(content, bytes) else content
    except UnicodeDecodeError as err:
        raise ValueError(f"{filename} is not UTF-8 text ({err.reason} at byte {err.start}). "
                         "Save it as a UTF-8 CSV and upload it again.") from None
    if not text.strip():
        raise ValueError(f"{filename} is empty. Upload a CSV with a header row of column names and data rows.")
    rows = text.count("\n") + (not text.endswith("\n")) - 1  # the lines after the header
    if rows > max_rows:
        raise ValueError(f"{filename} has {rows:,} data rows; the app reads at most {max_rows:,}. Upload a "
                         "random sample of its rows.")
    columns = text[:text.find("\n")].count(",") + 1
    if rows * columns > max_values:
        raise ValueError(f"{filename} has {rows:,} rows of {columns} columns; the app reads at most "
                         f"{max_values:,} values. Upload fewer rows (a random sample) or only the columns "
                         "you need.")
    return Upload(filename, text, hashlib.sha256(text.encode()).hexdigest())


def file_settings(upload: Upload | None) -> dict[str, str]:
    """What a settings JSON says of the file behind the data: its name and the SHA-256 of its text (none without)."""
    return {} if upload is None else {"file": upload.filename, "sha256": upload.sha256}


def csv_columns(upload: Upload, what: str) -> list[str]:
    """The column names of the upload's header row; ValueError unless there are at least two (``what`` says
    which columns the tab needs, e.g. "inputs and a target")."""
    row = next(csv.reader(io.StringIO(upload.text)), [])
    columns = [name.strip().lstrip("\ufeff") for name in row if name.strip()]
    if len(columns) < 2:
        raise ValueError(f"{upload.filename} does not look like a CSV table: expected a header row with at least "
                         f"two comma-separated column names ({what}).")
    return columns


def use_uploaded_table(state, filename: str, content: bytes | str, target: str | None, what: str) -> list[str] | None:
    """Make an uploaded CSV the ``dataset`` (value ``UPLOAD`` of its selector) of a tab's state, with ``target``
    (default: the last column) picked among its columns. Returns the columns, or None after putting the
    reason in ``state.error``. The state's data source (``state.source``, a
    :class:`~explorer.views.common.state.data_source.DataSource`) keeps the file; the state refreshes if it has started."""
    try:
        upload = read_upload(filename, content)
        columns = csv_columns(upload, what)
    except ValueError as err:
        state.refuse(str(err))  # no figure of the earlier data beside the message
        return None
    state.source.upload = upload
    if UPLOAD not in state.param.dataset.objects:
        state.param.dataset.objects = [*state.param.dataset.objects, UPLOAD]
    state.param.target.objects = columns
    state.param.update(dataset=UPLOAD, target=target if target in columns else columns[-1])
    if state.started:
        state.refresh()
    return columns


def use_uploaded_file(state, filename: str, content: bytes | str, **switch) -> Upload | None:
    """Keep an uploaded file (a series, not a table of the ``dataset`` selector) in ``state.source`` and set the
    controls ``switch`` to use it; the state refreshes if it has started. The message of an earlier upload goes
    with it. Returns the file, or None after putting the reason in ``state.error`` (nothing switches then)."""
    state.error = ""
    try:
        upload = state.source.accept(filename, content)
    except ValueError as err:
        state.refuse(str(err))
        return None
    state.param.update(**switch)
    if state.started:
        state.refresh()
    return upload
