"""What every command of the CLI shares: option parsers, data loading, progress on stderr, output and exit codes.

A command module registers its subparser with ``set_defaults(handler=command(compute))``: ``compute(args)``
returns an :class:`Output`; :func:`command` prints its JSON (``--json``) or text and turns the errors a user
can cause into a one-line message with exit code 2 (3 when the replica theory does not converge).

Where Monte-Carlo runs (:func:`add_engine_options`, :func:`engine_executor`): without ``--workers`` and
``--scheduler`` in this process (no start-up cost; ``$EXPLORER_SCHEDULER`` is for ``serve`` and notebooks),
``--workers N`` on a local Dask cluster of N worker processes started for the command (``--workers 1`` is one
real worker process), ``--scheduler ADDRESS`` on an existing Dask cluster. The numbers are the same everywhere.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from explorer import datasets
from explorer.chunks import Executor
from explorer.engine import EngineError, connect
from explorer.progress import Hooks
from explorer.gp_bootstrap import replica

__all__ = ["Output", "command", "floats", "add_json_option", "add_data_source", "add_engine_options", "positive_int",
           "engine_executor", "load_dataset", "progress", "to_json", "jsonable"]


@dataclass(frozen=True)
class Output:
    """What a command prints: ``payload`` as JSON with ``--json``, else ``text``."""

    payload: dict
    text: str


Compute = Callable[[argparse.Namespace], Output]

#: Errors a user can cause with the options: a message on stderr and exit code 2, never a traceback.
EXPECTED_ERRORS = (ValueError, OSError, np.linalg.LinAlgError, FloatingPointError, EngineError)


def command(compute: Compute) -> Callable[[argparse.Namespace], int]:
    """The handler of a command: run ``compute``, print its output, return the exit code (0, 2 or 3)."""

    def handler(args: argparse.Namespace) -> int:
        try:
            out = compute(args)
        except replica.ConvergenceError as err:
            print(f"explorer: the theory did not converge: {err}", file=sys.stderr)
            return 3
        except EXPECTED_ERRORS as err:
            print(f"explorer: error: {err}", file=sys.stderr)
            return 2
        if sys.stderr.isatty():
            sys.stderr.write("\n")
        print(to_json(out.payload) if getattr(args, "json", False) else out.text)
        return 0

    return handler


def floats(text: str) -> list[float]:
    """Argument type: comma-separated numbers."""
    try:
        return [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def add_json_option(p: argparse.ArgumentParser) -> None:
    """The ``--json`` switch every computing command has."""
    p.add_argument("--json", action="store_true", help="print the result as one JSON object on stdout")


def add_data_source(p: argparse.ArgumentParser, *, dataset_help: str, target_help: str, dataset_default=None,
                    required: bool = False, csv_help: str = "a CSV file of your own (one header row); needs --target",
                    series_csv_help: str | None = None) -> argparse._ArgumentGroup:
    """The ``data (choose one source)`` group: ``--dataset NAME`` or ``--csv PATH`` (or, given its help,
    ``--series-csv PATH``), and ``--target COLUMN``. Returns the group, for a command's further data options.
    """
    g = p.add_argument_group("data (choose one source)")
    src = g.add_mutually_exclusive_group(required=required)
    src.add_argument("--dataset", default=dataset_default, help=dataset_help)
    src.add_argument("--csv", metavar="PATH", help=csv_help)
    if series_csv_help is not None:
        src.add_argument("--series-csv", metavar="PATH", help=series_csv_help)
    g.add_argument("--target", metavar="COLUMN", help=target_help)
    return g


def positive_int(text: str) -> int:
    """Argument type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def add_engine_options(p: argparse.ArgumentParser) -> None:
    """``--workers N`` and ``--scheduler ADDRESS``: where the command's Monte-Carlo runs (default: in-process)."""
    g = p.add_argument_group("where Monte-Carlo runs (default: in this process; same numbers everywhere)")
    src = g.add_mutually_exclusive_group()
    src.add_argument("--workers", type=positive_int, default=None, metavar="N",
                     help="start a local Dask cluster of N worker processes (one thread each) for this command; "
                          "--workers 1 is one worker process")
    src.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="run on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786)")


@contextmanager
def engine_executor(args: argparse.Namespace) -> Iterator[Executor | None]:
    """The executor of ``--workers`` / ``--scheduler`` (None: in-process), closed when the block ends.

    Raises :class:`~explorer.engine.EngineError` (exit code 2 under :func:`command`) if the scheduler cannot be
    reached.
    """
    if args.workers is None and args.scheduler is None:
        yield None
        return
    engine = connect(args.scheduler, workers=args.workers)
    try:
        yield engine.executor
    finally:
        engine.close()


def load_dataset(args: argparse.Namespace) -> datasets.Dataset:
    """``--csv PATH --target COLUMN`` if given, else ``--dataset NAME``."""
    if args.csv:
        if not args.target:
            raise ValueError("--csv needs --target COLUMN (the name of the target column).")
        return datasets.load_csv(args.csv, args.target)
    return datasets.load(args.dataset)


def progress() -> Hooks | None:
    """Hooks that print a progress line on stderr when it is a terminal, else None (no output in pipes and tests)."""
    if not sys.stderr.isatty():
        return None

    def show(fraction: float, message: str) -> None:
        sys.stderr.write(f"\r[{fraction:6.1%}] {message:<60}")
        sys.stderr.flush()

    return Hooks(progress=show)


def jsonable(obj):
    """``json.dumps`` default: numpy scalars and arrays as Python numbers and lists."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def to_json(payload: dict, indent: int | None = None) -> str:
    """``payload`` as JSON text (numpy values converted)."""
    return json.dumps(payload, indent=indent, default=jsonable)
