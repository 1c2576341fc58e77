r"""Approximation set coding (ASC) for GP hyperparameters, [Fis16] (Fischer 2016), chapters 3-4.

The hypotheses are the latent values f̃ at M objects X̃ (inputs drawn from X); the data are split into L
subsets (X_l, y_l). The ASC criterion is the mutual information (eqs. 3.5, 4.1)

    I = h(τ) + log η,

with h(τ) = 0 (eq. 3.3) or the prior entropy ½(log|K̃| + M log 2πe) (eq. 4.2), and the posterior agreement
η = ∫ Π_l p(f̃ | D_l) N(f̃ | 0, K̃) df̃ (eq. 3.2) for three posteriors:

* ``"boltzmann"``: p_β(f̃ | D_l) ∝ p(y_l | f̃)^β (eq. 3.7), η_β in closed form by eq. (4.3), β maximised
  per partition (Algorithm 2, eq. 2.13) in log space;
* ``"beta-noise"``: the same with β = 1 (§3.3, §4.3.2);
* ``"bayes"``: the GP posterior p(f̃ | y_l) (eq. 3.9), η by eq. (4.4).

Algorithm 2 averages the (maximised) I over J random partitions. Partitions whose matrices cannot be
factorised (§4.4.2) are left out of the average and counted. The GP has zero mean, so m = m̃ = 0 in
eqs. (4.3)-(4.4). Gradients are taken w.r.t. ``np.append(kernel.theta, log noise_var)`` with Props. 13-16 of
Appendix A (§4.3), accumulated in reverse mode (see "one partition" below); for Boltzmann ASC the envelope
theorem applies (∂I/∂β = 0 at β*), so the gradient of max_β I is ∂I/∂θ at β*.

Symbols in code: ``Kt`` = K̃ = K_f(X̃, X̃), ``Ktl`` = K̃_l = K_f(X_l, X̃), ``Kl`` = K_l = K_y(X_l, X_l),
``A`` = A_l = K̃⁻¹K̃_lᵀ, ``Lam`` = Λ_l, ``B`` = B_l = K_l⁻¹K̃_l, ``V`` = V_l; a trailing ``_bar`` marks an adjoint ∂ log η/∂(·).

Core module: numpy and scipy only.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import optimize
from scipy.linalg import cho_solve, cholesky, eigh

from explorer.kernels import Kernel
from explorer.regression import check_data
from explorer.validation import noise_variance

__all__ = ["VARIANTS", "ENTROPIES", "LOG_BETA_RANGE", "AscPartitions", "AscValue", "BetaCurve",
           "SingularPartitionsError", "draw_partitions", "mutual_information",
           "mutual_information_vs_beta"]

VARIANTS = ("boltzmann", "beta-noise", "bayes")
"""Posterior variants: Boltzmann (eq. 4.3, β maximised), β-noise (β = 1), Bayesian (eq. 4.4)."""

ENTROPIES = ("zero", "prior")
"""Transformation complexity h(τ): 0 (eq. 3.3) or the prior entropy of f̃ (eq. 4.2)."""

LOG_BETA_RANGE = (-15.0, 15.0)
"""Search interval of log β for Boltzmann ASC; β* on an end means I still grows beyond it."""

_LOG_2PI = np.log(2.0 * np.pi)
_LOG_BETA_GRID = np.arange(LOG_BETA_RANGE[0], LOG_BETA_RANGE[1] + 0.25, 0.5)


class SingularPartitionsError(np.linalg.LinAlgError):
    """Every one of the J partitions had a matrix that could not be factorised (§4.4.2)."""


class _Singular(Exception):
    """One partition's matrices are numerically singular; it is excluded from the average."""


@dataclass(frozen=True, eq=False)
class AscPartitions:
    """J random partitions of N cases into L subsets, each with M objects (Algorithm 2).

    Attributes
    ----------
    subsets : tuple of L ndarrays, the l-th of shape (J, N_l)
        Row j holds the indices of the cases in subset l of partition j; N_l = N/L rounded.
    objects : ndarray of shape (J, M)
        Row j holds the indices of the M distinct inputs used as objects X̃ in partition j.
    n : int
        N, the number of cases partitioned.
    """

    subsets: tuple[np.ndarray, ...]
    objects: np.ndarray
    n: int

    @property
    def n_partitions(self) -> int:
        """J."""
        return self.objects.shape[0]

    @property
    def n_subsets(self) -> int:
        """L."""
        return len(self.subsets)

    @property
    def n_objects(self) -> int:
        """M."""
        return self.objects.shape[1]


