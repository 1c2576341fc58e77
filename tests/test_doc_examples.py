"""Every fenced example of README.md and docs/ runs as written (issue 52).

A page's ``python`` and ``bash`` blocks run in the order of the page, in one temporary folder (so a file one block
writes, another reads): the Python blocks in one namespace, the shell blocks through ``bash`` with the installed
``explorer`` first on the PATH. A ``text`` block marked ``<!-- output -->`` just above its fence is the output of
the example before it: the test compares the text and every number to the digits printed (within one unit of the
last digit printed, so another BLAS may round the other way); ``...`` stands for any text, and a number followed by
a time unit (``12.5 ms``, ``3 s``, ``2 min``) for any number.

Marks, an HTML comment just above a fence (invisible on the page, whose text says the same in words):

- ``<!-- not run: server -->`` or ``<!-- not run: install -->``: the only examples the tests do not run;
- ``<!-- slow -->``: an example over 10 s on a 2-core machine (the page says how long, and how to make it shorter):
  it runs with ``pytest -m slow tests/test_doc_examples.py`` (its own line in .ci/run), with the page's other
  examples; the default run runs the page without it.

This is a small collector of our own: Sybil and pytest-markdown-docs run Python blocks but not command lines with
their output, nor our order-and-folder rule for both.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted(p for p in (ROOT / "docs").rglob("*.md")
                                      if "_build" not in p.parts and "notebooks" not in p.parts)
FENCE = re.compile(r"^(`{3,})(\w*)[^\n]*$")
MARK = re.compile(r"^<!--\s*(output|slow|not run: (?:server|install))\s*-->$")
NUMBER = r"[-+−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
TIME_UNIT = re.compile(r"\s*(?:ms|s|min)\b")
#: Every example the pages hold that the tests do not run is one of these (servers and installs).
NOT_RUN_WORDS = ("serve", "pip install", "venv", "jupyter lab", "dask scheduler", "dask worker", "python -m build")


@dataclass
class Block:
    page: Path
    line: int
    language: str
    code: str
    mark: str | None
    output: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def page_blocks(page: Path) -> list[Block]:
    """The fenced ``python``, ``bash`` and marked ``text`` blocks of ``page``, outputs attached to their example."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        ticks, language = fence.group(1), fence.group(2)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith(ticks) and not lines[j].strip("`"))
        above = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mark = MARK.match(above)
        mark = mark.group(1) if mark else None
        code = "\n".join(lines[i + 1:end]) + "\n"
        if mark == "output":
            assert blocks and blocks[-1].output is None, f"{page}:{i + 1}: an output with no example above it"
            blocks[-1].output = code
        elif language in ("python", "bash"):
            blocks.append(Block(page, i + 1, language, code, mark))
        i = end + 1
    return blocks


def _expected_pattern(expected: str) -> tuple[str, list[str | None]]:
    """A regex matching the printed text, with one group per number, and the number's text (None: a time)."""
    pattern, numbers = [], []
    tokens = re.split(rf"({NUMBER}|\.\.\.|…)", expected.strip())
    for k, token in enumerate(tokens):
        if k % 2 == 0:  # text: its words, with whitespace wherever the page has some (any amount of it)
            words = r"\s+".join(re.escape(word) for word in token.split())
            lead = r"\s+" if token[:1].isspace() else ""
            trail = r"\s+" if token[-1:].isspace() and words else ""
            pattern.append(lead + words + trail if words or not token else r"\s+")
        elif token in ("...", "…"):
            pattern.append(r".*?")
        else:
            is_time = bool(TIME_UNIT.match(tokens[k + 1])) if k + 1 < len(tokens) else False
            pattern.append(rf"({NUMBER})")
            numbers.append(None if is_time else token)
    return "".join(pattern), numbers


def _number(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-"))


def compare_output(expected: str, actual: str, where: str) -> None:
    """``actual`` reads as ``expected``: the same text (spaces aside) and every number to the digits printed."""
    pattern, numbers = _expected_pattern(expected)
    match = re.fullmatch(re.sub(r"(?:\\s\+)+", r"\\s+", pattern), actual.strip(), re.S)
    assert match, f"{where}: the output does not read as the page says.\n--- page:\n{expected}\n--- printed:\n{actual}"
    for shown, got in zip(numbers, match.groups()):
        if shown is None:
            continue
        mantissa = re.split("[eE]", shown)[0]
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        scale = 10.0 ** int(re.split("[eE]", shown)[1]) if re.search("[eE]", shown) else 1.0
        unit = 10.0 ** -decimals * scale
        if "." not in mantissa and not re.search("[eE]", shown):
            assert _number(got) == _number(shown), f"{where}: printed {got}, the page says {shown}"
        else:
            assert abs(_number(got) - _number(shown)) <= unit * (1 + 1e-9), \
                f"{where}: printed {got}, the page says {shown} (to its {decimals} decimals)"


def run_page(page: Path, folder: Path, *, slow: bool) -> int:
    """Run the page's examples in order in ``folder`` (the slow ones too if ``slow``); the number run."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "EXPLORER_WARM_UP": "0"}
    ran = 0
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        for block in page_blocks(page):
            if block.mark and block.mark.startswith("not run") or block.mark == "slow" and not slow:
                continue
            if block.language == "python":
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    exec(compile(block.code, block.where, "exec"), namespace)
                printed = out.getvalue()
            else:
                done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.code], cwd=folder, env=env,
                                      capture_output=True, text=True, timeout=3600)
                assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{done.stderr[-3000:]}"
                printed = done.stdout
            if block.output is not None:
                compare_output(block.output, printed, block.where)
            ran += 1
    finally:
        os.chdir(cwd)
    return ran


def _has(page: Path, mark: str) -> bool:
    return any(block.mark == mark for block in page_blocks(page))


def _id(page: Path) -> str:
    return str(page.relative_to(ROOT))


EXAMPLE_PAGES = [p for p in PAGES if any(not (b.mark or "").startswith("not run") for b in page_blocks(p))]


@pytest.mark.parametrize("page", EXAMPLE_PAGES, ids=_id)
def test_the_examples_of_a_page_run_as_written(page, tmp_path, one_blas_thread):
    if all(block.mark == "slow" for block in page_blocks(page) if not (block.mark or "").startswith("not run")):
        pytest.skip("every example of this page is slow: pytest -m slow")
    assert run_page(page, tmp_path, slow=False) >= 1


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in EXAMPLE_PAGES if _has(p, "slow")], ids=_id)
def test_the_examples_of_a_page_run_as_written_with_the_slow_ones(page, tmp_path, one_blas_thread):
    assert run_page(page, tmp_path, slow=True) >= 1


def test_only_servers_and_installs_are_not_run_and_the_pages_say_so():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in page_blocks(page):
            if (block.mark or "").startswith("not run"):
                assert any(word in block.code for word in NOT_RUN_WORDS), f"{block.where}: not run, yet no server or install"
        if any((b.mark or "").startswith("not run") for b in page_blocks(page)):
            assert "not run by the tests" in text, f"{_id(page)}: say on the page which examples are not run"


def test_every_example_is_a_python_or_bash_block_or_an_output():
    """A fence of another language would escape the tests: only python, bash, text (outputs, formulas, layouts) and
    MyST directives."""
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            fence = FENCE.match(line)
            if fence and fence.group(2) and not line.startswith(fence.group(1) + "{"):
                assert fence.group(2) in ("python", "bash", "text"), f"{_id(page)}:{number}: {line}"


def test_slow_examples_say_how_long_they_take():
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        for block in page_blocks(page):
            if block.mark == "slow":
                near = " ".join(lines[max(0, block.line - 8):block.line + block.code.count("\n") + 8])
                assert re.search(r"\d\s*(?:s|min|minutes|seconds)\b", near), f"{block.where}: slow, but how long?"


def test_the_output_comparison_fails_on_other_digits():
    compare_output("eps = 16.24 (0.5 s)", "eps = 16.2413 (12.1 s)", "t")
    compare_output("a ... b 3", "a anything b 3", "t")
    for expected, actual in (("eps = 16.24", "eps = 16.27"), ("n = 506", "n = 505"), ("x", "y")):
        with pytest.raises(AssertionError):
            compare_output(expected, actual, "t")


def test_the_glossary_page_is_the_app_s_glossary():
    """docs/user_guide/glossary.md is generated from the app's glossary (docs/conf.py rewrites it at each build);
    the committed page is that text, so the repository's reader sees it too."""
    pytest.importorskip("panel")
    from explorer.views.pages import GLOSSARY, glossary_page

    page = (ROOT / "docs" / "user_guide" / "glossary.md").read_text(encoding="utf-8")
    assert page == glossary_page(), "run the docs build (or docs/conf.py's _write_glossary) and commit the page"
    assert all(f"**{entry.term}**" in page for entry in GLOSSARY)
