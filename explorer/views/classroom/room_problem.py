"""What a class room draws: the step-by-step page's problem at its settings (:class:`StepState`) as a
:class:`~explorer.gp_bootstrap.class_draws.ClassProblem`, and back from the settings a room keeps."""

from __future__ import annotations

from collections.abc import Mapping

from explorer.gp_bootstrap.class_draws import ClassProblem
from explorer.runtime.rooms import RoomError
from explorer.views.step_by_step.state import StepState

__all__ = ["SETTINGS", "class_problem", "problem_at", "settings_words"]

#: The step-by-step settings a room's round is drawn at (the page's controls that change the problem, and point i).
SETTINGS = ("dataset", "n_points", "kernel", "lengthscale", "signal_var", "alpha", "period", "noise_var", "s_over_n",
            "input_index")


def class_problem(state: StepState) -> ClassProblem:
    """The problem ``state`` shows (its data, kernel, σ², S/N and point i), for a room.

    Raises
    ------
    RoomError
        If the state has no problem (its settings failed: the page says why).
    """
    p, sol = state.problem, state.solution
    if p is None or sol is None:
        raise RoomError(state.error or "The page has no problem to draw yet: wait for its figures, then try again.")
    grid = state.grid
    settings = tuple((name, getattr(state, name)) for name in SETTINGS)
    return ClassProblem(p.K, p.y, float(p.noise_var), float(state.s_over_n), state.index, sol, p.X[:, 0], grid,
                        p.kernel(grid[:, None], p.X), settings)


def problem_at(settings: Mapping[str, object]) -> ClassProblem:
    """The problem at the step-by-step ``settings`` (names of :data:`SETTINGS`); computes the ADATAP solution
    (~0.1 s for N = 30).

    Raises
    ------
    RoomError
        If the settings give no problem (the page's sentence why).
    """
    state = StepState(**{name: value for name, value in settings.items() if name in SETTINGS})
    state.refresh()  # the problem and the ADATAP solution at these settings (no background job is started)
    state.wait(60)
    return class_problem(state)


def settings_words(problem: ClassProblem) -> str:
    """The round's settings in a line: "toy data, N = 30, se kernel (ℓ = 0.1), σ² = 0.1, S/N = 1.00, point i = 3"."""
    s = dict(problem.settings)
    return (f"{s.get('dataset')} data, N = {problem.n}, {s.get('kernel')} kernel (ℓ = {s.get('lengthscale'):g}), "
            f"σ² = {problem.noise_var:g}, S/N = {problem.s_over_n:.2f}, point i = {problem.index}")
