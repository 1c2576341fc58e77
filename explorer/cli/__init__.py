"""Command-line interface: ``explorer <command> [options]``; ``--json`` prints machine-readable results.

One module per paper declares its commands (``COMMANDS``, each a :class:`~explorer.cli.common.Command`), its
``register`` adds them to the subparsers and :func:`main` calls ``args.handler(args)``:

- :mod:`~explorer.cli.gp_bootstrap` ([MO03]): ``learning-curve`` (Fig. 1), ``distribution`` (Fig. 3-5,
  L1 distances), ``holdout`` (Fig. 2, mean/variance at held-out inputs);
- :mod:`~explorer.cli.serve`: ``datasets`` (what can be loaded) and ``serve`` (the interactive dashboard,
  ``explorer.app``);
- :mod:`~explorer.cli.svm_bootstrap` ([MO03b]): ``svm-curve`` (Fig. 1: hard-margin SVM bootstrap
  classification error, theory vs MC);
- :mod:`~explorer.cli.model_selection` ([Fis16]): ``select`` (GP hyperparameters under each model-selection
  criterion) and ``select-experiment`` (the thesis experiments at small repetition counts);
- :mod:`~explorer.cli.fast_bootstrap` ([LSWV05]): ``fast-bootstrap`` (full vs fast bootstrap model-structure
  selection, with the replica optimism for the LS-SVM).

:mod:`~explorer.cli.common` holds the shared option parsers, the progress line, JSON output and exit codes
(0 success, 2 a user error with a message, 3 the theory did not converge). Every count, size and tolerance has a
lower and an upper bound, checked by its option's type before any work starts (a usage error: one line, exit 2).
``explorer --version`` prints ``explorer`` and :data:`explorer.__version__` (the one place the version is written).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from explorer import __version__
from explorer.cli import fast_bootstrap, gp_bootstrap, model_selection, serve, svm_bootstrap
from explorer.cli.common import OneLineParser
from explorer.runtime.engine import use_single_threaded_blas

__all__ = ["build_parser", "main", "run"]

#: Command modules, in the order their commands are listed by ``explorer --help``.
COMMAND_MODULES = (gp_bootstrap, serve, svm_bootstrap, model_selection, fast_bootstrap)


def build_parser() -> argparse.ArgumentParser:
    """The ``explorer`` parser with every command registered by its module (a usage error is one line)."""
    parser = OneLineParser(
        prog="explorer",
        description="Resampling Explorer: analytical (replica/ADATAP) bootstrap averages vs Monte-Carlo.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the command and return its exit code."""
    args = build_parser().parse_args(argv)
    return args.handler(args)


def run() -> int:
    """The installed ``explorer`` command (and ``python -m explorer.cli``): ``serve`` under the C library's
    allocator (:func:`explorer.cli.serve.restart_under_c_allocator`), one BLAS thread per process (see
    explorer.runtime.engine), then main."""
    serve.restart_under_c_allocator(sys.argv)
    use_single_threaded_blas()
    return main()


if __name__ == "__main__":
    sys.exit(run())
