"""What every command of the CLI shares: option parsers, data loading, progress on stderr, output and exit codes.

A command module declares each of its commands once as a :class:`Command` (name, help texts, options, handler)
and adds them to the subparsers with :func:`register`. Most are :meth:`Command.computing`: ``compute(args)``
returns an :class:`Output`, its docstring is the command's description in ``--help``, and :func:`command` prints
its JSON (``--json``) or text and turns the errors a user can cause into a one-line message with exit code 2 (3
when the replica theory does not converge).

Where Monte-Carlo runs (:func:`add_engine_options`, :func:`engine_executor`): without ``--workers`` and
``--scheduler`` in this process (no start-up cost; ``$EXPLORER_SCHEDULER`` is for ``serve`` and notebooks),
``--workers N`` on a local Dask cluster of N worker processes started for the command (``--workers 1`` is one
real worker process), ``--scheduler ADDRESS`` on an existing Dask cluster. The numbers are the same everywhere.
"""
from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from explorer import datasets
from explorer.bootstrap import replica
from explorer.chunks import Executor
from explorer.gp_bootstrap.evidence import subsample_rows
from explorer.progress import Hooks, Progress
from explorer.runtime.engine import EngineError, connect

__all__ = ["Output", "Command", "register", "command", "add_json_option", "add_data_source", "add_engine_options",
           "engine_executor", "load_dataset", "progress", "to_json", "jsonable", "OneLineParser", "IntRange",
           "FloatRange", "NumberList", "Grid", "csv_path", "directory", "scheduler_address", "one_line", "shown",
           "MAX_CSV_BYTES", "MAX_DENSE_ROWS", "check_rows", "subsample", "MAX_WORKERS_PER_CORE", "SEED", "TOLERANCE", "PORT",
           "WORKERS", "add_seed_option", "MC_SAMPLES", "S_OVER_N",
           "LENGTHSCALES", "POSITIVE"]


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
            print(f"explorer: the theory did not converge: {one_line(err)}", file=sys.stderr)
            return 3
        except EXPECTED_ERRORS as err:
            print(f"explorer: error: {one_line(err)}", file=sys.stderr)
            return 2
        if sys.stderr.isatty():
            sys.stderr.write("\n")
        print(to_json(out.payload) if getattr(args, "json", False) else out.text)
        return 0

    return handler


@dataclass(frozen=True)
class Command:
    """One ``explorer`` command: what ``explorer --help`` and ``explorer NAME --help`` say, its options and handler.

    Attributes
    ----------
    name : str
        The command's name (``explorer NAME``).
    help : str
        Its line in ``explorer --help``.
    add_arguments : callable
        ``add_arguments(parser)`` adds the command's options to its parser.
    handler : callable
        ``handler(args)`` runs the command and returns the exit code; usually :func:`command` of a compute function.
    description, epilog : str, optional
        The text above and below the options in ``explorer NAME --help``.
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    handler: Callable[[argparse.Namespace], int]
    description: str | None = None
    epilog: str | None = None

    @classmethod
    def computing(cls, name: str, help: str, add_arguments: Callable[[argparse.ArgumentParser], None],
                  compute: Compute, epilog: str | None = None) -> Command:
        """A command that prints what ``compute`` returns (:func:`command`), described by ``compute``'s docstring
        (argparse refills it, so its line breaks do not show)."""
        return cls(name, help, add_arguments, command(compute), inspect.getdoc(compute), epilog)

    def add_to(self, sub) -> argparse.ArgumentParser:
        """Add the command's parser, with its options and handler, to the CLI's subparsers ``sub``."""
        p = sub.add_parser(self.name, help=self.help, description=self.description, epilog=self.epilog)
        self.add_arguments(p)
        p.set_defaults(handler=self.handler)
        return p


def register(sub, commands: Iterable[Command]) -> None:
    """Add ``commands`` to the CLI's subparsers ``sub``, in their order (the order of ``explorer --help``)."""
    for c in commands:
        c.add_to(sub)


def add_json_option(p: argparse.ArgumentParser) -> None:
    """The ``--json`` switch every computing command has."""
    p.add_argument("--json", action="store_true", help="print the result as one JSON object on stdout")


def add_seed_option(g, what: str = "seed of the random generator") -> None:
    """``--seed`` (default 0, :data:`SEED`'s range) on the parser or group ``g``; ``what`` starts its help."""
    g.add_argument("--seed", type=SEED, default=0, help=f"{what}, {SEED} (default 0)")


class ArgumentGroup(Protocol):
    """What ``ArgumentParser.add_argument_group`` returns (argparse gives its class no public name): a group that
    takes options."""

    def add_argument(self, *args, **kwargs) -> argparse.Action: ...


