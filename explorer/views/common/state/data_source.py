"""Where a page's data comes from, held by every state: the file uploaded in this session and the CSV files of the
server's data folder (Panel's data-store pattern: one object owns the data, the state reads it).

A state keeps its ``dataset`` and ``target`` controls (the URL carries them); its :class:`DataSource` holds what the
controls point at: the upload (name, text, SHA-256), the data folder's file names, the cache key of the data and
the table read from a file. Every page reads, keys and describes its files the same way.
"""

from __future__ import annotations

import io
from pathlib import Path

import param

from explorer import datasets
from explorer.views.common.files.data_folder import data_file_names, read_data_file
from explorer.views.common.files.uploads import Upload, csv_columns, file_settings, read_upload

__all__ = ["DataSource", "DataSourced"]


class DataSource(param.Parameterized):
    """The session's upload and the server's data folder of one state.

    :meth:`accept` takes an uploaded file (after the size, row and value checks of :func:`read_upload`),
    :meth:`uploaded` returns it (a :class:`~explorer.datasets.DatasetError` if there is none), :meth:`files` and
    :meth:`read` list and read the data folder's files, :meth:`key` is the cache key of the uploaded data with a
    target column, :meth:`table` reads it as a :class:`~explorer.datasets.Dataset`, :meth:`settings` says what a
    settings JSON records of it.
    """

    data_dir = param.String(default=None, allow_None=True, constant=True, label="Data directory",
                            doc="The server's data folder (``explorer serve --data-dir``): its CSV files are offered "
                                "by name. None: no folder.")
    upload = param.ClassSelector(class_=tuple, default=None, allow_None=True, label="Uploaded file",
                                 doc="The CSV uploaded in this session (name, text, SHA-256), if any.")

    def accept(self, filename: str, content: bytes | str) -> Upload:
        """Keep an uploaded file and return it.

        Raises
        ------
        ValueError
            If the file is empty, too large or has too many rows or values (nothing is kept then).
        """
        self.upload = read_upload(filename, content)
        return self.upload

    def uploaded(self) -> Upload:
        """The uploaded file.

        Raises
        ------
        explorer.datasets.DatasetError
            If none was uploaded in this session (e.g. a link names the upload).
        """
        if self.upload is None:
            raise datasets.DatasetError("no CSV has been uploaded in this session; upload the file again.")
        return self.upload

    def columns(self, what: str) -> list[str]:
        """The header columns of the upload; ValueError unless there are two (``what`` says which the page needs)."""
        return csv_columns(self.uploaded(), what)

    def key(self, target: str | None) -> tuple:
        """The cache key of the uploaded data with ``target`` as its target column."""
        return ("upload", self.uploaded().sha256, target)

    def table(self, target: str, task: str = "regression") -> datasets.Dataset:
        """The upload as a dataset with ``target`` as its target (``task``: "regression" or "classification")."""
        upload = self.uploaded()
        return datasets.load_csv(io.StringIO(upload.text), target, name=Path(upload.filename).stem, task=task)

    def files(self) -> list[str]:
        """The CSV file names of the data folder (none without a folder)."""
        return data_file_names(self.data_dir)

    def read(self, name: str, **limits: int) -> Upload:
        """The data folder's file ``name`` (an :class:`Upload` with its name, text and SHA-256); ``limits``: those of
        :func:`~explorer.views.common.files.data_folder.read_data_file` (``max_bytes``, ``max_rows``, ``max_values``).

        Raises
        ------
        explorer.datasets.DatasetError
            If ``name`` is not a CSV file of the folder or cannot be read (the message names neither path nor
            content).
        ValueError
            If the file is too large (:func:`read_upload`'s messages).
        """
        return read_data_file(self.data_dir, name, **limits)

    def settings(self) -> dict[str, str]:
        """What a settings JSON records of the upload: its name and SHA-256 (nothing without an upload)."""
        return file_settings(self.upload)


class DataSourced(param.Parameterized):
    """The base of a state that reads data: its server data folder and its :class:`DataSource` (made with it)."""

    data_dir = param.String(default=None, allow_None=True, constant=True, precedence=-1, label="Data directory",
                            doc="The server's data folder (explorer serve --data-dir) whose CSV files the page "
                                "offers; None: none.")
    source = param.ClassSelector(class_=DataSource, default=None, precedence=-1, label="Data source",
                                 doc="The session's upload and the data folder behind the state's data.")

    def __init__(self, **params):
        super().__init__(**params)
        if self.source is None:
            self.source = DataSource(data_dir=self.data_dir)