@dataclass(frozen=True, eq=False)
class AscValue:
    """ASC mutual information averaged over the partitions that could be evaluated (Algorithm 2).

    Attributes
    ----------
    variant, entropy : str
        One of ``VARIANTS`` and ``ENTROPIES``.
    mutual_information : float
        Mean over the included partitions of I (for Boltzmann ASC, of max_β I), in nats.
    gradient : ndarray of shape (p + 1,) or None
        Gradient of ``mutual_information`` w.r.t. ``np.append(kernel.theta, log noise_var)``.
    per_partition : ndarray of shape (J,)
        I of each partition; NaN where the partition was excluded.
    betas : ndarray of shape (J,)
        β used in each partition (β* for Boltzmann, 1 for β-noise, NaN for Bayesian and excluded ones).
    n_excluded : int
        Number of partitions left out because a matrix could not be factorised (§4.4.2).
    """

    variant: str
    entropy: str
    mutual_information: float
    gradient: np.ndarray | None
    per_partition: np.ndarray
    betas: np.ndarray
    n_excluded: int


@dataclass(frozen=True, eq=False)
class BetaCurve:
    """Boltzmann ASC mutual information I_β as a function of β (Fig. 4.1, 5.15).

    Attributes
    ----------
    betas : ndarray of shape (n_beta,)
    mean : ndarray of shape (n_beta,)
        I_β averaged over the included partitions.
    per_partition : ndarray of shape (J, n_beta)
        NaN rows for excluded partitions.
    beta_star : ndarray of shape (J,)
        argmax_β I_β of each partition (NaN if excluded).
    n_excluded : int
    """

    betas: np.ndarray
    mean: np.ndarray
    per_partition: np.ndarray
    beta_star: np.ndarray
    n_excluded: int


# --------------------------------------------------------------------------- partitions


def _count(value, name, meaning, minimum=1):
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= minimum
    if not ok:
        raise ValueError(f"`{name}` must be an integer >= {minimum}, got {value!r}. {name} is {meaning}.")
    return int(value)


def draw_partitions(n: int, n_partitions: int = 32, n_subsets: int = 2, n_objects: int = 8,
                    rng: np.random.Generator | int | None = None) -> AscPartitions:
    """Draw the J random partitions and objects of Algorithm 2 (thesis: J = 32, L = 2, M = 4 or 8).

    Each partition splits a random permutation of the N cases into L subsets of sizes differing by at
    most one, and picks M distinct inputs as objects X̃ uniformly without replacement (§4.1).

    Parameters
    ----------
    n : int
        Number of cases N, >= 2.
    n_partitions : int, optional
        Number J of random partitions, >= 1.
    n_subsets : int, optional
        Number L of subsets per partition, >= 1.
    n_objects : int, optional
        Number M of objects, >= 1 and at most N // L.
    rng : Generator, int or None, optional
        Random generator or seed, passed to ``np.random.default_rng``.

    Returns
    -------
    AscPartitions
        ``subsets``: L read-only arrays, the l-th of shape (J, N_l) with sorted case indices;
        ``objects``: read-only ndarray of shape (J, M), sorted.

    Raises
    ------
    ValueError
        If a count is not an integer of the allowed range, or M > N // L (or L > N).
    """
    n = _count(n, "n", "the number of cases N", 2)
    J = _count(n_partitions, "n_partitions", "the number J of random partitions")
    L = _count(n_subsets, "n_subsets", "the number L of subsets per partition")
    M = _count(n_objects, "n_objects", "the number M of objects")
    if n // L < max(M, 1) or L > n:
        raise ValueError(f"`n_objects` M = {M} must not exceed the smallest subset size N // L = {n // L} "
                         f"(N = {n}, L = {L}): A_l must have full row rank M (§4.3.1). Lower M or L.")
    gen = np.random.default_rng(rng)
    perms = np.array([gen.permutation(n) for _ in range(J)])
    objects = np.array([np.sort(gen.choice(n, size=M, replace=False)) for _ in range(J)])
    bounds = np.cumsum([0] + [len(part) for part in np.array_split(np.arange(n), L)])
    subsets = tuple(np.sort(perms[:, lo:hi], axis=1) for lo, hi in zip(bounds[:-1], bounds[1:]))
    for arr in (objects, *subsets):
        arr.setflags(write=False)
    return AscPartitions(subsets=subsets, objects=objects, n=n)


