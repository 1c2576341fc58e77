"""What a maximum-evidence fit of :mod:`explorer.gp_bootstrap.evidence` returns: the exact GP's
(:class:`EvidenceFit`) and the Nyström GP's (:class:`LowRankEvidenceFit`), each with the kernel it chose and the record
the outputs print. Core module: numpy only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explorer.kernels import SquaredExponential
from explorer.lowrank import LowRankFeatures, nystrom_features

__all__ = ["EvidenceFit", "LowRankEvidenceFit"]


@dataclass(frozen=True, eq=False)
class EvidenceFit:
    """The squared-exponential GP hyperparameters of largest evidence on some data.

    Attributes
    ----------
    lengthscale : float, or ndarray of shape (d,) with ``ard``
        ℓ (or ℓ_1..ℓ_d) at the maximum.
    signal_var, noise_var : float
        σ_f² and σ² at the maximum.
    log_evidence : float
        log p(y | X) there (R&W eq. 2.30).
    n : int
        Number of rows the evidence was maximised on.
    n_evaluations : int
        Evidence evaluations over all runs.
    converged : bool
        Whether the best run met L-BFGS-B's tolerance.
    at_noise_floor : bool
        Whether σ² stopped at its lower bound ``NOISE_FLOOR`` · var(y) (a nearly noise-free target).
    ard : bool
        Whether each input column has its own lengthscale.
    n_data : int or None
        Rows of the data the ``n`` rows were drawn from (:func:`fit_to_data`); None when the fit saw the data it was
        given.
    seed : int or None
        Seed of that draw (None without one).
    """

    lengthscale: float | np.ndarray
    signal_var: float
    noise_var: float
    log_evidence: float
    n: int
    n_evaluations: int
    converged: bool
    at_noise_floor: bool = False
    ard: bool = False
    n_data: int | None = None
    seed: int | None = None

    @property
    def kernel(self) -> SquaredExponential:
        """The fitted covariance k, a :class:`~explorer.kernels.SquaredExponential`."""
        return SquaredExponential(self.lengthscale, self.signal_var)

    @property
    def note(self) -> str:
        """How the values were chosen, in a few words ("maximum evidence on 300 of 3,000 rows drawn at random,
        seed 0")."""
        which = "ℓ_1..ℓ_d (ARD)" if self.ard else "ℓ"
        rows = (f"all {self.n:,} rows" if self.n_data is None or self.n_data == self.n else
                f"{self.n:,} of {self.n_data:,} rows drawn at random, seed {self.seed}")
        floor = "; σ² at its lower bound" if self.at_noise_floor else ""
        return f"{which}, σ_f², σ² by maximum evidence on {rows}{floor}"

    def as_dict(self) -> dict:
        """The fit for JSON: every attribute (``lengthscale`` a list with ``ard``) and ``note``."""
        ell = np.asarray(self.lengthscale).tolist()
        return {"lengthscale": ell, "signal_var": self.signal_var, "noise_var": self.noise_var,
                "log_evidence": self.log_evidence, "rows": self.n, "of_rows": self.n_data, "seed": self.seed,
                "ard": self.ard, "n_evaluations": self.n_evaluations, "converged": self.converged,
                "at_noise_floor": self.at_noise_floor, "note": self.note}


@dataclass(frozen=True, eq=False)
class LowRankEvidenceFit:
    """The squared-exponential hyperparameters of largest evidence of a rank-m Nyström GP.

    Attributes
    ----------
    lengthscale : float, or ndarray of shape (d,) with ``ard=True``
        ℓ (or ℓ_j) at the maximum.
    signal_var, noise_var : float
        σ_f² and σ² at the maximum.
    log_evidence : float
        log p(y | X) of the rank-m Nyström GP there, on all ``n`` rows.
    landmarks : ndarray of int, shape (m,)
        The landmark rows (0-based, sorted), fixed during the optimisation.
    rank : int
        m.
    n : int
        Rows of the data.
    n_fit : int
        Rows the optimiser saw (``n``, or ``max_rows`` of them drawn at random).
    n_iter, n_evaluations : int
        L-BFGS-B iterations and evidence evaluations (value and gradient together).
    converged : bool
        Whether L-BFGS-B met its tolerance.
    at_noise_floor : bool
        Whether σ² stopped at its lower bound ``NOISE_FLOOR`` · var(y).
    note : str
        One line: what was fitted, how and on which rows.
    """

    lengthscale: float | np.ndarray
    signal_var: float
    noise_var: float
    log_evidence: float
    landmarks: np.ndarray = field(repr=False)
    rank: int
    n: int
    n_fit: int
    n_iter: int
    n_evaluations: int
    converged: bool
    at_noise_floor: bool
    note: str

    @property
    def kernel(self) -> SquaredExponential:
        """The fitted covariance k, a :class:`~explorer.kernels.SquaredExponential`."""
        return SquaredExponential(self.lengthscale, self.signal_var)

    def features(self, X) -> LowRankFeatures:
        """The fitted Nyström features Φ on the inputs ``X`` of the fit (shape (n, d)), same landmarks."""
        return nystrom_features(self.kernel, X, self.rank, landmarks=self.landmarks)
