r"""Bootstrap model-structure selection and the fast bootstrap of [LSWV05] (Lendasse et al. 2005).

A *model family* (:class:`explorer.fast_bootstrap.family.ModelFamily`) is indexed by a complexity q (number of
hidden units, of kernels, the LS-SVM γ) and offers ``predict_path(X, y, grid, X_eval, weights, rng)`` -> ndarray
(len(grid), len(X_eval)): the models trained on (X, y) — distinct points with multiplicities ``weights`` — for
every q of ``grid``, evaluated at X_eval (:class:`explorer.fast_bootstrap.lssvm.LSSVM`,
:class:`explorer.fast_bootstrap.networks.RBFN`, :class:`explorer.fast_bootstrap.networks.MLP`).

Bootstrap of §3: for each of J resamples A_j of size N drawn with replacement, the training error
E^{A_j,A_j} (eq. 3) and the error on the original set E^{A_j,I} (eq. 4) give optimism_j (eq. 5), averaged
over j (eq. 6); the apparent error E^{I,I} (eq. 7) plus the optimism estimates the generalization error
(eq. 8), minimised over q. Fast bootstrap of §4: the optimism on a reduced grid with fewer replications,
fitted by a polynomial of order κ0 in q (or log q) whose adequacy against order κ1 is judged by the F test
of eq. (11); the polynomial replaces the optimism on the full grid.

Counting (Tables 1-2): the paper's "number of experiments" is J·Q bootstrap models; ``models_trained`` also
counts the Q models of the apparent error (eq. 7), which both methods need on the full grid.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.polynomial import Polynomial
from scipy import stats

from explorer.chunks import Chunk, Executor, SeedLike, item_generator, root_seed, run_items
from explorer.fast_bootstrap.family import ModelFamily
from explorer.progress import Cancelled, Hooks
from explorer.validation import positive_int

__all__ = ["complexity_grid", "apparent_error", "bootstrap_optimism", "full_bootstrap", "polynomial_f_test",
           "fast_bootstrap", "check_f_test", "FTest", "PolynomialFTest", "BootstrapCurve", "FastBootstrapCurve", "Cancelled",
           "REPLICATION_CHUNK_SIZE", "check_grid"]

#: Bootstrap replications per chunk (the unit of work of an executor, of progress and of cancellation). A
#: replication refits Q models: ~6 ms for the LS-SVM and ~40 ms for the RBFN at Table 1 (N = 200), ~1.5 s for
#: the MLP; 4 keeps a Dask task well above its ~ms overhead and a cancellation within a few replications.
REPLICATION_CHUNK_SIZE = 4


def complexity_grid(start: float, stop: float, step: float) -> np.ndarray:
    """The grid start, start + step, ..., ≤ stop (both ends included when on the grid), as in Tables 1-2.

    Parameters
    ----------
    start, stop : float
        First complexity and upper bound (start ≤ stop).
    step : float
        Spacing, > 0.

    Returns
    -------
    ndarray of shape (Q,)
        The complexities, rounded to 10 decimals (stop counts as on the grid up to a relative 1e-9 step).

    Raises
    ------
    ValueError
        If a value is not finite, ``step`` ≤ 0 or ``stop`` < ``start``.
    """
    if not (np.isfinite([start, stop, step]).all() and step > 0 and stop >= start):
        raise ValueError(f"a grid needs start ≤ stop and step > 0, got start={start}, stop={stop}, step={step}.")
    n = int(np.floor((stop - start) / step + 1e-9)) + 1
    return np.round(start + step * np.arange(n), 10)


@dataclass(frozen=True)
class BootstrapCurve:
    """Full bootstrap of §3 over a grid of complexities; arrays have shape (Q,)."""

    grid: np.ndarray
    apparent_error: np.ndarray  # E^{I,I}(q), eq. (7)
    optimism: np.ndarray  # eq. (6)
    optimism_se: np.ndarray  # standard error of eq. (6) over the J replications
    replications: int
    bootstrap_models: int  # J·Q, the "number of experiments" of Tables 1-2
    models_trained: int  # J·Q + Q (the apparent error needs one model per q)

    generalization_error = property(lambda self: _generalization_error(self), doc="Ê_gen(q), eq. (8).")
    selected = property(lambda self: _selected(self), doc="The complexity minimising eq. (8).")


def _generalization_error(curve) -> np.ndarray:
    """Ê_gen(q) = optimism(q) + E^{I,I}(q), eq. (8)."""
    return curve.optimism + curve.apparent_error


def _selected(curve) -> float:
    """The complexity of the grid minimising eq. (8)."""
    return float(curve.grid[int(np.argmin(_generalization_error(curve)))])


@dataclass(frozen=True)
class FTest:
    """Fisher's test of eq. (11): H0 "the optimism is a polynomial of order κ0" against order κ1."""

    F: float
    df_num: int  # κ1 − κ0
    df_den: int  # K − κ1 − 1
    p_value: float
    kappa0: int
    kappa1: int
    alpha: float = 0.05
    residuals: tuple[float, float] = (np.nan, np.nan)  # SR_0, SR_1 of eq. (12)

    @property
    def accepted(self) -> bool:
        """True when H0 is kept at level α (order κ0 suffices)."""
        return bool(self.p_value >= self.alpha)

    @property
    def degree(self) -> int:
        """The order used for the optimism: κ0 if H0 is kept, else κ1."""
        return self.kappa0 if self.accepted else self.kappa1