# --------------------------------------------------------------------------- linear algebra


def _chol(A):
    """Lower Cholesky factor of the symmetric matrix A, or _Singular if it is numerically singular.

    A pivot L_ii² below n·eps·max(diag A) counts as a failure too (§4.4.2): solves with such a factor are
    dominated by round-off.
    """
    try:
        L = cholesky(A, lower=True, check_finite=True)
    except (np.linalg.LinAlgError, ValueError):
        raise _Singular from None
    if np.min(np.diag(L)) ** 2 <= A.shape[0] * np.finfo(float).eps * np.max(np.diag(A)):
        raise _Singular
    return L


def _inv(L):
    """A⁻¹ from its Cholesky factor (needed for traces with ∂A and for small M × M matrices)."""
    return cho_solve((L, True), np.eye(L.shape[0]), check_finite=False)


def _logdet(L):
    return 2.0 * np.log(np.diag(L)).sum()


# --------------------------------------------------------------------------- one partition
#
# Gradients are accumulated in reverse mode: each partition returns the adjoints K̄ of its kernel blocks
# (dF = tr(∂K̃ K̄t) + Σ_l tr(∂K̃_l K̄tl) + tr(∂K_l K̄l)), derived from Props. 13-15 like the forward formulas
# of §4.3. They are scattered into one N × N matrix, so the gradient costs one contraction with ∂K_f for
# all partitions and hyperparameters together, and ∂/∂log σ² = σ² Σ_l tr(K̄l).


@dataclass(frozen=True)
class _Blocks:
    """Kernel blocks of one partition: K̃ (M, M), K̃_l (N_l, M), K_l = K_y(X_l, X_l) and y_l, l = 1..L."""

    Kt: np.ndarray
    Ktl: tuple
    Kl: tuple
    yl: tuple


@dataclass(frozen=True)
class _Adjoint:
    """Adjoints of one partition's log η: K̄t (M, M), K̄tl (M, N_l) and K̄l (N_l, N_l) per subset."""

    Kt: np.ndarray
    Ktl: list
    Kl: list


def _blocks(Kf, y, noise_var, subsets, objects):
    """Slice K̃, K̃_l, K_l of one partition from the full noise-free kernel matrix K_f."""
    Kl = tuple(Kf[np.ix_(I, I)] + noise_var * np.eye(I.size) for I in subsets)
    return _Blocks(Kf[np.ix_(objects, objects)], tuple(Kf[np.ix_(I, objects)] for I in subsets), Kl,
                   tuple(y[I] for I in subsets))


def _sym(A):
    return 0.5 * (A + A.T)


def _boltzmann_terms(b: _Blocks):
    """Per subset l the r_l, Λ_l of eq. (4.3) and what their adjoints need; K̃'s factor and inverse."""
    Lt = _chol(b.Kt)
    Kt_inv = _inv(Lt)
    terms = []
    for Ktl, Kl, yl in zip(b.Ktl, b.Kl, b.yl):
        A = Kt_inv @ Ktl.T                                              # A_l = K̃⁻¹ K̃_lᵀ
        Ls = _chol(Kl - Ktl @ A)                                        # Σ_l = K_l − K̃_l A_l
        u = cho_solve((Ls, True), yl, check_finite=False)               # Σ_l⁻¹ μ_l, μ_l = y_l (zero mean)
        P = cho_solve((Ls, True), A.T, check_finite=False)              # Σ_l⁻¹ A_lᵀ
        LL = _chol(_sym(A @ P))                                         # Λ_l = A_l Σ_l⁻¹ A_lᵀ
        terms.append(dict(r=A @ u, Lam=_sym(A @ P), LL=LL, A=A, u=u, P=P))
    return Lt, Kt_inv, terms


@dataclass(frozen=True)
class _BetaSpectrum:
    """What log η_β of eq. (4.3) needs as a function of β (see :func:`_log_eta_beta`)."""

    a: float
    omega: np.ndarray
    z2: np.ndarray
    logdet_lam: float
    LM: int


