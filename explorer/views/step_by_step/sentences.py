"""What the step-by-step page says under its figures, in plain words first and the paper's symbols second: what a
bootstrap sample is, what has been drawn and, once it is clear, why the theories and Efron's estimate differ.

Plain functions of a :class:`~explorer.views.step_by_step.state.StepState` (it reads the state, changes nothing);
the state's :meth:`~explorer.views.step_by_step.state.StepState.sentence` calls :func:`sentence`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from explorer.views.step_by_step.state import StepState

__all__ = ["CLEAR_GAP_SE", "MIN_RESAMPLES_TO_COMPARE", "sentence", "comparison_sentence", "kept_sentence"]

#: A theory and Efron's estimate differ clearly when they are more than this many standard errors apart.
CLEAR_GAP_SE = 2.0
#: Resamples after which the sentence compares the theory with Efron's estimate (fewer: the estimate still moves).
MIN_RESAMPLES_TO_COMPARE = 100


def sentence(state: StepState, kept_before: bool) -> str:
    """What a bootstrap sample is, what has been drawn and, once it is clear, why the theories and Efron's
    estimate differ; ``kept_before``: resamples of earlier settings are kept (said while none is drawn)."""
    n = state.problem.n if state.problem is not None else state.n_points
    v = float(state.s_over_n)
    text = (f"A bootstrap sample (a resample) draws S = {v * n:.3g} points on average at random, with "
            f"replacement, from the N = {n} data points (bootstrap size S/N = {v:.2f}): a point can come several "
            f"times (its count s_i) or not at all, and about N·e^(−S/N) ≈ {state.expected_left_out:.1f} points "
            "are left out of each resample.")
    if state.drawing >= 100:
        text += f" Drawing {state.drawing:,} more resamples…"
    if state.n_drawn == 0:
        text += "" if state.drawing else " No resample drawn yet: press Draw, then click a point."
        return text + kept_sentence(state.kept_s_over_n(), kept_before)
    out = int(np.count_nonzero(state.occupations[-1] == 0))
    text += (f" {_resamples(state.n_drawn)}; the last left out {out} "
             f"{'point' if out == 1 else 'points'} (N·e^(−S/N) ≈ {state.expected_left_out:.0f}).")
    return text + comparison_sentence(state)


def kept_sentence(kept: dict[float, int], kept_before: bool) -> str:
    """Where the resamples drawn before are: ``kept`` those at other S/N values ({S/N: number}), ``kept_before``
    whether any of earlier settings are kept ("" when none)."""
    if kept:
        shown = ", ".join(f"{_resamples(b)} at S/N = {value:.2f}" for value, b in kept.items())
        return f" The resamples drawn before are kept ({shown}): set S/N back to see them again."
    if kept_before:
        return " The resamples drawn at earlier settings are kept: going back to them shows them again."
    return ""


def comparison_sentence(state: StepState) -> str:
    """Why ADATAP and Efron's estimate differ, once they differ clearly (more than :data:`CLEAR_GAP_SE`
    standard errors after at least :data:`MIN_RESAMPLES_TO_COMPARE` resamples), and why the approximate
    ADATAP then lands nearer when it does ("" otherwise).

    ADATAP approximates the effect of the other points on point i by a Gaussian ([MO03], eqs. 20-21), an
    approximation that improves as N grows. The approximate ADATAP ([MO03] §5) takes one Δλ for every point
    (the start value of App. A.2) instead of iterating eqs. (54)-(55): where it lands nearer, its own shift
    from ADATAP offsets ADATAP's error (the two numbers are printed)."""
    theory, r = state.theory, state.running
    if state.n_drawn < MIN_RESAMPLES_TO_COMPARE or not theory or not r.value.size:
        return ""
    efron, se = float(r.value[-1]), float(r.se[-1])
    adatap, approx = theory["ADATAP"], theory["approx. ADATAP"]
    if not (np.isfinite(efron) and np.isfinite(se)) or abs(adatap - efron) <= CLEAR_GAP_SE * se:
        return ""
    text = (f" Efron's estimate from these resamples ({efron:.3f} ± {se:.3f}) and the ADATAP theory "
            f"({adatap:.3f}) differ by more than {CLEAR_GAP_SE:g} standard errors: the theory never draws a "
            "resample, it replaces the pull of the other points on each point by a bell-shaped (Gaussian) "
            f"average ([MO03], eq. 21), an approximation that gets better as N grows; with N = "
            f"{state.problem.n} points it is off by {_signed(adatap - efron)}.")
    shift, error = approx - adatap, adatap - efron
    if abs(approx - efron) < abs(error) and shift * error < 0:
        text += (f" The approximate ADATAP ({approx:.3f}) is a cheaper shortcut, not a better theory: it uses "
                 "one shared value for all points instead of solving the theory's equations point by point "
                 f"([MO03] §5, App. A.2); it lands nearer here only because its own shift from ADATAP "
                 f"({_signed(shift)}) goes the other way from ADATAP's error ({_signed(error)}).")
    return text


def _resamples(n: int) -> str:
    """"1 resample", "1,111 resamples"."""
    return "1 resample" if n == 1 else f"{n:,} resamples"


def _signed(value: float) -> str:
    """"+0.051", "−0.034" (a minus sign, not a hyphen)."""
    return f"{value:+.3f}".replace("-", "−")
