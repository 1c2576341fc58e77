"""Files the user uploads to a tab: decoded once, named by their content (for the caches)."""
from __future__ import annotations

import csv
import hashlib
import io
from typing import NamedTuple

__all__ = ["UPLOAD", "Upload", "read_upload", "csv_columns", "use_uploaded_table"]

#: The ``dataset`` value of an uploaded CSV, in every tab.
UPLOAD = "uploaded CSV"


class Upload(NamedTuple):
    """An uploaded text file: its name, its text and the SHA-256 of the text (a cache key)."""

    filename: str
    text: str
    sha256: str


def read_upload(filename: str, content: bytes | str, *, max_bytes: int | None = None) -> Upload:
    """Decode an upload as UTF-8 (a byte-order mark dropped). Raises ValueError with a message for the user."""
    if max_bytes is not None and len(content) > max_bytes:
        raise ValueError(f"{filename} has {len(content) / 1e6:.0f} MB; upload a file of at most "
                         f"{max_bytes / 1e6:.0f} MB.")
    try:
        text = content.decode("utf-8-sig") if isinstance(content, bytes) else content
    except UnicodeDecodeError as err:
        raise ValueError(f"{filename} is not UTF-8 text ({err.reason} at byte {err.start}). "
                         "Save it as a UTF-8 CSV and upload it again.") from None
    return Upload(filename, text, hashlib.sha256(text.encode()).hexdigest())


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
    reason in ``state.error``. The state keeps the file in ``state._upload`` and refreshes if it has started."""
    try:
        upload = read_upload(filename, content)
        columns = csv_columns(upload, what)
    except ValueError as err:
        state.error = str(err)
        return None
    state._upload = upload
    if UPLOAD not in state.param.dataset.objects:
        state.param.dataset.objects = [*state.param.dataset.objects, UPLOAD]
    state.param.target.objects = columns
    state.param.update(dataset=UPLOAD, target=target if target in columns else columns[-1])
    if state.started:
        state.refresh()
    return columns