def _beta_spectrum(Lt, terms) -> _BetaSpectrum:
    a = sum(t["r"] @ cho_solve((t["LL"], True), t["r"], check_finite=False) for t in terms)
    S = sum(t["Lam"] for t in terms)
    try:
        omega, Q = eigh(Lt.T @ S @ Lt)
    except (ValueError, np.linalg.LinAlgError):                        # NaN from overflow upstream
        raise _Singular from None
    z2 = (Q.T @ (Lt.T @ sum(t["r"] for t in terms))) ** 2
    return _BetaSpectrum(float(a), np.maximum(omega, 0.0), z2, sum(_logdet(t["LL"]) for t in terms),
                         Lt.shape[0] * len(terms))


def _log_eta_beta(spec: _BetaSpectrum, log_beta):
    r"""log η_β of eq. (4.3) and ∂/∂log β (Prop. 16) at one or many log β, in O(M) each.

    With S = Σ_l Λ_l, u = Σ_l r_l, C = L̃ᵀ S L̃ = Q diag(ω) Qᵀ (K̃ = L̃L̃ᵀ) and z = Qᵀ L̃ᵀ u,
    log η_β = −½β Σ_l r_lᵀΛ_l⁻¹r_l + (LM/2) log β + ½ Σ_l log|Λ_l| + ½β² Σ_i z_i²/(1 + βω_i)
              − ½ Σ_i log(1 + βω_i) − (LM/2) log 2π   (log|K̃| cancels between Λ and the prior).
    """
    beta = np.exp(np.asarray(log_beta, dtype=float))[..., None]
    bw = beta * spec.omega
    b = beta[..., 0]
    value = (-0.5 * b * spec.a + 0.5 * spec.LM * np.log(b) + 0.5 * spec.logdet_lam
             + 0.5 * (beta**2 * spec.z2 / (1 + bw)).sum(-1) - 0.5 * np.log1p(bw).sum(-1)
             - 0.5 * spec.LM * _LOG_2PI)
    slope = (-0.5 * b * spec.a + 0.5 * spec.LM
             + 0.5 * (spec.z2 * beta**2 * (bw + 2) / (1 + bw) ** 2).sum(-1) - 0.5 * (bw / (1 + bw)).sum(-1))
    return value, slope


def _best_log_beta(spec: _BetaSpectrum) -> float:
    """argmax over log β ∈ LOG_BETA_RANGE of log η_β: a grid, then a root of ∂/∂ log β (eq. 2.13)."""
    values, slopes = _log_eta_beta(spec, _LOG_BETA_GRID)
    k = int(np.argmax(values))
    lo, hi = max(k - 1, 0), min(k + 1, _LOG_BETA_GRID.size - 1)
    if slopes[lo] > 0 > slopes[hi]:
        return optimize.brentq(lambda t: float(_log_eta_beta(spec, t)[1]), _LOG_BETA_GRID[lo],
                               _LOG_BETA_GRID[hi], xtol=1e-10)
    return float(_LOG_BETA_GRID[k])


def _boltzmann_adjoint(b: _Blocks, beta, Kt_inv, terms) -> _Adjoint:
    """Adjoints of log η_β (eq. 4.3) w.r.t. K̃, K̃_l, K_l (reverse-mode form of §4.3.1)."""
    Lam = Kt_inv + beta * sum(t["Lam"] for t in terms)                 # Λ = β Σ Λ_l + K̃⁻¹
    LP = _chol(Lam)
    Lam_inv = _inv(LP)
    z = Lam_inv @ (beta * sum(t["r"] for t in terms))                  # Λ⁻¹ r
    outer = -0.5 * (np.outer(z, z) + Lam_inv)                          # ∂/∂Λ of ½ rᵀΛ⁻¹r − ½ log|Λ|
    Kt_bar = -Kt_inv @ outer @ Kt_inv - 0.5 * Kt_inv                   # via Λ ∋ K̃⁻¹, and log N(0 | 0, K̃)
    Ktl_bar, Kl_bar = [], []
    for t, Ktl in zip(terms, b.Ktl):
        w = cho_solve((t["LL"], True), t["r"], check_finite=False)     # Λ_l⁻¹ r_l
        r_bar = beta * (z - w)                                         # ∂F/∂r_l
        lam_bar = 0.5 * beta * np.outer(w, w) + 0.5 * _inv(t["LL"]) + beta * outer   # ∂F/∂Λ_l
        A, u, P = t["A"], t["u"], t["P"]
        Pr = P @ r_bar
        S_bar = 0.5 * (np.outer(u, Pr) + np.outer(Pr, u)) + P @ lam_bar @ P.T   # −∂F/∂Σ_l
        XA = np.outer(u, r_bar) + 2.0 * P @ lam_bar + S_bar @ Ktl      # (∂F/∂A_l)ᵀ
        Kl_bar.append(-S_bar)
        Ktl_bar.append(A @ S_bar + Kt_inv @ XA.T)
        Kt_bar = Kt_bar - _sym(A @ XA @ Kt_inv)
    return _Adjoint(Kt_bar, Ktl_bar, Kl_bar)


