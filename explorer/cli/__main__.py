"""``python -m explorer.cli``: the same as the ``explorer`` command."""
import sys

from explorer.cli import run

if __name__ == "__main__":  # not when a Dask worker process (spawned) imports the parent's main module
    sys.exit(run())