@dataclass(frozen=True)
class FastBootstrapCurve:
    """Fast bootstrap of §4: measured optimism on a reduced grid, polynomial on the full grid (Q,)."""

    grid: np.ndarray
    apparent_error: np.ndarray
    optimism: np.ndarray  # the fitted polynomial evaluated on the full grid
    sample_grid: np.ndarray  # the K reduced-grid complexities
    sample_optimism: np.ndarray  # eq. (6) with few replications, shape (K,)
    sample_se: np.ndarray
    replications: int
    f_test: FTest
    polynomial: Polynomial = field(repr=False)
    log_complexity: bool
    bootstrap_models: int
    models_trained: int

    @property
    def degree(self) -> int:
        return self.f_test.degree

    generalization_error = property(lambda self: _generalization_error(self),
                                    doc="Ê_gen(q) = fitted optimism(q) + E^{I,I}(q), eq. (8).")
    selected = property(lambda self: _selected(self), doc="The complexity minimising eq. (8).")


def apparent_error(model: ModelFamily, X: np.ndarray, y: np.ndarray, grid: np.ndarray, rng=None) -> np.ndarray:
    """E^{I,I}(q) = (1/N) Σ_i (h^q(x_i) − y_i)², the models trained on all data, eq. (7).

    Parameters
    ----------
    model : ModelFamily
        LSSVM, RBFN, MLP or any class with ``predict_path`` (:class:`~explorer.fast_bootstrap.family.ModelFamily`).
    X : ndarray of shape (N, d)
        Inputs.
    y : ndarray of shape (N,)
        Targets.
    grid : ndarray of shape (Q,)
        Complexities q, strictly increasing.
    rng : Generator, int or None
        Random source of the training (network initialisation; unused by the LS-SVM).

    Returns
    -------
    ndarray of shape (Q,)
        The apparent error at every q.
    """
    X, y, grid = _data_iv(X, y, grid)
    return np.mean((model.predict_path(X, y, grid, X, None, np.random.default_rng(rng)) - y) ** 2, axis=1)