def _boltzmann_partition(b: _Blocks, log_beta, grad):
    """(log η, adjoint or None, β, log|K̃|, K̃⁻¹) of one partition; log_beta None = maximise over β."""
    Lt, Kt_inv, terms = _boltzmann_terms(b)
    spec = _beta_spectrum(Lt, terms)
    if log_beta is None:
        log_beta = _best_log_beta(spec)
    beta = float(np.exp(log_beta))
    adjoint = _boltzmann_adjoint(b, beta, Kt_inv, terms) if grad else None
    return float(_log_eta_beta(spec, log_beta)[0]), adjoint, beta, _logdet(Lt), Kt_inv


def _bayes_partition(b: _Blocks, grad):
    """(log η, adjoint or None, NaN, log|K̃|, K̃⁻¹) of one partition by eq. (4.4) (§4.3.3)."""
    Lt = _chol(b.Kt)
    Kt_inv = _inv(Lt)
    M = Lt.shape[0]
    log_eta = -0.5 * _logdet(Lt) - 0.5 * M * _LOG_2PI                   # log N(0 | 0, K̃)
    s, P, parts = 0.0, Kt_inv.copy(), []
    for Ktl, Kl, yl in zip(b.Ktl, b.Kl, b.yl):
        Ll = _chol(Kl)
        v = cho_solve((Ll, True), yl, check_finite=False)               # K_l⁻¹ y_l
        B = cho_solve((Ll, True), Ktl, check_finite=False)              # B_l = K_l⁻¹ K̃_l
        s_l = Ktl.T @ v                                                 # s_l = B_lᵀ y_l
        LV = _chol(b.Kt - Ktl.T @ B)                                    # V_l = K̃ − K̃_lᵀ B_l
        Vinv = _inv(LV)
        w = Vinv @ s_l
        log_eta += -0.5 * s_l @ w - 0.5 * _logdet(LV) - 0.5 * M * _LOG_2PI   # log N(s_l | 0, V_l)
        s, P = s + w, P + Vinv
        parts.append((v, B, Vinv, w))
    LP = _chol(P)
    P_inv = _inv(LP)
    z = P_inv @ s
    log_eta -= 0.5 * _logdet(LP) - 0.5 * s @ z - 0.5 * M * _LOG_2PI    # − log(|P| N(s | 0, P))
    if not grad:
        return float(log_eta), None, np.nan, _logdet(Lt), Kt_inv
    inner = 0.5 * (P_inv + np.outer(z, z))                             # −∂F/∂P
    Kt_bar = Kt_inv @ inner @ Kt_inv - 0.5 * Kt_inv
    Ktl_bar, Kl_bar = [], []
    for v, B, Vinv, w in parts:
        zeta = Vinv @ z
        s_bar = zeta - w                                               # ∂F/∂s_l
        V_bar = (0.5 * np.outer(w, w) - 0.5 * Vinv + Vinv @ inner @ Vinv
                 - 0.5 * (np.outer(w, zeta) + np.outer(zeta, w)))      # ∂F/∂V_l
        Bs = B @ s_bar
        Kt_bar = Kt_bar + V_bar
        Ktl_bar.append(np.outer(s_bar, v) - 2.0 * V_bar @ B.T)
        Kl_bar.append(B @ V_bar @ B.T - 0.5 * (np.outer(v, Bs) + np.outer(Bs, v)))
    return float(log_eta), _Adjoint(Kt_bar, Ktl_bar, Kl_bar), np.nan, _logdet(Lt), Kt_inv


def _scatter(total, adjoint: _Adjoint, subsets, objects, weight):
    """Add one partition's adjoints into the N × N adjoint of K_f; return its σ²-free noise part Σ tr K̄l."""
    total[np.ix_(objects, objects)] += weight * adjoint.Kt
    noise = 0.0
    for I, Ktl_bar, Kl_bar in zip(subsets, adjoint.Ktl, adjoint.Kl):
        total[np.ix_(objects, I)] += weight * Ktl_bar
        total[np.ix_(I, I)] += weight * Kl_bar
        noise += weight * np.trace(Kl_bar)
    return noise