def add_data_source(p: argparse.ArgumentParser, *, dataset_help: str, target_help: str, dataset_default=None,
                    required: bool = False, csv_help: str = "a CSV file of your own (one header row); needs --target",
                    series_csv_help: str | None = None, csv_type: Callable[[str], str] | None = None) -> ArgumentGroup:
    """The ``data (choose one source)`` group: ``--dataset NAME`` or ``--csv PATH`` (or, given its help,
    ``--series-csv PATH``), and ``--target COLUMN``. Returns the group, for a command's further data options.
    ``csv_type`` replaces the type of ``--csv`` (:func:`csv_path`), for a command that reads large files otherwise.
    """
    g = p.add_argument_group("data (choose one source)")
    src = g.add_mutually_exclusive_group(required=required)
    src.add_argument("--dataset", default=dataset_default, help=dataset_help)
    src.add_argument("--csv", metavar="PATH", type=csv_type or csv_path,
                     help=f"{csv_help} (at most {MAX_CSV_BYTES:,} bytes)" if csv_type is None else csv_help)
    if series_csv_help is not None:
        src.add_argument("--series-csv", metavar="PATH", type=csv_path,
                         help=f"{series_csv_help} (at most {MAX_CSV_BYTES:,} bytes)")
    g.add_argument("--target", metavar="COLUMN", help=target_help)
    return g


# ----------------------------------------------------------------------------- bounded option types
# Every count, size and tolerance of the CLI is parsed by one of these types: a value outside its documented
# bounds is a usage error (one line on stderr, exit code 2) before any data is read or any work starts.

#: Largest CSV file a path option reads (bytes), checked with ``os.stat`` before reading: ~50 MB of text is about a
#: million numbers, more than any dense method here can use (a GP on 10,000 rows already needs 0.8 GB per matrix).
MAX_CSV_BYTES = 50_000_000
#: Rows of the data a dense method takes (an N×N kernel matrix: 200 MB and about a second per factorisation at 5,000).
MAX_DENSE_ROWS = 5_000
#: ``--workers`` may ask for at most this many local worker processes per core (``os.cpu_count()``).
MAX_WORKERS_PER_CORE = 4
#: Characters of an offending value quoted in a message.
_SHOWN_CHARS = 40


def one_line(message: str) -> str:
    """``message`` on one line (line breaks and runs of white space become one space)."""
    return " ".join(str(message).split())


def shown(text: str) -> str:
    """A user's value for a message: quoted, cut to its first characters when long."""
    return repr(text) if len(text) <= _SHOWN_CHARS else f"{text[:_SHOWN_CHARS]!r}… ({len(text):,} characters)"


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line on stderr (``explorer CMD: error: ...``), exit code 2.

    The usage summary is left out (it is many lines; ``--help`` shows it). Subparsers inherit the class.
    """

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see: {self.prog} --help)\n")


def _whole_number(text: str) -> int | None:
    """``text`` as an int ("12", "1_000", "1e3"), or None if it is no whole number (or too long to read)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if math.isfinite(value) and value.is_integer() else None


def _real_number(text: str) -> float | None:
    """``text`` as a finite float, or None."""
    try:
        value = float(text)
    except (ValueError, OverflowError):
        return None
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class _Bounded:
    """Argument type: a number from ``low`` to ``high`` (both included), read by :meth:`read` (None: not such a
    number); ``what`` names the value in messages ("Monte-Carlo samples"), ``why`` says what the bounds protect."""

    low: float
    high: float
    what: str
    why: str = ""

    #: What the message says the value must be, between ``what`` and the bounds.
    expected: ClassVar[str] = " from"

    def read(self, text: str) -> float | None:
        raise NotImplementedError

    def __call__(self, text: str):
        value = self.read(text)
        if value is None or not self.low <= value <= self.high:
            raise argparse.ArgumentTypeError(
                f"expected {self.what}{self.expected} {self}, got {shown(text)}. {self.why}".strip())
        return value


@dataclass(frozen=True)
class IntRange(_Bounded):
    """Argument type: a whole number from ``low`` to ``high``.

    ``what`` names the value in messages ("Monte-Carlo samples"), ``why`` says what the upper bound protects.
    ``str(bound)`` ("1 to 100,000") is what the option's help shows.
    """

    low: int
    high: int
    expected: ClassVar[str] = ", a whole number from"

    def read(self, text: str) -> int | None:
        return _whole_number(text)

    def __str__(self) -> str:
        return f"{self.low:,} to {self.high:,}"


@dataclass(frozen=True)
class FloatRange(_Bounded):
    """Argument type: a finite number from ``low`` to ``high`` (both included); ``what`` and ``why`` as
    :class:`IntRange`."""

    def read(self, text: str) -> float | None:
        return _real_number(text)

    def __str__(self) -> str:
        return f"{self.low:.3g} to {self.high:.3g}"