def bootstrap_optimism(model: ModelFamily, X: np.ndarray, y: np.ndarray, grid: np.ndarray, n_replications: int, *,
                       rng: SeedLike = None, chunk_size: int = REPLICATION_CHUNK_SIZE,
                       executor: Executor | None = None, hooks: Hooks | None = None) -> np.ndarray:
    """optimism_j(q) = E^{A_j,I} − E^{A_j,A_j} (eqs. 3-5) for J resamples A_j of size N. Shape (J, Q).

    A_j is drawn with replacement (multinomial occupation numbers c, Σ c_i = N); the models are trained on
    the distinct points of A_j with multiplicities c, which is training on the duplicated points. Replication j
    is item j of group 0 of the job: it draws c and then every random choice of its training (k-means starts,
    MLP initial weights) from ``chunks.item_generator(root, 0, j)`` alone (c is its first draw,
    ``multinomial(N, 1/N)``), so neither ``chunk_size`` nor ``executor`` changes a number. ``hooks``: ``report`` after each chunk ("j/J replications"), ``should_stop`` cancels the
    queued chunks (:class:`Cancelled` counts replications).

    Parameters
    ----------
    model, X, y, grid
        As in :func:`apparent_error`; ``model`` is pickled to the workers of a Dask executor.
    n_replications : int
        J, the number of resamples.
    rng : int, SeedSequence, Generator or None
        Root seed of the job (``chunks.root_seed``).
    chunk_size : int
        Replications per chunk, the unit of work of an executor (and of progress and cancellation).
    executor : Executor, optional
        Where the chunks run: in this process (default) or on Dask workers (``explorer.runtime.engine``).
    hooks : Hooks, optional
        Progress and cancellation.

    Returns
    -------
    ndarray of shape (J, Q)
        optimism_j(q), eq. (5), for every resample and complexity, in replication order.
    """
    X, y, grid = _data_iv(X, y, grid)
    J = _replications_iv(n_replications)
    chunk_size = positive_int(chunk_size, "chunk_size", "It is the number of replications per chunk.")
    return run_items(_optimism_chunk, (X, y), J, rng, (model, grid), chunk_size=chunk_size, executor=executor,
                     hooks=hooks, unit="replications")


def _optimism_chunk(shared, chunk: Chunk, root, model, grid) -> np.ndarray:
    """optimism_j(q) of replications ``chunk.start`` .. ``chunk.stop - 1``, rows of shape (chunk.size, Q)."""
    X, y = shared
    n = y.size
    out = np.empty((chunk.size, grid.size))
    for row, j in enumerate(range(chunk.start, chunk.stop)):
        gen = item_generator(root, chunk.group, j)
        c = gen.multinomial(n, np.full(n, 1.0 / n), size=1)[0]  # A_j: N draws with replacement
        a = c > 0
        sq = (model.predict_path(X[a], y[a], grid, X, c[a], gen) - y) ** 2  # (Q, N)
        out[row] = sq.mean(axis=1) - sq @ c / n  # eq. (5) = eq. (4) − eq. (3)
    return out


def full_bootstrap(model: ModelFamily, X, y, grid, n_replications: int = 100, *, rng: SeedLike = None,
                   apparent: np.ndarray | None = None, chunk_size: int = REPLICATION_CHUNK_SIZE,
                   executor: Executor | None = None, hooks: Hooks | None = None) -> BootstrapCurve:
    """The bootstrap of §3 on every complexity of ``grid`` (eqs. 3-8); ``apparent`` reuses eq. (7).

    Parameters
    ----------
    model, X, y, grid
        As in :func:`apparent_error`.
    n_replications : int
        J, the number of resamples (Table 1: 100).
    rng : int, SeedSequence, Generator or None
        Root seed (``chunks.root_seed``): the replications are group 0 of the job, as in
        :func:`bootstrap_optimism`; the apparent error draws from ``chunks.item_generator(root, 1, 0)``.
    apparent : ndarray of shape (Q,), optional
        E^{I,I}(q) of eq. (7) if already computed (:func:`apparent_error`).
    chunk_size, executor, hooks
        As in :func:`bootstrap_optimism`.

    Returns
    -------
    BootstrapCurve
        Apparent error, mean optimism (eq. 6) with its standard error over the J resamples, and the
        model counts; ``generalization_error`` and ``selected`` give eq. (8) and its minimiser.
    """
    X, y, grid = _data_iv(X, y, grid)
    root = root_seed(rng)
    opt = bootstrap_optimism(model, X, y, grid, n_replications, rng=root, chunk_size=chunk_size,
                             executor=executor, hooks=hooks)
    app = (apparent_error(model, X, y, grid, item_generator(root, 1, 0)) if apparent is None
           else np.asarray(apparent, dtype=float))
    J = opt.shape[0]
    return BootstrapCurve(grid=grid, apparent_error=app, optimism=opt.mean(axis=0),  # eq. (6)
                          optimism_se=_se(opt), replications=J, bootstrap_models=J * grid.size,
                          models_trained=J * grid.size + grid.size)


