"""The equations of docs/derivations/vg_mf.md, one by one, against independent computations.

Each test names the equation it checks by the page's number, (CAV), (VG-0)-(VG-5), (MF-1)-(MF-5). The independent
side is written here from the page's text: K⁻¹ formed densely with ``np.linalg.inv`` (the code never forms it),
finite differences of the free energy (VG-0), Poisson sums with scipy's pmf, plain fixed-point iterations, and the
exact limit K = cI. The code's solutions (``solve_variational``, ``solve_mean_field``) are only the points at which
the page's equations are evaluated. Small N (6-8) and random RBF problems keep every test below a second.
"""
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from explorer.bootstrap import replica as R
from explorer.gp_bootstrap import mean_field as MF
from explorer.gp_bootstrap import variational as VG

from .exact_bootstrap import correlated_problem
from .test_variational import free_energy_1  # F₁ of (VG-0), as the page writes it, with a dense K⁻¹

DOC = Path(__file__).resolve().parents[2] / "docs" / "derivations" / "vg_mf.md"
NOISE = 0.01
LABEL = re.compile(r"^\((CAV|VG-\d|MF-\d)\)", re.M)


def test_every_numbered_equation_of_the_page_is_checked_here():
    """The page numbers its equations at the start of a line; each number is cited by a test of this module."""
    labels = set(LABEL.findall(DOC.read_text(encoding="utf-8").replace("```text\n", "")))
    assert labels == {"CAV", "VG-0", "VG-1", "VG-2", "VG-3", "VG-4", "VG-5", "MF-1", "MF-2", "MF-3", "MF-4", "MF-5"}
    source = Path(__file__).read_text(encoding="utf-8").split("def test_every_numbered", 1)[1].split("\n", 1)[1]
    assert not [label for label in labels if f"({label})" not in source]


# ----------------------------------------------------------------------------- §1 variational Gaussian

@pytest.fixture
def vg(rng):
    """A converged VG solution on N = 6 correlated inputs at ν = 0.8, with G = (K⁻¹ + diag Δλ)⁻¹ formed densely."""
    K, y = correlated_problem(rng, 6, 1.0)
    nu = 0.8
    sol = VG.solve_variational(K, y, NOISE, nu * 6, tol=1e-14, max_iter=100_000)
    G = np.linalg.inv(np.linalg.inv(K) + np.diag(sol.dl))
    return K, y, nu, sol, G


def _slope(f, eps=1e-6):
    """Central difference of t ↦ f(t) at 0: truncation O(eps²), round-off ~|F| 1e-16/eps ≈ 1e-9 here."""
    return (f(eps) - f(-eps)) / (2 * eps)


def _symmetric(rng, n, scale=0.05):
    a = rng.normal(size=(n, n))
    return scale * (a + a.T)


def test_vg1_is_stationarity_of_the_free_energy_in_w(vg, rng):
    """(VG-0) is linear in W; its slope along any symmetric dW vanishes at V = G exactly when (VG-1) holds,
    Δλ_i = ν/(σ² + G_ii). With Δλ 10 % off, V = G(1.1 Δλ), the slopes are O(0.1)."""
    K, y, nu, sol, G = vg
    W = -G @ np.diag(sol.lam) @ G
    np.testing.assert_allclose(sol.dl, nu / (NOISE + np.diag(G)), rtol=1e-10)          # (VG-1) itself
    G_off = np.linalg.inv(np.linalg.inv(K) + np.diag(1.1 * sol.dl))
    at, off = [], []
    for _ in range(10):
        dW = _symmetric(rng, 6)
        at.append(abs(_slope(lambda t: free_energy_1(sol.m, G, W + t * dW, K, y, NOISE, nu))))
        off.append(abs(_slope(lambda t: free_energy_1(sol.m, G_off, W + t * dW, K, y, NOISE, nu))))
    assert max(at) < 1e-6 and min(off) > 1e-4, (max(at), min(off))


def test_vg1_plain_iteration_increases_monotonically_to_the_fixed_point(vg):
    """(VG-1) iterated densely from Δλ⁰ = ν/(σ² + K_ii), as the page argues: every step is ≥ the last (G_ii
    decreases as Δλ grows), and the limit is the solver's Δλ."""
    K, y, nu, sol, G = vg
    J = np.linalg.inv(K)
    dl = nu / (NOISE + np.diag(K))
    for _ in range(2000):
        new = nu / (NOISE + np.diag(np.linalg.inv(J + np.diag(dl))))
        assert np.all(new >= dl * (1 - 1e-12))
        if np.max(np.abs(new - dl) / new) < 1e-14:
            break
        dl = new
    np.testing.assert_allclose(dl, sol.dl, rtol=1e-9)


