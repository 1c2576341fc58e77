"""The data of the Gaussian-process pages: which datasets are offered, the CSV's target column, reading the rows
within the bounds of the dense and low-rank modes, and the keys under which the sessions share them.

:class:`GPData` is a component of :class:`~explorer.views.gp_bootstrap.state.GPBootstrapState`: it reads the state's
controls (``dataset``, ``target``, ``standardize``, ``subsample``) and its data source, and holds the columns of the
CSV files seen.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from explorer import datasets
from explorer.gp_bootstrap import evidence as gp_evidence
from explorer.views.common.files.uploads import UPLOAD, Upload, csv_columns, read_upload
from explorer.views.gp_bootstrap import cluster
from explorer.views.gp_bootstrap.jobs import DATA
from explorer.views.gp_bootstrap.settings import (
    CSV_PREFIX,
    DATA_SEED,
    FITTED_DATASETS,
    LOW_RANK_ROWS,
    MAX_COLUMNS,
    MAX_ROWS,
    REGRESSION_DATASETS,
    SUBSAMPLE_SEED,
)

__all__ = ["GPData", "check_holdout", "csv_header", "subsample_rows"]


class GPData:
    """The data of one GP state (``state``): its choices, target, rows and keys."""

    def __init__(self, state):
        self.state = state
        self.columns: dict[str, list[str]] = {}  # the header of each CSV seen (dataset value → column names)

    def upload(self, filename: str, content: bytes | str) -> None:
        """Use an uploaded CSV (the state's ``upload_csv``): refused with its reason over the figures, or the dataset
        with its last column as the target, starting from its evidence maximum."""
        s = self.state
        try:
            upload = read_upload(filename, content)  # an empty file is refused there, with a message
            columns = csv_columns(upload, "inputs and a target")
        except ValueError as err:
            s.refuse(str(err))  # no figure of the previous data under a message about this file
            return
        s.hyper.pending = True
        s.source.upload = upload
        self.columns[UPLOAD] = columns
        if UPLOAD not in s.param.dataset.objects:
            s.param.dataset.objects = [*s.param.dataset.objects, UPLOAD]
        s.param.update(dataset=UPLOAD, target=columns[-1])
        s.refresh()  # also when dataset and target did not change (a new file with the same header)

    def init_choices(self) -> None:
        """The datasets offered: the shipped and generated ones and the CSV files of the data folder."""
        s = self.state
        objects = list(REGRESSION_DATASETS)
        if s.data_dir and not os.path.isdir(s.data_dir):
            s.tell("data_dir", "The server's data folder cannot be read: only the shipped datasets and uploads "
                               "are offered. (Whoever runs the app can check `--data-dir`.)")
        objects += [CSV_PREFIX + name for name in s.source.files()]
        s.param.dataset.objects = objects

    def server_file(self) -> Upload:
        """The chosen file of the data folder, read and checked as an upload, with the larger limits of the low-rank
        mode (DATA_DIR_LIMITS; on a cluster given by address, ``cluster.CLUSTER_DATA_DIR_LIMITS``)."""
        s = self.state
        return s.source.read(s.dataset[len(CSV_PREFIX):], **cluster.data_dir_limits(s.client))

    def sync_target(self) -> None:
        """Target choices follow the dataset: the CSV's columns, or none for the built-in sets."""
        s = self.state
        if s.dataset in REGRESSION_DATASETS:
            columns = []
        elif s.dataset == UPLOAD:
            columns = self.columns.get(UPLOAD, [])
        else:
            if s.dataset not in self.columns:
                self.columns[s.dataset] = csv_header(self.server_file().text)
            columns = self.columns[s.dataset]
        wanted = s.target if s.target in columns else (columns[-1] if columns else None)
        if list(s.param.target.objects) != columns:
            s.param.target.objects = columns  # a linked Select may now pick its first option: reset below
        if wanted != s.target:
            s.target = wanted

    def dataset_key(self) -> tuple:
        """What identifies the data before scaling: the shipped set's name, or the CSV's name, text and target."""
        s = self.state
        if s.dataset == UPLOAD:
            return s.source.key(s.target)
        if s.dataset.startswith(CSV_PREFIX):
            file = self.server_file()
            return ("csv", file.filename, file.sha256, s.target)
        return ("shipped", s.dataset)

    def key(self) -> tuple:
        """The data's cache key: :meth:`dataset_key`, the scaling, the subsample and the most rows of the large-data
        mode (more on a cluster given by address: ``cluster.large_data_rows``)."""
        s = self.state
        return (self.dataset_key(), bool(s.standardize), bool(s.subsample) and self.is_csv(),
                cluster.large_data_rows(s.client))

    def load(self) -> datasets.Dataset:
        """The chosen data, standardised (inputs and target) when ``standardize`` is on (read once per data key)."""
        s = self.state

        def read() -> datasets.Dataset:
            data = self._load_raw()
            return data.standardized(targets=True) if s.standardize else data
        return DATA.get_or_compute(self.key(), read)

    def large(self) -> bool:
        """Whether the current data have more than MAX_ROWS rows: they run the low-rank path (``rank``)."""
        return self.load().n > MAX_ROWS

    def _load_raw(self) -> datasets.Dataset:
        """The chosen data as read, within the row and column bounds (:meth:`_limit_rows`)."""
        s = self.state
        if s.dataset in ("toy", "teacher"):
            return datasets.load(s.dataset, rng=DATA_SEED)
        if s.dataset in REGRESSION_DATASETS:
            return datasets.load(s.dataset)
        if s.target is None:
            raise datasets.DatasetError("choose the target column of the CSV file.")
        if s.dataset == UPLOAD:
            data = s.source.table(s.target)
        else:
            file = self.server_file()  # read as an upload: no message quotes the server's path
            data = datasets.load_csv(io.StringIO(file.text), s.target, name=Path(file.filename).stem,
                                     task="regression")
        return self._limit_rows(data)

    def _limit_rows(self, data: datasets.Dataset) -> datasets.Dataset:
        """``data`` within MAX_ROWS and MAX_COLUMNS, checked before any kernel matrix: a random subsample of
        MAX_ROWS rows if ``subsample`` is ticked, else, for an upload, DatasetError saying the limit and the file's
        count; a CSV of the data folder of up to LOW_RANK_ROWS rows runs the low-rank path (up to
        ``cluster.CLUSTER_ROWS`` on a cluster given by address, its rows in chunks there)."""
        s = self.state
        if data.d > MAX_COLUMNS:
            raise datasets.DatasetError(
                f"{data.name} has {data.d} input columns; these pages take at most {MAX_COLUMNS}. Upload a CSV "
                "with fewer columns (drop the ones you do not need).")
        if data.n <= MAX_ROWS:
            return data
        if s.dataset != UPLOAD and not s.subsample:
            most = cluster.large_data_rows(s.client)
            if data.n > most:
                on = " on the Dask cluster" if most > LOW_RANK_ROWS else ""
                raise datasets.DatasetError(
                    f"{data.name} has {data.n:,} rows; the low-rank mode of these pages takes at most "
                    f"{most:,}{on}. Tick 'Use a random subsample of {MAX_ROWS:,} rows' under Data, or run "
                    "`explorer learning-curve --csv FILE --rank 256` on the command line (up to 1,000,000 rows).")
            return data
        if not s.subsample:
            raise datasets.DatasetError(
                f"{data.name} has {data.n:,} rows; these pages take at most {MAX_ROWS:,} (the theory solves an "
                f"N × N system on the server at every change). Tick 'Use a random subsample of {MAX_ROWS:,} rows' "
                f"under Data to use {MAX_ROWS:,} of its rows drawn at random (seed {SUBSAMPLE_SEED}), or upload a "
                "smaller file.")
        return replace(data.subset(subsample_rows(data.n, MAX_ROWS)),
                       name=f"{data.name} (random {MAX_ROWS:,} of {data.n:,} rows, seed {SUBSAMPLE_SEED})")

    def is_csv(self) -> bool:
        """Whether the data are a CSV (an upload or a file of the data folder)."""
        s = self.state
        return s.dataset == UPLOAD or s.dataset.startswith(CSV_PREFIX)

    def fits_evidence(self) -> bool:
        """Whether the data's kernel starts from the evidence maximum: a CSV, or diamonds (FITTED_DATASETS)."""
        s = self.state
        return self.is_csv() or s.dataset in FITTED_DATASETS

    def file(self) -> dict | None:
        """The CSV file behind the data: ``{"file": its name, "sha256": of its text}``; None for the shipped and
        generated sets (boston, toy, teacher)."""
        s = self.state
        if s.dataset == UPLOAD and s.source.upload is not None:
            return s.source.settings()
        if s.dataset.startswith(CSV_PREFIX):
            file = self.server_file()
            return {"file": file.filename, "sha256": file.sha256}
        return None

    def label(self) -> str:
        """The data in a few words, for file names: the shipped set's name or the CSV file's name without
        ``.csv``, with the target column of a CSV and ``subsample`` when a random subsample is used."""
        s = self.state
        file = self.file()
        if file is None:
            return s.dataset
        parts = [Path(file["file"]).stem, s.target or ""]
        if s.low_rank:
            return "-".join([*parts, f"rank-{int(s.rank)}"])
        return "-".join([*parts, f"subsample-{MAX_ROWS}"] if s.subsample else parts)


def check_holdout(data: datasets.Dataset, holdout: int) -> None:
    """ValueError unless ``holdout`` rows leave at least 10 training rows of ``data``."""
    if holdout > data.n - 10:
        raise ValueError(f"Held-out rows must leave at least 10 training rows: {data.name} has {data.n} rows, "
                         f"got {holdout} held out. Lower 'Held-out rows' to at most {data.n - 10}.")


def csv_header(text: str) -> list[str]:
    """Column names of the first row of CSV text (for the target picker; load_csv validates the rest)."""
    row = next(csv.reader(io.StringIO(text)), [])
    return [name.strip().lstrip("\ufeff") for name in row if name.strip()]


def subsample_rows(n: int, size: int) -> np.ndarray:
    """``size`` of the row indices 0..n−1 drawn without replacement (seed ``SUBSAMPLE_SEED``), in increasing order."""
    return gp_evidence.subsample_rows(n, size, SUBSAMPLE_SEED)


