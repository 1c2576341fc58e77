"""The tree passes ``ruff check`` with the rules of ``pyproject.toml`` (pyflakes, pycodestyle, import order,
pyupgrade): the README's test command, and so CI, runs the linter."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert "No module named ruff" not in done.stderr, "ruff is a test dependency: pip install -e '.[test]'"
    assert done.returncode == 0, done.stdout + done.stderr