def test_vg2_is_stationarity_in_m_and_a_gp_mean_with_per_site_noise(vg, rng):
    """(VG-2) m = G γ: the slope of (VG-0) along any dm vanishes there (not at m + 0.1), and m is the GP
    posterior mean K (K + diag((σ² + G_ii)/ν))⁻¹ y, as the page says."""
    K, y, nu, sol, G = vg
    W = -G @ np.diag(sol.lam) @ G
    np.testing.assert_allclose(sol.m, G @ (y * sol.dl), rtol=1e-9, atol=1e-12)
    noise = (NOISE + np.diag(G)) / nu
    np.testing.assert_allclose(sol.m, K @ np.linalg.solve(K + np.diag(noise), y), rtol=1e-8, atol=1e-10)
    at, off = [], []
    for _ in range(10):
        dm = rng.normal(size=6)
        at.append(abs(_slope(lambda t: free_energy_1(sol.m + t * dm, G, W, K, y, NOISE, nu))))
        off.append(abs(_slope(lambda t: free_energy_1(sol.m + 0.1 + t * dm, G, W, K, y, NOISE, nu))))
    assert max(at) < 1e-6 and min(off) > 1e-3, (max(at), min(off))


def test_vg3_is_stationarity_in_v_given_w_from_lambda(vg, rng):
    """(VG-3) λ_i = −a_i (r_i + w_i) with W = −G diag(λ) G: the slope of (VG-0) along any symmetric dV vanishes at
    V = G with that W, and not with W = 0 (the variance term matters)."""
    K, y, nu, sol, G = vg
    a, r = nu / (NOISE + np.diag(G)) ** 2, (sol.m - y) ** 2
    W = -G @ np.diag(sol.lam) @ G
    np.testing.assert_allclose(sol.lam, -a * (r + np.diag(W)), rtol=1e-8)
    at, off = [], []
    for _ in range(10):
        dV = _symmetric(rng, 6, 0.01)
        at.append(abs(_slope(lambda t: free_energy_1(sol.m, G + t * dV, W, K, y, NOISE, nu))))
        off.append(abs(_slope(lambda t: free_energy_1(sol.m, G + t * dV, 0 * W, K, y, NOISE, nu))))
    assert max(at) < 1e-6 and max(off) > 1e-4, (max(at), max(off))


