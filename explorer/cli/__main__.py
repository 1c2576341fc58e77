"""``python -m explorer.cli``: the same as the ``explorer`` command."""
import sys

from explorer.cli import run

sys.exit(run())
