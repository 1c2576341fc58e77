"""``serve`` (the interactive explorer, :mod:`explorer.app`, served by :mod:`explorer.serving.server`) and ``datasets`` (what ``--dataset`` accepts).

``serve`` imports the UI stack (Panel, HoloViews, Bokeh) only when it runs; every other command stays on the
numpy/scipy core. ``serve`` runs the Monte-Carlo of every session on a Dask engine opened with the server: a
local cluster (``--workers N`` processes, default one per core) or ``--scheduler ADDRESS`` /
``$EXPLORER_SCHEDULER``.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from explorer import datasets
from explorer.cli import common
from explorer.cli.common import (
    PORT,
    SEED,
    WORKERS,
    IntRange,
    Output,
    add_engine_options,
    command,
    directory,
    one_line,
    scheduler_address,
)
from explorer.runtime.engine import SCHEDULER_ENV, EngineError

#: Students a class room takes unless ``--room-capacity`` says otherwise (:data:`explorer.runtime.rooms.ROOM_CAPACITY`,
#: not imported from there: the other commands never import the server's modules).
ROOM_CAPACITY = 300

#: Environment variable: ``0`` starts ``explorer serve`` without its warm-up (as ``--no-warm-up``; the tests do).
WARM_UP_ENV = "EXPLORER_WARM_UP"

#: Rows of a data folder's CSV the GP page's large-data mode takes on a cluster given by address
#: (:data:`explorer.views.gp_bootstrap.cluster.CLUSTER_ROWS`; not imported from there, as ROOM_CAPACITY).
CLUSTER_ROWS = 1_000_000

#: CPython's environment variable choosing its memory allocator (read once, when the interpreter starts).
ALLOCATOR_ENV = "PYTHONMALLOC"

__all__ = ["register", "COMMANDS", "ALLOCATOR_ENV", "restart_under_c_allocator"]


def restart_under_c_allocator(argv: Sequence[str]) -> None:
    """If the command line ``argv`` (``sys.argv``) runs ``serve`` and no allocator was chosen in the environment,
    replace this process (same PID) by the same command line under the C library's allocator
    (``PYTHONMALLOC=malloc``); otherwise return.

    A server lives through many classes. Python's own allocator keeps small objects in 1 MiB arenas it returns to
    the system only when every object in one is freed; the objects of 60 phone sessions, freed when the room closes,
    leave most arenas holding a few long-lived objects. Measured with ``benchmarks/bench_class.py`` (60 students,
    every session's objects freed): the server's resident memory stayed 27-31 % above its level before the room.
    Under the C library's allocator the freed memory goes back to the system
    (:func:`explorer.runtime.engine.return_freed_memory` asks it to once a session ends): +0.4 % of before 60 s
    after a 60-phone room closed, for 5-15 % more CPU per draw (48 % → 55 % of one core at 60 phones). ``PYTHONMALLOC=pymalloc explorer serve`` keeps Python's allocator.
    """
    if list(argv[1:2]) != ["serve"] or ALLOCATOR_ENV in os.environ or os.name != "posix" or not sys.executable:
        return
    if {"-h", "--help"} & set(argv):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, list(sys.orig_argv), {**os.environ, ALLOCATOR_ENV: "malloc"})


def register(sub) -> None:
    """Add ``datasets`` and ``serve`` to the CLI's subparsers."""
    common.register(sub, COMMANDS)


#: Rows ``explorer datasets --export NAME PATH --rows N`` may draw of a generated set: ``toy`` is cheap at any size
#: (a large CSV for the low-rank mode) up to --csv's 50,000,000 bytes; ``teacher`` is a Gaussian-process draw, O(N³).
EXPORT_ROWS = IntRange(10, 1_000_000, "a number of rows", "A larger file would exceed --csv's 50,000,000 bytes.")
MAX_TEACHER_ROWS = 5_000


def _datasets_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--export", nargs=2, metavar=("NAME", "PATH"), default=None,
                   help="write the data set NAME (one of the list) to the CSV file PATH, in the format --csv and the "
                        "app's uploads read: one header row of column names (the inputs, then the target), one row "
                        "per case, numbers as Python prints them (so the file reads back exactly); an existing file "
                        "is overwritten. Two-class targets are written as -1/+1, diamonds as the loader gives it "
                        "(standardised log price). Read it back with --csv PATH --target <the last column>")
    p.add_argument("--rows", type=EXPORT_ROWS, default=None, metavar="N",
                   help=f"with --export of a generated set: draw N rows instead of the app's (toy {EXPORT_ROWS}, "
                        f"e.g. a large CSV for --rank; teacher at most {MAX_TEACHER_ROWS:,}, a Gaussian-process draw)")
    p.add_argument("--seed", type=SEED, default=None,
                   help=f"with --export of a generated set: the seed of its draw, {SEED} (default "
                        f"{datasets.GENERATED_DATA_SEED}, the data of --dataset toy and --dataset teacher)")


