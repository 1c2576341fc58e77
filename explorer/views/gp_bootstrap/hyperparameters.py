"""Where the kernel's values of the Gaussian-process pages come from: the controls as set (by hand, a link or a
preset), or the evidence maximum of a CSV's (or diamonds') data, chosen by a background job and then applied; a kernel
switched by hand starts from the data's scale.

:class:`Hyperparameters` is a component of :class:`~explorer.views.gp_bootstrap.state.GPBootstrapState`: it watches the
state's controls and its ``evidence`` job and holds whether the evidence maximum is pending, applied, and its
lengthscales per input (ARD).
"""

from __future__ import annotations

import numpy as np
import param

from explorer.gp_bootstrap import evidence as gp_evidence
from explorer.views.common.state.declarations import invalidating
from explorer.views.gp_bootstrap import cluster
from explorer.views.gp_bootstrap.jobs import EVIDENCE
from explorer.views.gp_bootstrap.problems_of_settings import check_rank_rows
from explorer.views.gp_bootstrap.settings import EXPECTED_ERRORS, OUTPUTS, SUBSAMPLE_SEED

__all__ = ["Hyperparameters"]


class Hyperparameters:
    """The source of the kernel's values of one GP state (``state``); ``pending`` until the evidence maximum the
    data start from is applied."""

    def __init__(self, state, pending: bool):
        self.state = state
        self.pending = pending          # the data start from their evidence maximum, not known or applied yet
        self.applying = False          # the evidence maximum is being written into the controls
        self.from_evidence = False     # the controls hold the evidence maximum
        self.ard: np.ndarray | None = None  # ℓ_j of the ARD evidence maximum, once applied

    @property
    def source(self) -> str:
        """``"set"``, ``"evidence"`` or ``"evidence pending"`` (the state's ``HYPERPARAMETERS``)."""
        if self.pending:
            return "evidence pending"
        return "evidence" if self.from_evidence else "set"

    def lengthscales(self) -> np.ndarray | None:
        """ℓ_1..ℓ_d while ``ard`` is ticked for data that start from their evidence, with the se kernel, once the
        maximum is known; None otherwise."""
        if self.ard is None or not self.wants_ard() or self.state.kernel != "se":
            return None
        return self.ard

    def wants_ard(self) -> bool:
        """Whether the evidence is maximised with one lengthscale per input: ``ard`` ticked for data that start from
        their evidence (the maximum is always an se kernel)."""
        return bool(self.state.ard) and self.state.data.fits_evidence()

    def fitted(self, fit) -> dict:
        """The values the evidence maximum ``fit`` holds for the numbers among the controls of the kernel's and the
        noise's values (those declared to make the hyperparameters stale): ℓ (one per input with ARD), σ_f² and σ²,
        by name (the fit's ``kernel`` is its kernel function, not a name)."""
        s = self.state
        names = [n for n in invalidating(s, "hyperparameters") if isinstance(s.param[n], param.Number)]
        return {name: getattr(fit, name) for name in names if hasattr(fit, name)}

    def linked(self, names: set[str]) -> None:
        """A link or a preset set ``names``: hyperparameters among them stay (no evidence search replaces them)."""
        if names & set(invalidating(self.state, "hyperparameters")):
            self.pending = False

    def on_kernel(self, *events) -> None:
        """A switch to a kernel other than ``paper`` starts from the data's scale, unless the same change sets ℓ
        or σ_f² (a link, a preset); the notice says where the values come from."""
        s = self.state
        names = {event.name for event in events}
        if names != {"kernel"} or s.kernel == "paper" or s.__dict__.get("_linking"):
            if "kernel" in names:
                s.tell("kernel")
            return
        try:
            start = s.data_driven_start()
        except EXPECTED_ERRORS:
            return  # the refresh that follows says what is wrong with the data
        s.param.update(lengthscale=start.lengthscale, signal_var=start.signal_var)
        s.tell("kernel", f"Kernel {s.kernel}: started from the data's scale, lengthscale ℓ = {s.lengthscale:g} "
                         f"(median distance between inputs) and signal variance σ_f² = {s.signal_var:g} (variance "
                         "of the target).")

    def on_data(self, *events) -> None:
        """New data (file, target, scaling, subsample) that start from their evidence maximum wait for it."""
        self.from_evidence = False
        if self.state.data.fits_evidence():
            self.pending = True
        else:
            self.pending = False
            self.state.tell("evidence")

    def on_hyperparameter(self, *events) -> None:
        """Hyperparameters set by hand, a link or a preset replace those of the evidence maximum."""
        if not self.applying:
            self.pending = self.from_evidence = False
            self.state.tell("evidence")

    def on_evidence(self, event) -> None:
        if event.new is not None and self.pending:
            self.state.refresh()  # the job's result: apply it and compute

    def on_evidence_error(self, event) -> None:
        if event.new and self.pending:
            self.pending = False
            self.state.tell("evidence", f"The hyperparameters could not be chosen by maximum evidence ({event.new}); "
                                        "the kernel keeps its values: set them by hand or pick the paper preset.")
            self.state.refresh()

    def choose(self) -> tuple | None:
        """Apply the evidence maximum of the current data if it is known (None); else show nothing meanwhile and
        return what the job that computes it reads: its key, the data, ARD and the rank (large data)."""
        s = self.state
        data = s.data.load()  # rows checked before the job
        rank = int(s.rank) if s.data.large() else None
        if rank is not None:
            check_rank_rows(rank, data.n)  # the rule of the problem itself: refused, not clipped
        key = (s.data.key(), self.wants_ard(), rank)
        fit = EVIDENCE.get(key)
        if fit is None:
            for name in OUTPUTS:
                s._assign(name, None)
            what = "one lengthscale per input (ARD) and the other hyperparameters" if key[1] else \
                "the kernel's hyperparameters"
            on = "your data" if s.data.is_csv() else f"{data.name}"
            fitted = cluster.evidence_rows(data).n if rank is not None else data.n  # a subsample above 60,000 rows
            rows = f"all {data.n:,} rows" if fitted == data.n else f"a random {fitted:,} of its {data.n:,} rows"
            how = "" if rank is None else (f" (the low-rank GP of rank m = {rank} on {rows}; about 20 s at 53,940 "
                                           "rows)")
            s.tell("evidence", f"Choosing {what} by maximum evidence on {on}{how}…")
            return key, data, key[1], rank
        self.apply(fit, data.n, data.feature_names)
        return None

    def apply(self, fit, rows: int, names: tuple[str, ...] = ()) -> None:
        """Write the evidence maximum ``fit`` of ``rows`` rows into the controls (se kernel) and say so."""
        s = self.state
        ard = np.ndim(fit.lengthscale) > 0
        self.ard = np.asarray(fit.lengthscale, dtype=float) if ard else None
        # ARD: the control shows the geometric mean of the ℓ_j (the kernel uses each ℓ_j; the note lists them)
        ell = float(np.exp(np.mean(np.log(fit.lengthscale)))) if ard else float(fit.lengthscale)
        values = {**self.fitted(fit), "lengthscale": ell}
        clipped = {name: float(np.clip(v, *s.param[name].bounds)) for name, v in values.items()}
        self.pending, self.applying = False, True
        try:
            s.param.update(kernel="se", **clipped)
        finally:
            self.applying = False
        self.from_evidence = True
        note = _evidence_note(s, fit, rows, clipped != values)
        ells = self.lengthscales()
        s.tell("evidence", note if ells is None else note + _ard_sentence(names, ells))