@dataclass(frozen=True)
class PolynomialFTest:
    """The two polynomial fits of eq. (10) and the F test of eq. (11) between them.

    Attributes
    ----------
    test : FTest
        F, degrees of freedom, p-value and the decision.
    low : Polynomial
        The least-squares polynomial of order κ0 (H0).
    high : Polynomial
        The least-squares polynomial of order κ1 (H1).
    """

    test: FTest
    low: Polynomial = field(repr=False)
    high: Polynomial = field(repr=False)

    @property
    def chosen(self) -> Polynomial:
        """The polynomial of the order the test selects: ``low`` if H0 is kept, else ``high``."""
        return self.low if self.test.accepted else self.high


def polynomial_f_test(u: np.ndarray, v: np.ndarray, kappa0: int = 1, kappa1: int = 2,
                      alpha: float = 0.05) -> PolynomialFTest:
    """Fit v ≈ Σ α_k u^k of orders κ0 and κ1 (eq. 10) and compare them by the F test of eq. (11).

    F = ((SR_0 − SR_1)/(κ1 − κ0)) / (SR_1/(K − κ1 − 1)), SR_j the residual sums of squares (eq. 12), with
    (κ1 − κ0, K − κ1 − 1) degrees of freedom.

    Parameters
    ----------
    u : ndarray of shape (K,)
        The complexities of the reduced grid (or their logarithms).
    v : ndarray of shape (K,)
        The bootstrap optimism at ``u``, eq. (6).
    kappa0, kappa1 : int
        Orders under H0 and H1, 0 ≤ κ0 < κ1 and K ≥ κ1 + 2.
    alpha : float
        Level of the test.

    Returns
    -------
    PolynomialFTest
        The test and the polynomials of order κ0 (``low``) and κ1 (``high``).
    """
    u, v, kappa0, kappa1 = _f_test_iv(u, v, kappa0, kappa1, alpha)
    fits = [Polynomial.fit(u, v, deg) for deg in (kappa0, kappa1)]
    sr0, sr1 = (float(np.sum((v - p(u)) ** 2)) for p in fits)  # eq. (12)
    df_num, df_den = kappa1 - kappa0, u.size - kappa1 - 1
    drop = max(sr0 - sr1, 0.0)
    if sr1 <= 1e-30 * max(float(np.sum(v**2)), 1e-300):
        F = 0.0 if drop <= 1e-30 * max(float(np.sum(v**2)), 1e-300) else np.inf
    else:
        F = (drop / df_num) / (sr1 / df_den)  # eq. (11)
    p = float(stats.f.sf(F, df_num, df_den))
    test = FTest(F=float(F), df_num=df_num, df_den=df_den, p_value=p, kappa0=kappa0, kappa1=kappa1,
                 alpha=alpha, residuals=(sr0, sr1))
    return PolynomialFTest(test=test, low=fits[0], high=fits[1])