# --------------------------------------------------------------------------- public functions


def _check_asc(kernel, X, y, noise_var, partitions, variant, entropy, eval_gradient):
    X, y, noise_var = check_data(kernel, X, y, noise_var, eval_gradient)
    noise_variance(noise_var)  # σ² > 0: Σ_l and K_l must be invertible
    if not isinstance(partitions, AscPartitions):
        raise TypeError("`partitions` must be an AscPartitions from draw_partitions(n, ...), got "
                        f"{type(partitions).__name__}.")
    if partitions.n != y.size:
        raise ValueError(f"`partitions` were drawn for N = {partitions.n} cases but the data have "
                         f"{y.size}. Draw them with draw_partitions({y.size}, ...).")
    if variant not in VARIANTS:
        raise ValueError(f"`variant` must be one of {VARIANTS}, got {variant!r}.")
    if entropy not in ENTROPIES:
        raise ValueError(f"`entropy` must be one of {ENTROPIES}, got {entropy!r}. It chooses h(τ): 0 "
                         "(eq. 3.3) or the prior entropy (eq. 4.2).")
    return X, y, noise_var


def _partition(partitions, j):
    return [S[j] for S in partitions.subsets], partitions.objects[j]


def mutual_information(kernel: Kernel, X, y, noise_var: float, partitions: AscPartitions,
                       variant: str = "beta-noise", entropy: str = "zero", *, beta: float | None = None,
                       eval_gradient: bool = False) -> AscValue:
    """ASC mutual information I = h(τ) + log η (eq. 4.1), averaged over the partitions (Algorithm 2).

    Parameters
    ----------
    kernel : Kernel
        Prior covariance k.
    X, y : array_like of shapes (N, d) and (N,)
        Inputs and targets.
    noise_var : float
        σ² > 0.
    partitions : AscPartitions
        From :func:`draw_partitions` with the same N.
    variant : one of ``VARIANTS``
    entropy : one of ``ENTROPIES``
    beta : float, optional
        Boltzmann ASC only: fix β instead of maximising over it.
    eval_gradient : bool
        Also return the gradient w.r.t. ``np.append(kernel.theta, log noise_var)``.

    Returns
    -------
    AscValue
        The mean I over the partitions that could be evaluated, I and β of each partition, the number
        excluded, and the gradient of shape (p + 1,) with ``eval_gradient`` (else None).

    Raises
    ------
    TypeError
        If ``kernel`` is not a Kernel or ``partitions`` not an :class:`AscPartitions`.
    ValueError
        If the data are invalid, ``noise_var`` <= 0, ``partitions`` were drawn for another N,
        ``variant`` or ``entropy`` is unknown, or ``beta`` is given for a variant other than
        "boltzmann" or is not > 0.
    SingularPartitionsError
        If no partition could be evaluated.
    FloatingPointError
        If the gradient is not finite.
    """
    X, y, noise_var = _check_asc(kernel, X, y, noise_var, partitions, variant, entropy, eval_gradient)
    if beta is not None and (variant != "boltzmann" or not (np.isfinite(beta) and beta > 0)):
        raise ValueError(f"`beta` may only be given for variant='boltzmann' and must be > 0, got "
                         f"beta={beta!r} with variant={variant!r}.")
    log_beta = {"boltzmann": None if beta is None else np.log(beta), "beta-noise": 0.0}.get(variant)
    Kf, dK = kernel(X, eval_gradient=True) if eval_gradient else (kernel(X), None)
    J, M = partitions.n_partitions, partitions.n_objects
    values, betas, done = np.full(J, np.nan), np.full(J, np.nan), []
    for j in range(J):
        subsets, objects = _partition(partitions, j)
        try:
            b = _blocks(Kf, y, noise_var, subsets, objects)
            if variant == "bayes":
                log_eta, adjoint, bj, logdet_kt, Kt_inv = _bayes_partition(b, eval_gradient)
            else:
                log_eta, adjoint, bj, logdet_kt, Kt_inv = _boltzmann_partition(b, log_beta, eval_gradient)
        except _Singular:
            continue
        if not np.isfinite(log_eta):
            continue
        h = 0.5 * (logdet_kt + M * (_LOG_2PI + 1.0)) if entropy == "prior" else 0.0   # eq. (4.2)
        if eval_gradient and entropy == "prior":
            adjoint = replace(adjoint, Kt=adjoint.Kt + 0.5 * Kt_inv)   # ∂h/∂θ = ½ tr(K̃⁻¹ ∂K̃)
        values[j], betas[j] = h + log_eta, bj
        done.append((j, adjoint))
    if not done:
        raise SingularPartitionsError(
            f"ASC could not be evaluated: all J = {J} partitions had a numerically singular matrix "
            f"(§4.4.2) at {kernel!r}, noise_var = {noise_var:.3g}. Lower n_objects (M = {M}) or move the "
            "hyperparameters away from very long lengthscales / tiny noise.")
    gradient = _gradient(done, partitions, dK, noise_var) if eval_gradient else None
    return AscValue(variant=variant, entropy=entropy, mutual_information=float(np.nanmean(values)),
                    gradient=gradient, per_partition=values, betas=betas, n_excluded=J - len(done))