@dataclass(frozen=True)
class NumberList:
    """Argument type: 1 to ``max_items`` comma-separated numbers, each from ``low`` to ``high``."""

    max_items: int
    low: float
    high: float
    what: str

    def __call__(self, text: str) -> list[float]:
        items = [t for t in text.split(",") if t.strip()]
        if not 1 <= len(items) <= self.max_items:
            raise argparse.ArgumentTypeError(f"expected 1 to {self.max_items} comma-separated {self.what}, got "
                                             f"{len(items):,} ({shown(text)}). Give 1 to {self.max_items} values.")
        values = [_real_number(t) for t in items]
        bad = [t for t, v in zip(items, values) if v is None or not self.low <= v <= self.high]
        if bad:
            raise argparse.ArgumentTypeError(f"expected {self.what} from {self.low:.3g} to {self.high:.3g}, got "
                                             f"{shown(bad[0].strip())} in {shown(text)}.")
        return values

    def __str__(self) -> str:
        return f"1 to {self.max_items} values from {self.low:.3g} to {self.high:.3g}"


@dataclass(frozen=True)
class Grid:
    """Argument type: ``START,STOP,STEP`` (start ≤ stop, step > 0) of at most ``max_points`` grid points,
    counted from the three numbers before any grid is made."""

    max_points: int

    def __call__(self, text: str) -> tuple[float, float, float]:
        values = tuple(_real_number(t) for t in text.split(","))
        if len(values) != 3 or None in values:
            raise argparse.ArgumentTypeError(f"expected START,STOP,STEP (three finite numbers), got {shown(text)}")
        start, stop, step = values
        if not (step > 0 and stop >= start):
            raise argparse.ArgumentTypeError(f"a grid needs start ≤ stop and step > 0, got {shown(text)}")
        points = (stop - start) / step + 1  # a float: no grid is made to count its points
        if points > self.max_points + 1e-9:
            raise argparse.ArgumentTypeError(
                f"{shown(text)} has {points:.4g} grid points; at most {self.max_points:,} are allowed (each point "
                f"is a model trained per replication). Use a larger STEP or a shorter range.")
        return values

    def __str__(self) -> str:
        return f"at most {self.max_points:,} points"


def csv_path(text: str) -> str:
    """Argument type: a path to a regular file of at most :data:`MAX_CSV_BYTES` (checked before reading)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected the path of a CSV file, got an empty string")
    try:
        info = os.stat(text)
    except (OSError, ValueError) as err:
        raise argparse.ArgumentTypeError(f"cannot read {text!r}: {getattr(err, 'strerror', None) or err}. "
                                         "Check the path.") from None
    if not stat.S_ISREG(info.st_mode):
        raise argparse.ArgumentTypeError(f"{text!r} is not a regular file (a directory or a device); "
                                         "expected the path of a CSV file")
    if info.st_size > MAX_CSV_BYTES:
        raise argparse.ArgumentTypeError(f"{text!r} has {info.st_size:,} bytes; at most {MAX_CSV_BYTES:,} "
                                         "are read. Use fewer rows (a random subset) or fewer columns.")
    return text


def directory(text: str) -> str:
    """Argument type: the path of an existing directory."""
    if not text.strip() or not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory. Give an existing folder.")
    return text


_SCHEDULER = re.compile(r"(?:tcp://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)(?::(?P<port>[0-9]{1,5}))?")


def scheduler_address(text: str) -> str:
    """Argument type: a Dask scheduler address ``tcp://HOST[:PORT]`` (or ``HOST[:PORT]``)."""
    match = _SCHEDULER.fullmatch(text.strip())
    if match is None or not 1 <= int(match["port"] or 8786) <= 65535:
        raise argparse.ArgumentTypeError(
            f"expected a Dask scheduler address tcp://HOST:PORT, got {shown(text)}. Other protocols (tls://, "
            "ucx://) need Dask security settings that explorer does not pass: use tcp://, or connect from Python.")
    return text.strip()


SEED = IntRange(0, 2**32 - 1, "a seed", "Seeds are 32-bit: pick another one in range.")
TOLERANCE = FloatRange(float(np.finfo(float).eps), 1.0, "a tolerance",
                       "A tolerance below machine precision (2.2e-16) can never be met.")
PORT = IntRange(1, 65535, "a TCP port")
WORKERS = IntRange(1, MAX_WORKERS_PER_CORE * (os.cpu_count() or 1), "the number of worker processes",
                   f"More than {MAX_WORKERS_PER_CORE} per core ({os.cpu_count() or 1} here) only share the same "
                   "cores; for more, start a Dask cluster and pass --scheduler.")