def fast_bootstrap(model: ModelFamily, X, y, grid, sample_grid, n_replications: int = 10, *, kappa0: int = 1,
                   kappa1: int = 2, alpha: float = 0.05, log_complexity: bool = False, rng: SeedLike = None,
                   apparent: np.ndarray | None = None, chunk_size: int = REPLICATION_CHUNK_SIZE,
                   executor: Executor | None = None, hooks: Hooks | None = None) -> FastBootstrapCurve:
    """The fast bootstrap of §4: optimism on ``sample_grid`` with J = ``n_replications``, a polynomial in q
    (or log q) of the order the F test of eq. (11) chooses, evaluated on ``grid`` and added to eq. (7).

    Parameters
    ----------
    model : ModelFamily
        The model family indexed by the complexity q, as in :func:`apparent_error`.
    X : ndarray of shape (N, d)
        Inputs.
    y : ndarray of shape (N,)
        Targets.
    grid : ndarray of shape (Q,)
        The full grid of complexities, strictly increasing, on which eq. (8) is minimised.
    sample_grid : ndarray of shape (K,)
        The reduced grid on which the optimism is measured, strictly increasing; K ≥ κ1 + 2.
    n_replications : int
        J, the number of bootstrap resamples (eq. 6).
    kappa0, kappa1 : int
        Polynomial orders under H0 and H1 of the F test (eqs. 10-11), 0 ≤ κ0 < κ1.
    alpha : float
        Level of the F test.
    log_complexity : bool
        Fit the polynomial in log q instead of q (all complexities must then be positive).
    rng : int, SeedSequence, Generator or None
        Root seed (``chunks.root_seed``) of the resamples and of the model training: the replications are
        group 0 of the job (:func:`bootstrap_optimism`), the apparent error draws from
        ``chunks.item_generator(root, 1, 0)``.
    apparent : ndarray of shape (Q,), optional
        E^{I,I}(q) of eq. (7) already computed on ``grid`` (reused, not recomputed).
    chunk_size : int
        Replications per chunk (:func:`bootstrap_optimism`); changes no number.
    executor : Executor, optional
        Where the replications run: in this process (default) or on Dask workers (``explorer.runtime.engine``).
    hooks : Hooks, optional
        Progress and stop hooks, passed to :func:`bootstrap_optimism`.

    Returns
    -------
    FastBootstrapCurve
        The measured optimism on ``sample_grid``, the chosen polynomial and F test, and the apparent
        error and fitted optimism on ``grid``; ``selected`` is the complexity minimising eq. (8).

    Raises
    ------
    ValueError
        If X and y do not match or are not finite, N < 3, a grid is not strictly increasing, a complexity
        is ≤ 0 with ``log_complexity=True``, J < 1, or κ0, κ1, K, ``alpha`` do not allow the F test.
    Cancelled
        If ``hooks`` asks to stop (the chunks still queued are cancelled).

    Examples
    --------
    >>> import numpy as np
    >>> from explorer.fast_bootstrap.networks import RBFN
    >>> X = np.linspace(-1, 1, 40)[:, None]
    >>> y = np.sin(3 * X[:, 0]) + 0.2 * np.random.default_rng(1).standard_normal(40)
    >>> curve = fast_bootstrap(RBFN(), X, y, complexity_grid(1, 12, 1), complexity_grid(2, 12, 2),
    ...                        n_replications=5, rng=0)
    >>> curve.selected, curve.degree, round(float(curve.generalization_error.min()), 3)
    (8.0, 2, 0.042)
    """
    X, y, grid = _data_iv(X, y, grid)
    sample_grid = check_grid(sample_grid, "sample_grid")
    if log_complexity and (np.any(grid <= 0) or np.any(sample_grid <= 0)):
        raise ValueError("`log_complexity=True` needs positive complexities; the grid has values ≤ 0.")
    root = root_seed(rng)
    opt = bootstrap_optimism(model, X, y, sample_grid, n_replications, rng=root, chunk_size=chunk_size,
                             executor=executor, hooks=hooks)
    u = np.log(sample_grid) if log_complexity else sample_grid
    fit = polynomial_f_test(u, opt.mean(axis=0), kappa0, kappa1, alpha)
    test, poly = fit.test, fit.chosen
    app = (apparent_error(model, X, y, grid, item_generator(root, 1, 0)) if apparent is None
           else np.asarray(apparent, dtype=float))
    J = opt.shape[0]
    return FastBootstrapCurve(
        grid=grid, apparent_error=app, optimism=poly(np.log(grid) if log_complexity else grid),
        sample_grid=sample_grid, sample_optimism=opt.mean(axis=0), sample_se=_se(opt), replications=J,
        f_test=test, polynomial=poly, log_complexity=log_complexity, bootstrap_models=J * sample_grid.size,
        models_trained=J * sample_grid.size + grid.size)