def _gradient(done, partitions, dK, noise_var):
    """Mean over the included partitions of ∂I/∂phi, from the scattered adjoints (see above)."""
    total, noise = np.zeros(dK.shape[:2]), 0.0
    for j, adjoint in done:
        noise += _scatter(total, adjoint, *_partition(partitions, j), 1.0 / len(done))
    grad = np.tensordot(total, dK, axes=([0, 1], [0, 1]))
    grad = np.append(grad, noise_var * noise)
    if not np.all(np.isfinite(grad)):
        raise FloatingPointError("the ASC gradient is not finite; the partition matrices are too "
                                 "ill-conditioned at these hyperparameters.")
    return grad


def mutual_information_vs_beta(kernel: Kernel, X, y, noise_var: float, partitions: AscPartitions,
                               betas, entropy: str = "zero") -> BetaCurve:
    """Boltzmann ASC I_β = h(τ) + log η_β (eqs. 4.1, 4.3) on a grid of β (Fig. 4.1, 5.15).

    The hyperparameters stay fixed; β* of each partition is found as in :func:`mutual_information`.

    Parameters
    ----------
    kernel, X, y, noise_var, partitions
        As in :func:`mutual_information`.
    betas : array_like of shape (n_beta,)
        The grid of β, positive and finite.
    entropy : one of ``ENTROPIES``

    Returns
    -------
    BetaCurve
        I_β per partition and averaged over the partitions whose whole curve is finite, and β* of each.

    Raises
    ------
    TypeError
        If ``kernel`` is not a Kernel or ``partitions`` not an :class:`AscPartitions`.
    ValueError
        If the data are invalid, ``noise_var`` <= 0, ``partitions`` were drawn for another N, ``entropy``
        is unknown, or ``betas`` is not a non-empty 1-D array of positive numbers.
    SingularPartitionsError
        If no partition could be evaluated.
    """
    X, y, noise_var = _check_asc(kernel, X, y, noise_var, partitions, "boltzmann", entropy, False)
    betas = np.asarray(betas, dtype=float)
    if betas.ndim != 1 or betas.size == 0 or not np.all(np.isfinite(betas) & (betas > 0)):
        raise ValueError(f"`betas` must be a non-empty 1-D array of positive numbers, got {betas!r}.")
    Kf = kernel(X)
    J, M = partitions.n_partitions, partitions.n_objects
    curves, star = np.full((J, betas.size), np.nan), np.full(J, np.nan)
    for j in range(J):
        try:
            Lt, _, terms = _boltzmann_terms(_blocks(Kf, y, noise_var, *_partition(partitions, j)))
            spec = _beta_spectrum(Lt, terms)
        except _Singular:
            continue
        star[j] = np.exp(_best_log_beta(spec))
        h = 0.5 * (_logdet(Lt) + M * (_LOG_2PI + 1.0)) if entropy == "prior" else 0.0
        curves[j] = h + _log_eta_beta(spec, np.log(betas))[0]
    ok = np.all(np.isfinite(curves), axis=1)
    if not ok.any():
        raise SingularPartitionsError(f"all J = {J} partitions had a numerically singular matrix (§4.4.2); "
                                      f"lower n_objects (M = {M}).")
    return BetaCurve(betas=betas, mean=curves[ok].mean(axis=0), per_partition=curves, beta_star=star,
                     n_excluded=int(J - ok.sum()))