def _ard_sentence(names: tuple[str, ...], lengthscales: np.ndarray) -> str:
    """The ℓ_j of each input, shortest (the input that matters most) first."""
    order = np.argsort(lengthscales)
    listed = ", ".join(f"{names[j]} {lengthscales[j]:.3g}" for j in order)
    return (f" ℓ_j per input, shortest first: {listed}; a short ℓ_j means the prediction follows input j closely, a "
            "long one that it hardly depends on it.")


def _evidence_note(state, fit, rows: int, clipped: bool) -> str:
    """What the notice says about hyperparameters chosen by maximum evidence."""
    if isinstance(fit, gp_evidence.LowRankEvidenceFit):
        which = f"all {rows:,} rows" if fit.n == rows else f"a random subsample of {fit.n:,} of the {rows:,} rows"
        on = (f"{which}, for the low-rank kernel of rank m = {fit.rank} (Nyström landmarks drawn with seed "
              f"{SUBSAMPLE_SEED}; a new m keeps these values)")
    else:
        on = "your data" if fit.n == rows else (f"a random subsample of {fit.n} of your {rows:,} rows "
                                                f"(seed {SUBSAMPLE_SEED})")
    ell = f"ℓ = {state.lengthscale:g}" if state.ard_lengthscales is None else "one ℓ_j per input (ARD)"
    text = (f"Kernel se, {ell}, σ_f² = {state.signal_var:g}, σ² = {state.noise_var:g} chosen by "
            f"maximum evidence on {on} (log evidence {fit.log_evidence:.1f}); pick the paper preset to use the "
            "paper's values.")
    if fit.at_noise_floor:
        text += (f" σ² stopped at its lower bound {gp_evidence.NOISE_FLOOR:g} × var(target): the target looks nearly "
                 "noise-free, and the theory needs some noise.")
    return text + (" Some values were clipped to the range of their control." if clipped else "")