#: The description of ``explorer serve --help`` until the help is shown (:class:`_ServeHelpFormatter` writes it).
SERVE_DESCRIPTION = "Serve the Resampling Explorer dashboard in the browser."


def serve_description() -> str:
    """What ``explorer serve --help`` says the page holds: every tab of the page registry
    (:data:`explorer.views.pages.PAGE_TITLES`), in the order of the tab bar, so that the help names every page there
    is. The registry imports the UI stack: only when the help is shown."""
    from explorer.views.pages import PAGE_TITLES

    return (f"{SERVE_DESCRIPTION} Its tabs, theory against Monte-Carlo, live: {'; '.join(PAGE_TITLES.values())}. "
            "The sidebar holds the open tab's controls; the header's 'Reproduce a figure' menu sets every control for "
            "a figure or table of the papers.")


class _ServeHelpFormatter(argparse.HelpFormatter):
    """The help of ``explorer serve``: :data:`SERVE_DESCRIPTION` becomes :func:`serve_description` when shown."""

    def add_text(self, text: str | None) -> None:
        super().add_text(serve_description() if text == SERVE_DESCRIPTION else text)


def _serve_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = _ServeHelpFormatter  # a constructor option of argparse, read when the help is formatted
    p.add_argument("--port", type=PORT, default=5006, help=f"port to listen on, {PORT} (default 5006)")
    p.add_argument("--address", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1, this machine only; 0.0.0.0 exposes it to the network); "
                        "the address and port are tried before anything starts")
    p.add_argument("--allow-websocket-origin", action="append", default=None, metavar="HOST[:PORT]",
                   help="extra origin allowed to connect, e.g. myhost.example.org:5006 behind a proxy (repeatable)")
    p.add_argument("--data-dir", type=directory, default=None, metavar="DIR",
                   help="folder whose *.csv files are offered as datasets (default: $EXPLORER_DATA_DIR)")
    p.add_argument("--show", action=argparse.BooleanOptionalAction, default=False,
                   help="open the page in a web browser (default --no-show)")
    p.add_argument("--warm-up", action=argparse.BooleanOptionalAction,
                   default=os.environ.get(WARM_UP_ENV, "1") != "0",
                   help="compute every page's default view and every preset in the background at start, so that "
                        f"they are ready when a class arrives (default; --no-warm-up or {WARM_UP_ENV}=0: off)")
    p.add_argument("--room-capacity", type=_room_capacity, default=ROOM_CAPACITY, metavar="N",
                   help=f"students a class room takes, an integer >= 1 (default {ROOM_CAPACITY}); the next one is "
                        "told the room is full")
    add_engine_options(p, "where Monte-Carlo runs (default: a local Dask cluster started with the server)",
                       f"worker processes of the local Dask cluster, {WORKERS} (default: one per core, one thread "
                       f"each)",
                       f"use the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786) instead of a local "
                       f"one (default: ${SCHEDULER_ENV} if set); the GP page's large-data mode then runs its theory "
                       f"there too and takes data-folder CSVs of up to {CLUSTER_ROWS:,} rows")