def test_vg4_linear_system_equals_the_neumann_series_of_vg3(vg):
    """(VG-4) (I − (G∘G) diag a) w = (G∘G)(a ∘ r) against iterating w ← diag(G diag(a ∘ (r + w)) G), i.e. (VG-3)
    substituted into w = diag(−G diag(λ) G), from w = 0 (it converges: the spectral radius is below 1)."""
    K, y, nu, sol, G = vg
    a, r = nu / (NOISE + np.diag(G)) ** 2, (sol.m - y) ** 2
    w = np.zeros(6)
    for _ in range(5000):
        w_new = np.diag(G @ np.diag(a * (r + w)) @ G)
        if np.max(np.abs(w_new - w)) < 1e-16:
            break
        w = w_new
    np.testing.assert_allclose(np.linalg.solve(np.eye(6) - (G * G) * a[None, :], (G * G) @ (a * r)), w,
                               rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(sol.w, w, rtol=1e-8, atol=1e-14)


def test_vg5_cavity_and_cav_error(vg):
    """(VG-5) the cavity of each site from the dense G and the solution's sites, then (CAV) in both its forms:
    ((γ_c − yΔλ_c)² − λ_c)/Δλ_c² = (cavity mean − y)² + cavity variance, against the code's ε_i and eq. (45)."""
    K, y, nu, sol, G = vg
    g = np.diag(G)
    dl_c, lam_c, gam_c = 1 / g - sol.dl, -sol.w / g**2 - sol.lam, sol.m / g - sol.dl * y
    np.testing.assert_allclose(sol.dl_c, dl_c, rtol=1e-9)
    np.testing.assert_allclose(sol.lam_c, lam_c, rtol=1e-7, atol=1e-10 * np.abs(sol.lam).max())
    np.testing.assert_allclose(sol.gam_c, gam_c, rtol=1e-8, atol=1e-10)
    cav = ((gam_c - y * dl_c) ** 2 - lam_c) / dl_c**2
    mean, var = gam_c / dl_c, -lam_c / dl_c**2
    np.testing.assert_allclose(cav, (mean - y) ** 2 + var, rtol=1e-12)
    np.testing.assert_allclose(VG.vg_per_input_error(sol), cav, rtol=1e-8)
    assert R.bootstrap_test_error(sol) == pytest.approx(np.mean(cav), rel=1e-8)


# ----------------------------------------------------------------------------- §2 mean field

@pytest.fixture
def mf(rng):
    """A mean-field solution on N = 8 correlated inputs at ν = 1.3, with J = K⁻¹ formed densely."""
    K, y = correlated_problem(rng, 8, 1.0)
    nu = 1.3
    return K, y, nu, MF.solve_mean_field(K, y, NOISE, nu * 8), np.linalg.inv(K)


def _mf_coefficients(J, y, nu):
    """(MF-2) by the Poisson sum written out: 200 terms (the tail beyond is below 1e-300 at ν = 1.3)."""
    k = np.arange(200)
    p = stats.poisson.pmf(k, nu)
    A = np.diag(J)[:, None] + k[None, :] / NOISE
    return (p / A).sum(1), y * (p * (k / NOISE) / A).sum(1)


def test_mf2_coefficients_are_the_poisson_sums(mf):
    """(MF-2) a_i = Σ_k p_k/A_ik and b_i = y_i Σ_k p_k (k/σ²)/A_ik, A_ik = J_ii + k/σ², J_ii from the dense inverse."""
    K, y, nu, sol, J = mf
    a, b = _mf_coefficients(J, y, nu)
    np.testing.assert_allclose(sol.J_diag, np.diag(J), rtol=1e-8)
    np.testing.assert_allclose(sol.a, a, rtol=1e-8)
    np.testing.assert_allclose(sol.b, b, rtol=1e-8, atol=1e-14)


def test_mf3_and_mf1_the_literal_linear_system(mf):
    """(MF-3) (I + diag(a)(J − D_J)) m = b and θ = −(J − D_J) m, solved densely here; θ equals (MF-1)
    θ_i = −Σ_{j≠i} J_ij m_j written as a loop, and both equal the code's m and θ."""
    K, y, nu, sol, J = mf
    a, b = _mf_coefficients(J, y, nu)
    off = J - np.diag(np.diag(J))
    m = np.linalg.solve(np.eye(8) + a[:, None] * off, b)
    theta = -off @ m
    theta_loop = np.array([-sum(J[i, j] * m[j] for j in range(8) if j != i) for i in range(8)])
    np.testing.assert_allclose(theta, theta_loop, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sol.m, m, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(sol.theta, theta, rtol=1e-6, atol=1e-7 * np.abs(theta).max())


def test_mf4_cavity_is_the_prior_conditional_and_cav_error(mf):
    """(MF-4) Δλ_c = J_ii, γ_c = θ_i, λ_c = 0: θ_i/J_ii is the prior conditional mean of f_i given f_j = m_j
    (Gaussian conditioning on K, no K⁻¹), and (CAV) gives ε_i = (θ_i/J_ii − y_i)², the code's ε_i."""
    K, y, nu, sol, J = mf
    cond = np.array([K[i, np.arange(8) != i] @ np.linalg.solve(np.delete(np.delete(K, i, 0), i, 1),
                                                                 np.delete(sol.m, i)) for i in range(8)])
    np.testing.assert_allclose(sol.theta / np.diag(J), cond, rtol=1e-6, atol=1e-8)
    dl_c, gam_c, lam_c = np.diag(J), sol.theta, 0.0
    cav = ((gam_c - y * dl_c) ** 2 - lam_c) / dl_c**2                       # (CAV)
    np.testing.assert_allclose(cav, (cond - y) ** 2, rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(MF.mf_per_input_error(sol), cav, rtol=1e-6, atol=1e-12)


def test_mf5_closed_form_without_inverse_equals_the_literal_system(mf):
    """(MF-5) from the page's algebra alone: with d = 1/a − J_ii (> 0), m = (J + diag d)⁻¹(d ∘ y),
    θ = J_ii m − d ∘ (y − m) and ε_i = (m_i − y_i)²(1 + d_i/J_ii)² equal (MF-3)'s m, θ and (MF-4)'s ε, all dense;
    and the code's d and m are those."""
    K, y, nu, sol, J = mf
    a, b = _mf_coefficients(J, y, nu)
    jd = np.diag(J)
    off = J - np.diag(jd)
    m3 = np.linalg.solve(np.eye(8) + a[:, None] * off, b)
    theta3 = -off @ m3
    d = 1 / a - jd
    assert np.all(d > 0)
    m5 = np.linalg.solve(J + np.diag(d), d * y)
    np.testing.assert_allclose(m5, m3, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(jd * m5 - d * (y - m5), theta3, rtol=1e-6, atol=1e-7 * np.abs(theta3).max())
    np.testing.assert_allclose((m5 - y) ** 2 * (1 + d / jd) ** 2, (theta3 / jd - y) ** 2, rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(sol.d, d, rtol=1e-7)
    np.testing.assert_allclose(sol.m, m5, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("nu", [0.4, 2.0])
def test_independent_sites_give_the_exact_error(rng, nu):
    """K = cI, the page's first check: an unseen independent point is predicted by the prior mean 0, so the exact
    ε_i is y_i²; (CAV) with the cavities (VG-5) and (MF-4) gives exactly that."""
    y = rng.normal(size=5)
    K = 1.7 * np.eye(5)
    vg = VG.solve_variational(K, y, NOISE, nu * 5, tol=1e-13, max_iter=10_000)
    mf = MF.solve_mean_field(K, y, NOISE, nu * 5)
    np.testing.assert_allclose(VG.vg_per_input_error(vg), y**2, rtol=1e-9)
    np.testing.assert_allclose(MF.mf_per_input_error(mf), y**2, rtol=1e-9)
