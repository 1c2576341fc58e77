"""Replica/ADATAP theory of bootstrap averages for the hard-margin SVM ([MO03b], eqs. 14-23, appendix).

The replica trick maps the bootstrap average to an effective model whose ADATAP (expectation-propagation)
treatment has, per site i, a Gaussian "tilted" likelihood with parameters Δλ(i), γ(i), λ(i) and a
Gaussian cavity field with parameters Δλ_c(i), γ_c(i), λ_c(i), after the replica limit n → 0 and the SVM
limit β → ∞ (eq. 15). The cavity field f_c ~ N(m^c, V^c), m^c = γ_c/Δλ_c, V^c = −λ_c/Δλ_c², is the
internal field at input i over the bootstrap samples that do not contain i (eq. 18).

The equations (the appendix written out in ``docs/derivations/svm_replica.md``, re-derived here):

* local side, eq. (21): with probability 1 − p the site is absent and its field is the cavity field;
  with probability p = 1 − e^(−kS/N) it is present (k = number of data rows at this input) and the field
  is clipped, y f = max(y f_c, 1). With Δ = (1 − y m^c)/√V^c and a = 1 − pΦ(Δ)::

      χ = χ^c a,   m = m^c a + y p (Φ(Δ) + √V^c φ(Δ)),   V = V^c a + (1 − y m)(y m − y m^c);

* Gaussian side, eqs. (22)-(23): G = (K⁻¹ + diag Δλ)⁻¹, χ_ii = G_ii, m = G γ, V_ii = −(G diag λ G)_ii,
  and χ = 1/(Δλ + Δλ_c), m = (γ + γ_c)χ, V = −(λ + λ_c)χ².

Matching the two sides gives the site parameters in closed form (no cancellation, Δλ ≥ 0 always)::

    Δλ = Δλ_c pΦ(Δ)/a,   γ = Δλ_c y p (Φ(Δ) + √V^c φ(Δ))/a,
    λ = −Δλ_c² (V^c pΦ(Δ)/a + (1 − y m)(y m − y m^c)/a²).

Solving: updating all sites at once (``method="parallel"``) is the plain fixed-point iteration of the
paper; with broad kernels it fails at some S even with the automatic damping (crabs, L = √10: S/N = 0.25
and most S/N > 2; wisconsin: S/N > 2). The default ``method="sequential"`` updates one site at a time as
in expectation propagation, changing G by a rank-one update (BLAS ``dsyr``) and refactorising G every few
sweeps; from the paper's start values it converges in 16-30 sweeps for S/N = 0.25-4 on crabs and
wisconsin (L = √10) and in 6-16 on pima (L = 1) and sonar (L = 3). Damping (a convex
step in the site parameters) adapts automatically: it shrinks when successive sweeps oscillate (large S)
and is halved, restarting from the best iterate, whenever a sweep doubles the residual.

Convergence is measured by the moment mismatch between the Gaussian marginals (22) and the local moments
(21) of their cavities: χ relative to χ^c, m in units of max(√V^c, √V), V relative to max(V^c, V).
At very large S (S/N ≳ 10) the site precisions Δλ grow like e^(S/N) and the cavities 1/χ − Δλ lose
all accuracy to cancellation: the solver then reports failure; use eq. (20), the S → ∞ limit.

Identical inputs with the same label are merged into one site beforehand (``svm.merge_identical``): k
identical rows form one site with p = 1 − e^(−kS/N). This is an exact rewrite of the replica model (the
Poisson average of k equal likelihoods Θ(y f − 1)^(s_1 + ... + s_k) is that of one likelihood with mean
occupation kS/N), while one site per row makes K singular: on wisconsin (683 rows, 449 inputs, L = √10)
that model converges 3-4 times more slowly up to S/N = 2 and not at all at S/N = 4.
Efron's estimator then weighs each copy by e^(−(k−1)S/N), the probability that none of its twins is drawn.

Symbols in code: ``dl`` = Δλ, ``dl_c`` = Δλ_c, ``gam`` = γ, ``gam_c`` = γ_c, ``lam`` = λ, ``lam_c`` = λ_c,
``chi``, ``m``, ``V`` the matched moments. Core module: numpy and scipy only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike
from scipy import optimize, special

from explorer.bootstrap import replica
from explorer.svm_bootstrap import montecarlo as svm
from explorer.svm_bootstrap.classifier import check_kernel_labels

__all__ = ["ConvergenceError", "SVMReplicaSolution", "InputFields", "LocalMoments", "SiteParameters",
           "local_moments", "site_parameters",
           "initial_delta_lambda", "solve_svm_replica", "svm_replica_learning_curve", "classification_error",
           "field_density", "fields_at", "probability_negative", "loo_limit", "self_consistency_residual"]

METHODS = ("sequential", "parallel")
#: Sweeps between refactorisations of G (the rank-one updates drift by ~1e-14 per sweep).
REFRESH_EVERY = 4
#: Smallest damping step the automatic schedule goes down to before giving up.
MIN_DAMPING = 1.0 / 64
_SQRT2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class ConvergenceError(replica.ConvergenceError):
    """The SVM ADATAP iteration did not converge; ``last`` holds the last iterate (an
    SVMReplicaSolution with ``converged=False``) or None if not even that could be formed."""


@dataclass(frozen=True)
class SVMReplicaSolution(replica.CavityMoments):
    """ADATAP parameters of the SVM replica model at one bootstrap size S ([MO03b], eqs. 21-23).

    All arrays have shape (n_sites,); a site is a distinct training input holding ``counts`` data rows.
    ``chi``, ``m``, ``V`` are the Gaussian-side marginal moments (eq. 22): m_i is the bootstrap mean of the
    internal field at input i, V_ii its bootstrap variance. ``residual`` is the largest moment mismatch
    between the Gaussian marginals and the local moments (21) of their cavities (module docstring,
    ``self_consistency_residual``); ``n_iter`` counts sweeps; ``damping`` is the step of the last sweep.
    """

    S: float
    y: np.ndarray
    counts: np.ndarray
    dl: np.ndarray
    gam: np.ndarray
    lam: np.ndarray
    dl_c: np.ndarray
    gam_c: np.ndarray
    lam_c: np.ndarray
    chi: np.ndarray
    m: np.ndarray
    V: np.ndarray
    converged: bool
    n_iter: int
    residual: float
    tol: float
    method: str
    damping: float

    @property
    def n_sites(self) -> int:
        return self.y.size

    @property
    def n_rows(self) -> int:
        """N, the number of data rows (the bootstrap draws S of them on average)."""
        return int(self.counts.sum())

    @property
    def s_over_n(self) -> float:
        return self.S / self.n_rows

    @property
    def p(self) -> np.ndarray:
        """Probability that site i is in a bootstrap sample, 1 − e^(−k_i S/N)."""
        return -np.expm1(-self.counts * self.s_over_n)

    @property
    def alpha(self) -> np.ndarray:
        """Weights with m = K (y ∘ α): α_j = Δλ_c(j)(y_j m_j − y_j m^c_j) (→ the SVM's α as S → ∞)."""
        return self.dl_c * self.y * (self.m - self.cavity_mean)


# ---------------------------------------------------------------------------------------------
# the local (non-Gaussian) side, eq. (21)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LocalMoments:
    """Eq. (21): moments of the field at a site over bootstrap samples (arrays broadcast together).

    ``a`` = χ/χ^c = 1 − pΦ(Δ), ``m`` the mean and ``V`` the variance of the field, Δ = (1 − y m^c)/√V^c.
    """

    a: np.ndarray
    m: np.ndarray
    V: np.ndarray


@dataclass(frozen=True)
class SiteParameters:
    """Site parameters Δλ (``dl``), γ (``gam``), λ (``lam``) whose Gaussian marginal matches eq. (21)."""

    dl: np.ndarray
    gam: np.ndarray
    lam: np.ndarray


def local_moments(cav_mean: ArrayLike, cav_var: ArrayLike, y: ArrayLike, p: ArrayLike,
                  q: ArrayLike | None = None) -> LocalMoments:
    """Eq. (21): moments of the field when the site is absent (prob. 1 − p) or clipped to y f ≥ 1.

    Parameters
    ----------
    cav_mean : ndarray of shape (n,)
        Cavity mean m^c = γ_c/Δλ_c.
    cav_var : ndarray of shape (n,)
        Cavity variance V^c = −λ_c/Δλ_c² (positive).
    y : ndarray of shape (n,)
        Labels -1 / +1.
    p : ndarray of shape (n,)
        Probability 1 − e^(−kS/N) that the site is in a bootstrap sample.
    q : ndarray of shape (n,), optional
        1 − p, if known more accurately (e^(−kS/N) at large S); default ``1 - p``.

    All arrays broadcast together (scalars are fine).

    Returns
    -------
    LocalMoments
        ``a`` = χ/χ^c = 1 − pΦ(Δ), ``m`` the mean and ``V`` the variance of the field over bootstrap
        samples, Δ = (1 − y m^c)/√V^c; arrays of the broadcast shape.
    """
    mc, Vc, y, p = (np.asarray(v, dtype=float) for v in (cav_mean, cav_var, y, p))
    q = 1.0 - p if q is None else np.asarray(q, dtype=float)
    s = np.sqrt(Vc)
    D = (1.0 - y * mc) / s
    Phi, phi = special.ndtr(D), np.exp(-0.5 * D * D) * _INV_SQRT_2PI
    a = q + p * special.ndtr(-D)  # 1 − pΦ(Δ) without cancellation, eq. (21)
    u = p * s * (D * Phi + phi)  # y m − y m^c ≥ 0
    m = mc + y * u  # = m^c a + y p (Φ + √V^c φ), eq. (21)
    V = Vc * a + (s * D - u) * u  # V^c a + (1 − y m)(y m − y m^c), eq. (21)
    return LocalMoments(a, m, V)


def site_parameters(dl_c: ArrayLike, gam_c: ArrayLike, lam_c: ArrayLike, y: ArrayLike, p: ArrayLike,
                    q: ArrayLike | None = None) -> SiteParameters:
    """Site parameters (Δλ, γ, λ) that make the Gaussian marginal match eq. (21), via eq. (23).

    Closed forms (module docstring): Δλ = Δλ_c pΦ/a, γ = Δλ_c y p (Φ + √V^c φ)/a,
    λ = −Δλ_c² (V^c pΦ/a + (1 − y m)(y m − y m^c)/a²).

    Parameters
    ----------
    dl_c, gam_c, lam_c : ndarray of shape (n,)
        Cavity parameters Δλ_c (> 0), γ_c and λ_c (< 0) of the sites.
    y, p, q
        As in :func:`local_moments`; all arrays broadcast together.

    Returns
    -------
    SiteParameters
        ``dl`` = Δλ (≥ 0), ``gam`` = γ, ``lam`` = λ; arrays of the broadcast shape.
    """
    dl_c, gam_c, lam_c, y, p = (np.asarray(v, dtype=float) for v in (dl_c, gam_c, lam_c, y, p))
    q = 1.0 - p if q is None else np.asarray(q, dtype=float)
    mc, Vc = gam_c / dl_c, -lam_c / dl_c**2
    s = np.sqrt(Vc)
    D = (1.0 - y * mc) / s
    Phi, phi = special.ndtr(D), np.exp(-0.5 * D * D) * _INV_SQRT_2PI
    a = q + p * special.ndtr(-D)
    u = p * s * (D * Phi + phi)
    dl = dl_c * p * Phi / a
    gam = dl_c * y * p * (Phi + s * phi) / a
    lam = -dl_c**2 * (Vc * p * Phi / a + (s * D - u) * u / a**2)
    return SiteParameters(dl, gam, lam)


def _site_parameters_scalar(dl_c: float, gam_c: float, lam_c: float, y: float, p: float, q: float
                            ) -> tuple[float, float, float]:
    """``site_parameters`` for one site with the math module (the inner loop of a sequential sweep)."""
    Vc = -lam_c / (dl_c * dl_c)
    s = math.sqrt(Vc)
    D = (1.0 - y * gam_c / dl_c) / s
    Phi = 0.5 * math.erfc(-D / _SQRT2)
    phi = math.exp(-0.5 * D * D) * _INV_SQRT_2PI
    a = q + p * 0.5 * math.erfc(D / _SQRT2)
    u = p * s * (D * Phi + phi)
    return (dl_c * p * Phi / a, dl_c * y * p * (Phi + s * phi) / a,
            -dl_c * dl_c * (Vc * p * Phi / a + (s * D - u) * u / (a * a)))


# ---------------------------------------------------------------------------------------------
# the Gaussian side, eqs. (22)-(23)
# ---------------------------------------------------------------------------------------------


def _G(K: np.ndarray, dl: np.ndarray) -> np.ndarray:
    """G = (K⁻¹ + D)⁻¹ = K − K D^½ B⁻¹ D^½ K, B = I + D^½ K D^½ (well conditioned; no K⁻¹ needed).

    Returned in Fortran order (the layout BLAS dsyr updates in place).
    """
    if not np.all(np.isfinite(dl)):
        raise FloatingPointError("the site precisions Δλ left the finite numbers")
    r = np.sqrt(dl)
    B = K * r[:, None] * r[None, :]
    B[np.diag_indices_from(B)] += 1.0
    try:
        U = scipy.linalg.cholesky(B, lower=False, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError as err:
        raise np.linalg.LinAlgError("I + D^½ K D^½ is not positive definite: K is not a kernel matrix.") from err
    W = scipy.linalg.solve_triangular(U, r[:, None] * K, trans="T", check_finite=False)  # U⁻ᵀ D^½ K
    G = np.asfortranarray(K - W.T @ W)
    return G


def _marginals(G: np.ndarray, gam: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Eq. (22): χ_ii = G_ii, m = G γ, V_ii = −(G diag λ G)_ii = −Σ_j G_ij² λ_j.

    Reads the upper triangle of G only (BLAS symv), which is what the rank-one updates keep current.
    """
    symv = scipy.linalg.blas.get_blas_funcs("symv", (G,))
    return np.diag(G).copy(), symv(1.0, G, gam, lower=0), -symv(1.0, G * G, lam, lower=0)


def _cavities(chi, m, V, dl, gam, lam):
    """Eq. (23) solved for the cavity parameters: Δλ_c = 1/χ − Δλ, γ_c = m/χ − γ, λ_c = −V/χ² − λ."""
    return 1.0 / chi - dl, m / chi - gam, -V / chi**2 - lam


def _mismatch(chi, m, V, dl_c, gam_c, lam_c, y, pq) -> float:
    """Largest mismatch of Gaussian marginals and local moments (21): χ relative to χ^c, m in units of
    max(√V^c, √V), V relative to max(V^c, V)."""
    valid = (dl_c > 0) & (lam_c < 0)
    if not np.all(valid):
        return math.inf
    Vc = -lam_c / dl_c**2
    local = local_moments(gam_c / dl_c, Vc, y, *pq)
    a, m_loc, V_loc = local.a, local.m, local.V
    scale = np.maximum(Vc, V_loc)  # V^c → 0 at isolated inputs, while V stays ~ p(1 − p)
    r = np.maximum.reduce([np.abs(chi * dl_c - a), np.abs(m - m_loc) / np.sqrt(scale), np.abs(V - V_loc) / scale])
    return float(np.max(r)) if np.all(np.isfinite(r)) else math.inf


# ---------------------------------------------------------------------------------------------
# start values (appendix)
# ---------------------------------------------------------------------------------------------


def initial_delta_lambda(K: ArrayLike, S: float, *, counts: ArrayLike | None = None) -> float:
    """Scalar start value Δλ of the appendix: the root of 0 = 1 − (1/n) Σ_i ω_i Δλ/(1 + ω_i Δλ) − (1 − p Φ(−0.5)).

    ω_i are the eigenvalues of K (n sites) and p the mean site probability 1 − e^(−kS/N).

    Parameters
    ----------
    K : ndarray of shape (n_sites, n_sites)
        Kernel matrix of the distinct training inputs.
    S : float
        Mean number of data rows in a bootstrap sample.
    counts : ndarray of int, shape (n_sites,), optional
        Data rows per site, k; default one row per site.

    Returns
    -------
    float
        Δλ > 0; the solver starts from Δλ(i) = Δλ, λ(i) = −Δλ, γ(i) = y_i Δλ.

    Raises
    ------
    ValueError
        If K, ``counts`` or S is invalid, or the root cannot be bracketed (K is not a kernel matrix).
    """
    K, _, counts, S = _validate(K, np.ones(len(K)), counts, S)
    return _root_start(np.clip(scipy.linalg.eigvalsh(K), 0.0, None), float(np.mean(_site_p(counts, S)[0])))


def _root_start(omega: np.ndarray, p: float) -> float:
    target = p * special.ndtr(-0.5)

    def excess(log_dl: float) -> float:
        dl = math.exp(log_dl)
        return float(np.mean(omega * dl / (1.0 + omega * dl)) - target)

    lo, hi = -40.0, 40.0
    if excess(lo) > 0 or excess(hi) < 0:
        raise ValueError("Could not bracket the start value Δλ of the appendix; is K a kernel matrix?")
    return math.exp(optimize.brentq(excess, lo, hi, xtol=1e-10))


def _site_p(counts: np.ndarray, S: float) -> tuple[np.ndarray, np.ndarray]:
    """(p, q): probability that each site is in / out of a sample, q = e^(−kS/N), p = 1 − q."""
    q = np.exp(-counts * (S / counts.sum()))
    return -np.expm1(-counts * (S / counts.sum())), q


# ---------------------------------------------------------------------------------------------
# iterations
# ---------------------------------------------------------------------------------------------


@dataclass
class _State:
    """Mutable iterate: site parameters and the matrix G that belongs to them."""

    dl: np.ndarray
    gam: np.ndarray
    lam: np.ndarray
    G: np.ndarray


def _sequential_sweep(state: _State, y: np.ndarray, pq: tuple, eta: float) -> int:
    """One EP sweep over the sites in order; G follows by rank-one updates. Returns the sites skipped.

    Site i: marginals from row i of G (eq. 22), cavity (eq. 23), new site parameters matching eq. (21),
    a damped step, then G ← G − c g gᵀ, g = G e_i, c = δ/(1 + δ G_ii) for the change δ of Δλ(i).
    Only the upper triangle of G is kept current (BLAS dsyr).
    """
    G, dl, gam, lam = state.G, state.dl, state.gam, state.lam
    syr = scipy.linalg.blas.get_blas_funcs("syr", (G,))
    p, q = pq
    skipped = 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a broken site is skipped below
        for i in range(y.size):
            skipped += _update_site(G, i, dl, gam, lam, y[i], p[i], q[i], eta, syr)
    return skipped


def _update_site(G, i, dl, gam, lam, y_i, p_i, q_i, eta, syr) -> int:
    """One EP site update of a sequential sweep (see there); returns 1 if the cavity is invalid, else 0."""
    g = np.concatenate((G[:i, i], G[i, i:]))  # row i of the symmetric G from its upper triangle
    chi = g[i]
    dl_c = 1.0 / chi - dl[i]  # eq. (23) with the marginals of eq. (22)
    gam_c = g @ gam / chi - gam[i]
    lam_c = (g * g) @ lam / chi**2 - lam[i]
    if not (dl_c > 0.0 and lam_c < 0.0 and math.isfinite(dl_c + gam_c + lam_c)):
        return 1
    new_dl, new_gam, new_lam = _site_parameters_scalar(dl_c, gam_c, lam_c, y_i, p_i, q_i)
    delta = eta * (new_dl - dl[i])
    dl[i] += delta
    gam[i] += eta * (new_gam - gam[i])
    lam[i] += eta * (new_lam - lam[i])
    if delta != 0.0:
        syr(-delta / (1.0 + delta * chi), g, a=G, lower=0, overwrite_a=1)
    return 0


def _parallel_step(state: _State, y: np.ndarray, pq: tuple, eta: float) -> int:
    """All sites at once from the current marginals (the paper's plain iteration), damped by eta."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        chi, m, V = _marginals(state.G, state.gam, state.lam)
        dl_c, gam_c, lam_c = _cavities(chi, m, V, state.dl, state.gam, state.lam)
        valid = (dl_c > 0) & (lam_c < 0) & np.isfinite(dl_c + gam_c + lam_c)
        new = site_parameters(np.where(valid, dl_c, 1.0), np.where(valid, gam_c, 0.0),
                              np.where(valid, lam_c, -1.0), y, *pq)
    for old, target in zip((state.dl, state.gam, state.lam), (new.dl, new.gam, new.lam)):
        old += np.where(valid, eta * (target - old), 0.0)
    return int(np.count_nonzero(~valid))


def _residual(state: _State, y: np.ndarray, pq: tuple) -> float:
    """Moment mismatch (``_mismatch``) of the current iterate, from the G kept with it (inf if broken)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        chi, m, V = _marginals(state.G, state.gam, state.lam)
        return _mismatch(chi, m, V, *_cavities(chi, m, V, state.dl, state.gam, state.lam), y, pq)


def _iterate(state, K, y, pq, method, damping, tol, max_iter):
    """Sweeps until the residual is below tol; returns (n_iter, residual, converged, eta).

    The sequential sweep keeps G current by rank-one updates; G is refactorised from scratch every
    ``REFRESH_EVERY`` sweeps and before convergence is declared (so the round-off drift of the updates,
    ~1e-14, never enters the result). The parallel step needs a fresh G every iteration.

    Automatic damping: a sweep that doubles the best residual so far is undone and the step halved (it also
    caps later steps); otherwise the step shrinks by 0.7 when successive changes of the site parameters
    point in opposite directions (an oscillating mode: large S) and grows back when they agree.
    """
    step = _sequential_sweep if method == "sequential" else _parallel_step
    auto = damping == "auto"
    eta = ceiling = 1.0 if auto else float(damping)
    best, saved, previous = math.inf, _params(state), None
    for it in range(1, max_iter + 1):
        before = _params(state)
        skipped = step(state, y, pq, eta)
        residual = _checked_residual(state, K, y, pq, tol, skipped, fresh=method == "parallel" or it % REFRESH_EVERY == 0)
        if residual < tol and skipped == 0:
            return it, residual, True, eta
        if auto and not residual < 2 * best and eta > MIN_DAMPING:
            eta = ceiling = eta / 2  # the iteration went astray: back to the best iterate, shorter steps
            _restore(state, K, saved)
            previous = None
            continue
        if residual < best:
            best, saved = residual, _params(state)
        if auto:
            with np.errstate(over="ignore", invalid="ignore"):
                change = (_params(state) - before) / (np.abs(before) + 1e-8)
            eta = _adapted_step(eta, ceiling, change, previous)
            previous = change
    return max_iter, residual, False, eta


def _checked_residual(state, K, y, pq, tol, skipped, *, fresh) -> float:
    """Residual of the iterate; G is refactorised first if ``fresh`` or before declaring convergence."""
    if fresh:
        state.G = _G(K, state.dl)
    residual = _residual(state, y, pq)
    if residual < tol and skipped == 0 and not fresh:
        state.G = _G(K, state.dl)
        residual = _residual(state, y, pq)
    return residual


def _adapted_step(eta: float, ceiling: float, change: np.ndarray, previous: np.ndarray | None) -> float:
    if previous is None:
        return eta
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        cos = float(change @ previous / (np.linalg.norm(change) * np.linalg.norm(previous)))
    if not math.isfinite(cos):
        return eta
    if cos < -0.3:
        return max(0.7 * eta, MIN_DAMPING)
    return min(eta / 0.7, ceiling) if cos > 0.3 else eta


def _params(state: _State) -> np.ndarray:
    return np.concatenate((state.dl, state.gam, state.lam))


def _restore(state: _State, K: np.ndarray, x: np.ndarray) -> None:
    n = state.dl.size
    state.dl, state.gam, state.lam = x[:n].copy(), x[n:2 * n].copy(), x[2 * n:].copy()
    state.G = _G(K, state.dl)


def _solution(state, K, y, counts, S, *, converged, n_iter, residual, tol, method, damping) -> SVMReplicaSolution:
    G = _G(K, state.dl)
    chi, m, V = _marginals(G, state.gam, state.lam)
    dl_c, gam_c, lam_c = _cavities(chi, m, V, state.dl, state.gam, state.lam)
    return SVMReplicaSolution(S=S, y=y, counts=counts, dl=state.dl.copy(), gam=state.gam.copy(),
                              lam=state.lam.copy(), dl_c=dl_c, gam_c=gam_c, lam_c=lam_c, chi=chi, m=m, V=V,
                              converged=converged, n_iter=n_iter, residual=residual, tol=tol, method=method,
                              damping=damping)


def solve_svm_replica(K: ArrayLike, y: ArrayLike, S: float, *, counts: ArrayLike | None = None,
                      tol: float = 1e-6, max_iter: int = 200, method: str = "sequential",
                      damping: float | str = "auto", init: SVMReplicaSolution | None = None
                      ) -> SVMReplicaSolution:
    """Solve the ADATAP equations (21)-(23) of [MO03b] at mean bootstrap size S.

    Parameters
    ----------
    K : ndarray of shape (n_sites, n_sites)
        Kernel matrix of the distinct training inputs (``svm.merge_identical``).
    y : ndarray of shape (n_sites,)
        Labels -1 / +1.
    S : float
        Mean number of data rows in a bootstrap sample (occupations Poisson with mean S/N, eq. 7).
    counts : ndarray of int, shape (n_sites,), optional
        Data rows per site, k; N = sum(counts). Default one row per site.
    tol : float
        Stop when the Gaussian marginals match the local moments (21) of their cavities to ``tol``: χ
        relative to χ^c, m in units of max(√V^c, √V), V relative to max(V^c, V). The default 1e-6 gives
        ε(S) to within 1e-6 of the tol = 1e-8 value (measured 1e-10 to 6e-7 on crabs, wisconsin, pima).
    max_iter : int
        Largest number of sweeps (sequential) or iterations (parallel).
    method : {"sequential", "parallel"}
        EP-style site-by-site updates with rank-one changes of G (robust; default), or all sites at once.
    damping : float in (0, 1] or "auto"
        Step towards the new site parameters. "auto" starts at 1, shrinks the step when successive sweeps
        change the parameters in opposite directions and grows it back when they agree, and halves it
        (down to 1/64), restarting from the best iterate, whenever a sweep doubles the residual.
    init : SVMReplicaSolution, optional
        Warm start (e.g. the solution at a neighbouring S); default the appendix's start values.

    Returns
    -------
    SVMReplicaSolution
        The converged site parameters Δλ, γ, λ, their cavities, the matched moments χ, m, V and the
        convergence record.

    Raises
    ------
    ValueError
        If K, y, ``counts``, S or an option is invalid, or ``init`` has a different number of sites.
    ConvergenceError
        If the residual does not fall below ``tol`` in ``max_iter`` sweeps; ``.last`` is the last iterate.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.linspace(-1, 1, 20)[:, None]
    >>> K = np.exp(-(X - X.T) ** 2 / 0.5)
    >>> y = np.where(X[:, 0] > 0.1, 1.0, -1.0)
    >>> sol = solve_svm_replica(K, y, S=20.0)
    >>> sol.converged, round(classification_error(sol), 3)
    (True, 0.07)
    """
    K, y, counts, S = _validate(K, y, counts, S)
    tol, max_iter, method, damping = _options_iv(tol, max_iter, method, damping)
    pq = _site_p(counts, S)
    state = _start(K, y, pq[0], init)
    try:
        n_iter, residual, converged, eta = _iterate(state, K, y, pq, method, damping, tol, max_iter)
    except (np.linalg.LinAlgError, FloatingPointError, ValueError) as err:
        raise ConvergenceError(f"SVM ADATAP iteration broke down at S/N = {S / counts.sum():g}: {err}", None) from err
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sol = _solution(state, K, y, counts, S, converged=converged, n_iter=n_iter, residual=residual, tol=tol,
                        method=method, damping=eta)
    if not all(np.all(np.isfinite(getattr(sol, k))) for k in ("dl", "gam", "lam", "dl_c", "gam_c", "lam_c")):
        raise ConvergenceError(f"SVM ADATAP ({method}) broke down at S/N = {sol.s_over_n:g}: non-finite site "
                               f"parameters after {n_iter} sweeps.", None)
    if not converged:
        raise ConvergenceError(
            f"SVM ADATAP ({method}) did not converge at S/N = {sol.s_over_n:g}: residual {residual:.2e} > tol "
            f"{tol:.1e} after {n_iter} sweeps (damping {eta:g}). Raise max_iter, lower the damping, or use a "
            "broader kernel.", sol)
    return sol


def _start(K, y, p, init) -> _State:
    if init is not None:
        if not isinstance(init, SVMReplicaSolution) or init.n_sites != y.size:
            raise ValueError(f"`init` must be an SVMReplicaSolution with {y.size} sites (a solution at another S).")
        dl, gam, lam = init.dl.copy(), init.gam.copy(), init.lam.copy()
    else:
        d0 = _root_start(np.clip(scipy.linalg.eigvalsh(K), 0.0, None), float(np.mean(p)))
        dl, gam, lam = np.full(y.size, d0), y * d0, np.full(y.size, -d0)  # appendix start values
    return _State(dl, gam, lam, _G(K, dl))


def svm_replica_learning_curve(K: ArrayLike, y: ArrayLike, S_values: ArrayLike, **options
                               ) -> list[SVMReplicaSolution]:
    """Solutions along a grid of S (solved in ascending order, each warm-started from its neighbour).

    :func:`explorer.bootstrap.replica.replica_learning_curve` for the SVM: the same warm starts, result order and
    ConvergenceError when one solve fails (use ``solve_svm_replica`` point by point to keep going).

    Parameters
    ----------
    K, y, **options
        As in :func:`solve_svm_replica`, which receives them.
    S_values : ndarray of shape (n_S,)
        Mean bootstrap sample sizes.

    Returns
    -------
    list of SVMReplicaSolution
        One solution per entry of ``S_values``.
    """
    return replica.warm_started(lambda S, init: solve_svm_replica(K, y, S, init=init, **options), S_values)


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------


def classification_error(sol: SVMReplicaSolution) -> float:
    """Efron's bootstrap classification error, eq. (17): (1/N) Σ_rows e^(−(k−1)S/N) Φ(−y γ_c/√(−λ_c)).

    A row whose input has k − 1 twins is a test point only when none of them is drawn either.

    Parameters
    ----------
    sol : SVMReplicaSolution
        The replica solution at S.

    Returns
    -------
    float
        ε(S), the bootstrap classification error.
    """
    weight = sol.counts * np.exp(-(sol.counts - 1) * sol.s_over_n)
    return float(np.sum(weight * special.ndtr(-sol.y * sol.gam_c / np.sqrt(-sol.lam_c))) / sol.n_rows)


def field_density(sol: SVMReplicaSolution, i: int, h: ArrayLike) -> np.ndarray:
    """Eq. (18): density of the field at training input i over samples without it, N(m^c_i, V^c_i).

    Parameters
    ----------
    sol : SVMReplicaSolution
        The replica solution at S.
    i : int
        Site index.
    h : ndarray of shape (n_h,)
        Field values.

    Returns
    -------
    ndarray of shape (n_h,)
        The Gaussian density with mean m^c_i = γ_c(i)/Δλ_c(i) and variance V^c_i = −λ_c(i)/Δλ_c(i)² at h.

    Raises
    ------
    IndexError
        If ``i`` is not a site index.
    """
    if not 0 <= i < sol.n_sites:
        raise IndexError(f"Site index must be in 0..{sol.n_sites - 1}, got {i}.")
    sd = math.sqrt(sol.cavity_var[i])
    return np.exp(-0.5 * ((np.asarray(h, dtype=float) - sol.cavity_mean[i]) / sd) ** 2) * _INV_SQRT_2PI / sd


@dataclass(frozen=True)
class InputFields:
    """Eq. (19): cavity parameters of the field at test inputs; mean = γ_c/Δλ_c, var = −λ_c/Δλ_c².

    Arrays of shape (M,). The field at a test input is Gaussian over bootstrap samples (eq. 18 with (19)).
    """

    dl_c: np.ndarray
    gam_c: np.ndarray
    lam_c: np.ndarray

    # A test input is in no bootstrap sample: its field is the cavity field, γ_c/Δλ_c and −λ_c/Δλ_c².
    mean = replica.CavityMoments.cavity_mean
    var = replica.CavityMoments.cavity_var

    def density(self, h: ArrayLike) -> np.ndarray:
        """ρ(h), the Gaussian density of the field (eqs. 18-19), at every test input.

        Parameters
        ----------
        h : ndarray of shape (n_h,)
            Field values (a scalar is taken as n_h = 1).

        Returns
        -------
        ndarray of shape (M, n_h)
            The density with mean γ_c/Δλ_c and variance −λ_c/Δλ_c² of each test input, at every h.
        """
        sd = np.sqrt(self.var)[:, None]
        z = (np.atleast_1d(np.asarray(h, dtype=float))[None, :] - self.mean[:, None]) / sd
        return np.exp(-0.5 * z * z) * _INV_SQRT_2PI / sd


def fields_at(sol: SVMReplicaSolution, K: ArrayLike, K_cross: ArrayLike, k_diag: ArrayLike, *,
              drop: int | None = None) -> InputFields:
    """Eq. (19) at M test inputs x: Δλ_c(x) = (K(x,x) − Σ_i K(x,x_i) Δλ(i) T_i(x))⁻¹,
    γ_c(x) = Δλ_c(x) Σ_i T_i(x) γ(i), λ_c(x) = Δλ_c(x)² Σ_i T_i(x)² λ(i), T(x) = (I + K diag Δλ)⁻¹ k(x).

    Parameters
    ----------
    K : ndarray of shape (n_sites, n_sites)
    K_cross : ndarray of shape (M, n_sites)
        K(x, x_i) for the M test inputs.
    k_diag : ndarray of shape (M,)
        K(x, x).
    drop : int, optional
        Leave site ``drop`` out (its Δλ, γ, λ set to 0): at x = x_drop this gives back the cavity
        parameters Δλ_c, γ_c, λ_c of that site (the identity eq. (19) generalises).

    Returns
    -------
    InputFields
        Δλ_c(x), γ_c(x), λ_c(x), ndarrays of shape (M,).

    Raises
    ------
    ValueError
        If ``K`` or ``K_cross`` does not have the shape of the solution's sites.
    IndexError
        If ``drop`` is not a site index.
    """

    K, K_cross, k_diag = _test_iv(sol, K, K_cross, k_diag)
    dl, gam, lam = sol.dl.copy(), sol.gam.copy(), sol.lam.copy()
    if drop is not None:
        if not 0 <= drop < sol.n_sites:
            raise IndexError(f"`drop` must be a site index in 0..{sol.n_sites - 1}, got {drop}.")
        dl[drop] = gam[drop] = lam[drop] = 0.0
    r = np.sqrt(dl)
    B = K * r[:, None] * r[None, :]
    B[np.diag_indices_from(B)] += 1.0
    factor = scipy.linalg.cho_factor(B, lower=False, check_finite=False)
    # T = (I + K D)⁻¹ k = k − K D^½ B⁻¹ D^½ k  (Woodbury)
    T = K_cross.T - K @ (r[:, None] * scipy.linalg.cho_solve(factor, r[:, None] * K_cross.T))
    dl_c = 1.0 / (k_diag - (K_cross.T * (dl[:, None] * T)).sum(axis=0))  # eq. (19)
    return InputFields(dl_c, dl_c * (T.T @ gam), dl_c**2 * ((T * T).T @ lam))


def probability_negative(fields: InputFields) -> np.ndarray:
    """p(−1|x) = Φ(−mean/√var): bootstrap probability that the SVM predicts −1 at x ([MO03b], Fig. 1).

    Parameters
    ----------
    fields : InputFields
        Bootstrap mean and variance of the field at M inputs (:func:`fields_at`).

    Returns
    -------
    ndarray of shape (M,)
        p(−1|x) at each input.
    """
    return special.ndtr(-fields.mean / np.sqrt(fields.var))


def loo_limit(K: ArrayLike, y: ArrayLike, *, counts: ArrayLike | None = None,
              solution: svm.SVMSolution | None = None) -> svm.LeaveOneOut:
    """The S → ∞ limit, eq. (20): Opper & Winther's approximate leave-one-out error of the SVM on D0,

        lim ε(S) = (1/N) Σ_i Θ(−y_i m^c_i) = (1/N) Σ_{i ∈ SV} Θ(α_i/[K_SV⁻¹]_ii − 1),

    with the leave-one-out margin y_i f^{\\i}_i ≈ y_i f_i − α_i/[K_SV⁻¹]_ii of a support vector (its
    neighbours stay support vectors) and y_i f_i for the others. Rows with twins are never errors.

    Parameters
    ----------
    K : ndarray of shape (n_sites, n_sites)
        Kernel matrix of the distinct training inputs.
    y : ndarray of shape (n_sites,)
        Labels -1 / +1.
    counts : ndarray of int, shape (n_sites,), optional
        Data rows per site; default one.
    solution : SVMSolution, optional
        The hard-margin SVM on D0, if already fitted.

    Returns
    -------
    LeaveOneOut
        The approximate leave-one-out margins per site and the error (``error``).
    """
    K, y, counts, _ = _validate(K, y, counts, 1.0)
    sol = svm.fit_hard_margin(K, y) if solution is None else solution
    margins = sol.margins.copy()
    sv = sol.support
    if sv.size:
        L = scipy.linalg.cholesky(K[np.ix_(sv, sv)], lower=True)
        inv_diag = (scipy.linalg.solve_triangular(L, np.eye(sv.size), lower=True) ** 2).sum(axis=0)  # [K_SV⁻¹]_ii
        margins[sv] -= sol.alpha[sv] / inv_diag  # eq. (20)
    return svm.LeaveOneOut(margins, counts, svm.loo_error(margins, counts), 0)


def self_consistency_residual(sol: SVMReplicaSolution, K: ArrayLike) -> float:
    """Largest mismatch of eqs. (21)-(23) for a solution, with G formed independently by a dense solve.

    Parameters
    ----------
    sol, K : SVMReplicaSolution and ndarray of shape (n_sites, n_sites)
        The solution to check and the kernel matrix it was computed with.

    Returns
    -------
    float
        The residual in the units of ``tol`` of :func:`solve_svm_replica`.
    """
    K = np.asarray(K, dtype=float)
    G = np.linalg.solve(np.eye(sol.n_sites) + K * sol.dl[None, :], K)  # (I + K D)⁻¹ K = (K⁻¹ + D)⁻¹
    chi, m, V = _marginals(G, sol.gam, sol.lam)
    return _mismatch(chi, m, V, *_cavities(chi, m, V, sol.dl, sol.gam, sol.lam), sol.y, _site_p(sol.counts, sol.S))


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------


def _validate(K, y, counts, S):
    K, y = check_kernel_labels(K, y)
    if K.shape[0] < 2:
        raise ValueError(f"Need at least 2 training inputs, got {K.shape[0]}.")
    counts = svm.check_counts(counts, y.size)
    if not (np.isfinite(S) and S > 0):
        raise ValueError(f"`S` must be positive, got {S}. S is the mean bootstrap sample size (eq. 7).")
    return K, y, counts, float(S)


def _options_iv(tol, max_iter, method, damping):
    if not (np.isfinite(tol) and 0 < tol < 1):
        raise ValueError(f"`tol` must be in (0, 1), got {tol}. It is the accepted moment mismatch.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"`max_iter` must be a positive integer, got {max_iter!r}.")
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}, got {method!r}.")
    if damping != "auto" and not (isinstance(damping, (int, float)) and 0 < damping <= 1):
        raise ValueError(f"`damping` must be 'auto' or a step in (0, 1], got {damping!r}. 1 means no damping.")
    return float(tol), int(max_iter), method, damping


def _test_iv(sol, K, K_cross, k_diag):
    K = np.asarray(K, dtype=float)
    if K.shape != (sol.n_sites, sol.n_sites):
        raise ValueError(f"`K` must be the ({sol.n_sites}, {sol.n_sites}) kernel matrix of the sites, got {K.shape}.")
    K_cross = np.atleast_2d(np.asarray(K_cross, dtype=float))
    if K_cross.shape[1] != sol.n_sites:
        raise ValueError(f"`K_cross` must have shape (M, {sol.n_sites}) = K(X_test, X_sites), got {K_cross.shape}.")
    k_diag = np.broadcast_to(np.asarray(k_diag, dtype=float), (K_cross.shape[0],))
    return K, K_cross, k_diag
