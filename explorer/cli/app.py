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

from explorer import datasets
from explorer.cli import common
from explorer.cli.common import (
    PORT,
    WORKERS,
    Output,
    add_engine_options,
    command,
    directory,
    one_line,
    scheduler_address,
)
from explorer.serving.engine import SCHEDULER_ENV, EngineError

#: Students a class room takes unless ``--room-capacity`` says otherwise (:data:`explorer.serving.rooms.ROOM_CAPACITY`,
#: not imported from there: the other commands never import the server's modules).
ROOM_CAPACITY = 300

#: Environment variable: ``0`` starts ``explorer serve`` without its warm-up (as ``--no-warm-up``; the tests do).
WARM_UP_ENV = "EXPLORER_WARM_UP"

__all__ = ["register", "COMMANDS"]


def register(sub) -> None:
    """Add ``datasets`` and ``serve`` to the CLI's subparsers."""
    common.register(sub, COMMANDS)


def _datasets_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print JSON")


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
                       f"one (default: ${SCHEDULER_ENV} if set)")


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
    """``explorer datasets``: one name a line (JSON: ``{"datasets": [...]}``)."""
    names = list(datasets.available())
    return Output({"datasets": names}, "\n".join(names))


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
    common.Command("datasets", "list the datasets that --dataset accepts", _datasets_arguments,
                   command(list_datasets)),
    common.Command("serve", "serve the interactive explorer in the browser (Panel)", _serve_arguments, serve,
                   description=SERVE_DESCRIPTION),
)