#: Monte-Carlo bootstrap samples per S: the papers use up to 20,000; at ~2 ms a sample on boston, 100,000 take
#: about 3 minutes per S.
MC_SAMPLES = IntRange(1, 100_000, "the number of Monte-Carlo samples",
                      "Larger runs would take hours: use fewer samples.")
#: S/N values of one run: a learning curve of 16 sizes at the most samples takes under an hour.
S_OVER_N = NumberList(16, 1e-3, 100.0, "bootstrap sizes S/N")
#: Lengthscales: one per input column at most (ARD).
LENGTHSCALES = NumberList(1000, 1e-300, 1e300, "positive lengthscales")
#: A kernel or noise hyperparameter: positive and finite.
POSITIVE = FloatRange(1e-300, 1e300, "a positive number")


#: The group title and helps of :func:`add_engine_options` for a command that runs in-process by default.
ENGINE_TITLE = "where Monte-Carlo runs (default: in this process; same numbers everywhere)"
WORKERS_HELP = (f"start a local Dask cluster of N worker processes (one thread each) for this command, N from "
                f"{WORKERS}; --workers 1 is one worker process")
SCHEDULER_HELP = "run on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786)"


def add_engine_options(p: argparse.ArgumentParser, title: str = ENGINE_TITLE, workers_help: str = WORKERS_HELP,
                       scheduler_help: str = SCHEDULER_HELP) -> None:
    """``--workers N`` or ``--scheduler ADDRESS`` (one of them): where the Monte-Carlo runs.

    The commands' defaults say "in-process by default" (:func:`engine_executor`); ``serve``, which starts a local
    cluster by default, passes its own ``title`` and helps.
    """
    src = p.add_argument_group(title).add_mutually_exclusive_group()
    src.add_argument("--workers", type=WORKERS, default=None, metavar="N", help=workers_help)
    src.add_argument("--scheduler", type=scheduler_address, default=None, metavar="ADDRESS", help=scheduler_help)


@contextmanager
def engine_executor(args: argparse.Namespace) -> Iterator[Executor | None]:
    """The executor of ``--workers`` / ``--scheduler`` (None: in-process), closed when the block ends.

    Raises :class:`~explorer.runtime.engine.EngineError` (exit code 2 under :func:`command`) if the scheduler cannot be
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


def load_dataset(args: argparse.Namespace, max_rows: int = MAX_DENSE_ROWS,
                 advice: str = "Use a random subset of the rows.") -> datasets.Dataset:
    """``--csv PATH --target COLUMN`` if given, else ``--dataset NAME``; at most ``max_rows`` rows (:func:`check_rows`
    with ``advice``)."""
    if args.csv:
        if not args.target:
            raise ValueError("--csv needs --target COLUMN (the name of the target column).")
        return check_rows(datasets.load_csv(args.csv, args.target), max_rows, advice)
    if args.dataset in datasets.GENERATED:  # the app's draw: the same data in every run
        return check_rows(datasets.load(args.dataset, rng=datasets.GENERATED_DATA_SEED), max_rows, advice)
    return check_rows(datasets.load(args.dataset), max_rows, advice)


def check_rows(data: datasets.Dataset, max_rows: int = MAX_DENSE_ROWS,
               advice: str = "Use a random subset of the rows.") -> datasets.Dataset:
    """``data`` if it has at most ``max_rows`` rows, else a ValueError that ends with ``advice``."""
    if data.n > max_rows:
        what = ("the methods here build an N×N kernel matrix and take" if max_rows == MAX_DENSE_ROWS
                else "this run takes")
        raise ValueError(f"{data.name} has {data.n:,} rows; {what} at most {max_rows:,}. {advice}")
    return data


def subsample(data: datasets.Dataset, rows: int, seed: int) -> datasets.Dataset:
    """``rows`` rows of ``data`` drawn at random with ``seed``, in their file order, named as the app names its
    subsample ("name (random 1,000 of 3,000 rows, seed 0)"); ``data`` itself if it has at most ``rows`` rows.

    The rows are :func:`explorer.gp_bootstrap.evidence.subsample_rows`'s, the app's draw: ``--subsample 1000`` with
    the default ``--seed 0`` uses the rows of the app's 'Use a random subsample of 1,000 rows'.
    """
    if data.n <= rows:
        return data
    return dataclasses.replace(data.subset(subsample_rows(data.n, rows, seed)),
                               name=f"{data.name} (random {rows:,} of {data.n:,} rows, seed {seed})")


def progress() -> Hooks | None:
    """Hooks that print a progress line on stderr when it is a terminal, else None (no output in pipes and tests)."""
    if not sys.stderr.isatty():
        return None

    def show(fraction: float, message: Progress) -> None:
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