def _se(opt: np.ndarray) -> np.ndarray:
    J = opt.shape[0]
    return opt.std(axis=0, ddof=1) / np.sqrt(J) if J > 1 else np.full(opt.shape[1], np.nan)


# ----------------------------------------------------------------------------- validation

def check_grid(grid, name: str = "grid") -> np.ndarray:
    """A grid of complexities as a float array, checked to be non-empty, finite and strictly increasing.

    Parameters
    ----------
    grid : array_like of shape (G,)
        The complexities (a scalar is a grid of one).
    name : str, optional
        Name of the argument, for the message.

    Returns
    -------
    ndarray of shape (G,)

    Raises
    ------
    ValueError
        If ``grid`` is empty, not 1-D, not finite or not strictly increasing.
    """
    g = np.atleast_1d(np.asarray(grid, dtype=float))
    if g.ndim != 1 or g.size == 0 or not np.all(np.isfinite(g)):
        raise ValueError(f"`{name}` must be a non-empty 1-D list of finite complexities, got {grid!r}.")
    if np.any(np.diff(g) <= 0):
        raise ValueError(f"`{name}` must be strictly increasing, got {g.tolist()}.")
    return g


def _data_iv(X, y, grid):
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.size:
        raise ValueError(f"`X` must be (n, d) and `y` (n,) with the same n, got {X.shape} and {y.shape}.")
    if y.size < 3:
        raise ValueError(f"the bootstrap needs at least 3 data points, got {y.size}.")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        raise ValueError("`X` and `y` must be finite; found NaN or inf. Clean the data first.")
    return X, y, check_grid(grid)


def _replications_iv(J) -> int:
    if float(J) != int(J) or int(J) < 1:
        raise ValueError(f"`n_replications` must be a whole number ≥ 1, got {J}. It is J of eq. (6).")
    return int(J)


def check_f_test(K: int, kappa0: int, kappa1: int) -> None:
    """Raise ValueError unless the F test of eq. (11) can compare orders κ0 < κ1 on K reduced-grid points.

    Parameters
    ----------
    K : int
        Number of complexities of the reduced grid.
    kappa0, kappa1 : int
        Polynomial orders under H0 and H1; whole numbers with 0 ≤ κ0 < κ1 and K ≥ κ1 + 2
        (K − κ1 − 1 ≥ 1 degrees of freedom).

    Raises
    ------
    ValueError
        If the orders are not whole numbers with 0 ≤ κ0 < κ1, or K < κ1 + 2.
    """

    if not (int(kappa0) == kappa0 and int(kappa1) == kappa1 and 0 <= kappa0 < kappa1):
        raise ValueError(f"The F test of eq. (11) compares order κ0 with a higher order κ1: orders must be whole "
                         f"numbers with 0 ≤ κ0 < κ1; set κ0 < κ1, got κ0 = {kappa0}, κ1 = {kappa1}.")
    if K < kappa1 + 2:
        raise ValueError(f"The F test of eq. (11) needs K ≥ κ1 + 2 complexities: it needs at least κ1 + 2 = "
                         f"{int(kappa1) + 2} points on the reduced grid (K − κ1 − 1 ≥ 1 degrees of freedom), got "
                         f"K = {K}. Widen the reduced grid or lower its step.")


def _f_test_iv(u, v, kappa0, kappa1, alpha):
    u = np.asarray(u, dtype=float)
    v = np.asarray(v, dtype=float)
    if u.shape != v.shape or u.ndim != 1:
        raise ValueError(f"`u` and `v` must be 1-D of equal length, got {u.shape} and {v.shape}.")
    check_f_test(u.size, kappa0, kappa1)
    if not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be in (0, 1), got {alpha}.")
    return u, v, int(kappa0), int(kappa1)
