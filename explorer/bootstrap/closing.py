"""Closing the ADATAP equations of [MO03]: the coefficients of eqs. (57) and (59) given diag G, in the two forms the
kernel operators name (``operator.closing``): as written (dense K) or in the fixed-point form free of the
cancellation in H − G_ii² (features Φ, where some sites have G_ii → 0).

Core module: numpy and scipy only.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from explorer.bootstrap.occupations import ROW_BLOCK, update_delta_lambda

__all__ = ['Closing', 'literal_closing', 'fixed_point_closing', 'CLOSINGS', 'site_means', 'cavity_means']


@dataclass(frozen=True)
class Closing:
    """The coefficients of eqs. (57) and (59) given diag G: (G∘G − diag d) λ = (m − y)², e = d − G_ii² > 0 (the
    diagonal of the negated matrix), and λ_c = λ·num/den + (m − y)²/G_ii² (eq. 59; num/den = G_ii²/(H − G_ii²)).

    ``ratio()`` forms (num, den) when eq. (59) needs them, after eq. (57) is solved: where N is large (rows in chunks
    on a cluster) the N-vectors alive at once are the memory, and num is one fewer during that solve. It returns a
    new array num each call (the caller may write into it).
    """

    d: np.ndarray
    e: np.ndarray
    ratio: Callable[[], tuple[np.ndarray, np.ndarray | float]]

    @property
    def num(self) -> np.ndarray:
        """num of eq. (59) (formed on each access; :meth:`ratio` gives both)."""
        return self.ratio()[0]

    @property
    def den(self) -> np.ndarray | float:
        """den of eq. (59) (formed on each access)."""
        return self.ratio()[1]


def literal_closing(dl, dl_c, G_diag, p, noise_var, at_fixed_point: bool = True) -> Closing:
    """Eqs. (57), (59) as written: H − G_ii² by subtraction (``at_fixed_point`` plays no part)."""
    kc = np.arange(p.size) / noise_var
    H = (p / (dl_c[:, None] + kc) ** 2).sum(axis=1)  # H(i), after eq. (57)
    g_ii = G_diag**2
    d = H * g_ii / (H - g_ii)
    return Closing(d=d, e=d - g_ii, ratio=lambda: (g_ii.copy(), H - g_ii))


def fixed_point_closing(dl, dl_c, G_diag, p, noise_var, at_fixed_point: bool = True) -> Closing:
    """Eqs. (57), (59) with H − g, g = G_ii², never formed by subtraction.

    e = g²/(H − g) and c = g/(H − g), H = Σ_k p_k q_k², q_k = 1/(Δλ_c + k/σ²). H − g is a difference of two numbers
    of order 1/Δλ_c² that can be 1e-15 of either (a site few features reach: G_ii ≈ 0, Δλ_c huge). Eq. (55) makes
    g = q̄², q̄ = Σ_k p_k q_k, at the fixed point, where H − g = Σ_k p_k (q_k − q̄)² is the variance of q over k;
    and q_k − q̄ = a r_k Σ_l p_l (l − k) r_l / Δλ_c with r_k = Δλ_c q_k and a = 1/(σ²Δλ_c), free of cancellation.
    Away from the fixed point (``at_fixed_point`` False: the approximate ADATAP) H − g also has the part q̄² − g =
    (Δλ − Δλ')q̄ G_ii (q̄ + G_ii), Δλ' the update (55) of Δλ_c — together exactly the literal H − G_ii². With
    t = G_ii Δλ_c and V = σ⁴Δλ_c⁴ (H − g): e = t⁴σ⁴/V and c = t²σ⁴Δλ_c²/V, finite as G_ii → 0 (e → σ⁴N/S).

    At a converged iterate the variance form is also the more accurate one: its error is O(tol), while that of the
    literal H − G_ii² is O(tol) times κ = g/(H − g), 10-60 on ordinary sites and up to 1e14 on sites few features
    reach.
    """
    k = np.arange(p.size)
    a = 1.0 / (noise_var * dl_c)
    lags = p[:, None] * (k[:, None] - k[None, :])
    V, r_mean = np.empty(dl_c.shape), np.empty(dl_c.shape)
    for start in range(0, dl_c.size, ROW_BLOCK):  # (sites × terms) arrays a block of rows at a time
        rows = slice(start, start + ROW_BLOCK)
        r = 1.0 / (1.0 + a[rows, None] * k)  # Δλ_c q_k
        w = r @ lags  # Σ_l p_l (l − k) r_l
        V[rows] = (p * (r * w) ** 2).sum(axis=1)  # σ⁴Δλ_c⁴ Σ_k p_k (q_k − q̄)²
        r_mean[rows] = r @ p  # Δλ_c q̄
    del a, r, w
    t = G_diag * dl_c
    if not at_fixed_point:
        V = V + (dl - update_delta_lambda(dl_c, p, noise_var)) * noise_var**2 * dl_c * r_mean * t * (r_mean + t)
    del r_mean
    e = t**4  # e = t⁴σ⁴/V, in place (N-vectors are the memory where N is large)
    del t
    e *= noise_var**2
    e /= V
    del V
    d = G_diag**2
    d += e

    def ratio() -> tuple[np.ndarray, float]:
        return e * (dl_c / (G_diag * dl_c)) ** 2, 1.0  # num = e (Δλ_c/t)², t = G_ii Δλ_c

    return Closing(d=d, e=e, ratio=ratio)


def site_means(op, y, dl, keep, at_fixed_point: bool):
    """Given Δλ on the kernel operator ``op``: G (eq. 36), its diagonal, Δλ_c (54) and m (34) with γ = yΔλ (56).

    Here, in :func:`cavity_means` and in :func:`explorer.bootstrap.replica.close_replica` each N-vector is formed in
    place where it can be and when it is needed, by the operations eqs. (54)-(59) read, in their order: where N is
    large (rows in chunks on a cluster) the N-vectors alive at once are the memory."""
    G = op.site_posterior(dl, keep)
    G_diag = G.diagonal()
    with np.errstate(divide="ignore", invalid="ignore"):  # a G_ii that cancelled to 0 is refused just below
        dl_c = np.reciprocal(G_diag)  # eq. (54)
        dl_c -= dl
    if at_fixed_point and not np.all((dl_c > 0) & np.isfinite(dl_c)):
        raise FloatingPointError("Δλ_c left the positive reals")
    return G, G_diag, dl_c, G.matvec(y * dl)  # eq. (34)


def cavity_means(y, dl, dl_c, m) -> tuple[np.ndarray, np.ndarray]:
    """(γ, γ_c): γ = yΔλ (56) and γ_c = −γ + m (Δλ + Δλ_c) (58)."""
    gam = y * dl
    gam_c = dl + dl_c
    gam_c *= m
    gam_c -= gam
    return gam, gam_c


#: The closing each kind of kernel operator names by its ``closing`` attribute.
CLOSINGS: dict[str, Callable[..., Closing]] = {"literal": literal_closing, "fixed-point": fixed_point_closing}