def _room_capacity(text: str) -> int:
    """``--room-capacity``: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of students >= 1, got {text!r}")
    return value


def list_datasets(args) -> Output:
    """``explorer datasets``: one name a line (JSON: ``{"datasets": [...]}``); with ``--export NAME PATH`` the data
    set written as a CSV (:func:`export_dataset`)."""
    if args.export is not None:
        return export_dataset(args)
    if args.rows is not None or args.seed is not None:
        raise ValueError("--rows and --seed choose the rows of --export NAME PATH; add --export.")
    names = list(datasets.available())
    return Output({"datasets": names}, "\n".join(names))


def export_dataset(args) -> Output:
    """``explorer datasets --export NAME PATH [--rows N] [--seed S]``: the data set as ``--dataset NAME`` loads it
    (a generated set: its draw of N rows with seed S) written to PATH as a CSV that ``--csv PATH --target T`` reads
    back to the same numbers."""
    name, path = args.export
    key = name.strip().lower()
    if key not in datasets.available():
        raise ValueError(f"unknown data set {name!r}; choose one of {', '.join(datasets.available())}.")
    if key not in datasets.GENERATED and (args.rows is not None or args.seed is not None):
        raise ValueError(f"{key} is a shipped table: --rows and --seed apply to the generated sets "
                         f"({', '.join(datasets.GENERATED)}) only.")
    options = {}
    if key in datasets.GENERATED:
        options["rng"] = datasets.GENERATED_DATA_SEED if args.seed is None else args.seed
        if args.rows is not None:
            if key == "teacher" and args.rows > MAX_TEACHER_ROWS:
                raise ValueError(f"teacher is a Gaussian-process draw, O(N³): at most {MAX_TEACHER_ROWS:,} rows, got "
                                 f"{args.rows:,}. Export toy for a larger file.")
            options["n"] = args.rows
    data = datasets.load(key, **options)
    try:
        datasets.write_csv(data, path)
    except OSError as err:
        raise ValueError(f"cannot write {path}: {err.strerror or err}. Pass a path in a folder you can write to.") \
            from None
    columns = [*data.feature_names, data.target_name]
    payload = {"dataset": key, "path": str(path), "rows": data.n, "columns": columns, "target": data.target_name}
    text = (f"{key}: {data.n:,} rows, {data.d} input{'s' if data.d > 1 else ''} and the target {data.target_name!r} written to {path} "
            f"(read it with --csv {path} --target {data.target_name})")
    return Output(payload, text)


def serve(args) -> int:
    """``explorer serve``: run the Panel server until interrupted; exit code 2 (one line on stderr) for an address
    or port it cannot listen on, a bad ``$EXPLORER_SCHEDULER`` or an unreachable scheduler."""
    scheduler = args.scheduler
    if scheduler is None and args.workers is None and os.environ.get(SCHEDULER_ENV):
        try:
            scheduler = scheduler_address(os.environ[SCHEDULER_ENV])
        except argparse.ArgumentTypeError as err:
            print(f"explorer: error: ${SCHEDULER_ENV}: {one_line(err)}", file=sys.stderr)
            return 2
    from explorer.serving.server import serve as serve_app  # the UI stack is imported only for this command
    try:
        serve_app(port=args.port, address=args.address, warm_up=args.warm_up,
                  allow_websocket_origin=args.allow_websocket_origin,
                  data_dir=args.data_dir, show=args.show, scheduler=scheduler, workers=args.workers,
                  room_capacity=args.room_capacity)
    except (EngineError, OSError) as err:
        print(f"explorer: error: {one_line(err)}", file=sys.stderr)
        return 2
    return 0


#: The module's commands, in the order of ``explorer --help`` (:func:`register`).
COMMANDS = (
    common.Command("datasets", "list the datasets that --dataset accepts, or write one as a CSV (--export)",
                   _datasets_arguments,
                   command(list_datasets)),
    common.Command("serve", "serve the interactive explorer in the browser (Panel)", _serve_arguments, serve,
                   description=SERVE_DESCRIPTION),
)
