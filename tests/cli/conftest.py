"""The fuzz harness's counts (tests/cli/test_fuzz.py) in the terminal summary, to quote them."""
import sys


def pytest_terminal_summary(terminalreporter):
    fuzz = sys.modules.get("tests.cli.test_fuzz")
    if fuzz is None or not fuzz.COUNTS:
        return
    terminalreporter.section("CLI fuzz counts")
    for kind in ("parse", "run"):
        codes = {code: n for (k, code), n in sorted(fuzz.COUNTS.items()) if k == kind}
        if codes:
            total = sum(codes.values())
            terminalreporter.write_line(f"{kind}: {total} calls; " + ", ".join(f"exit {code}: {n}"
                                                                             for code, n in codes.items()))
    if fuzz.DURATION["run"]:
        terminalreporter.write_line(f"run: {fuzz.DURATION['run']:.1f} s in subprocesses")
