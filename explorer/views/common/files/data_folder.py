"""The server's data folder: the only server files a browser can make the app read.

A page never takes a typed path: the CSV files directly inside ``explorer serve --data-dir`` (or
``$EXPLORER_DATA_DIR``) are offered by name, as a choice, and read by :func:`read_data_file` only if the name is
one of :func:`data_file_names`. A link naming any other file is ignored like any value that does not fit. The text is
read as an :class:`~explorer.views.common.files.uploads.Upload` (name, text, SHA-256), so a folder's file and an upload
go through the same checks, and no message shown in the browser quotes the server's path, a file's size or its
content beyond the names of its columns.
"""

from __future__ import annotations

import os
from pathlib import Path

from explorer import datasets
from explorer.runtime.caches import lru
from explorer.views.common.files.uploads import MAX_UPLOAD_BYTES, Upload, read_upload

__all__ = ["DATA_DIR_HELP", "data_file_names", "read_data_file"]

# files read, per (folder, name, modification time, size, limit): a page refreshing reads a file once
_FILES = lru("common.data_files", 8)

#: What a student is told where a file of the data folder is asked for.
DATA_DIR_HELP = ("Files in the server's data folder (the lecturer starts the app with `explorer serve --data-dir "
                 "FOLDER`); or upload your own CSV.")


def data_file_names(data_dir: str | os.PathLike | None) -> list[str]:
    """The names of the ``*.csv`` files directly inside ``data_dir`` (none without a folder, or if it is gone)."""
    if not data_dir:
        return []
    try:
        return [path.name for path in datasets.find_csv_files(data_dir)]
    except (datasets.DatasetError, OSError):
        return []


def read_data_file(data_dir: str | os.PathLike | None, name: str, *, max_bytes: int = MAX_UPLOAD_BYTES,
                   **limits: int) -> Upload:
    """The text of the data folder's CSV file ``name`` (one of :func:`data_file_names`), checked as an upload
    (``limits``: :func:`read_upload`'s ``max_rows`` and ``max_values``, where a page takes more rows from the server).

    Raises
    ------
    explorer.datasets.DatasetError
        If ``name`` is not a CSV file of the folder, or it cannot be read; the message names the file, never
        the folder's path, the file's size or the system's error text.
    ValueError
        If the file is larger than ``max_bytes`` or not UTF-8 text (:func:`read_upload`'s messages).
    """
    if name not in data_file_names(data_dir):
        what = repr(name) if Path(name).name == name else "at that path"  # only plain names are files of it
        raise datasets.DatasetError(f"there is no file {what} in the server's data folder. Choose one of the "
                                    "files offered, or upload the CSV.")
    path = Path(data_dir) / name
    try:
        stat = path.stat()
        if stat.st_size > max_bytes:
            raise ValueError(f"{name} is larger than the {max_bytes / 1e6:g} MB the app reads. Use a smaller "
                             "extract of it.")
        key = (str(data_dir), name, stat.st_mtime_ns, stat.st_size, max_bytes, tuple(sorted(limits.items())))
        return _FILES.get_or_compute(key, lambda: read_upload(name, path.read_bytes(), max_bytes=max_bytes, **limits))
    except OSError:
        raise datasets.DatasetError(f"{name} in the server's data folder cannot be read. Ask whoever runs the "
                                    "app to check the file.") from None
