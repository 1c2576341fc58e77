r"""Covariance functions with hyperparameters in log space (scikit-learn's convention).

Every kernel ``k`` is immutable and offers

* ``k(X, Y)`` -> ndarray of shape (n, m), :math:`K_{ab} = k(x_a, y_b)`;
* ``k(X, eval_gradient=True)`` -> ``(K, dK)``, ``dK`` of shape (n, n, p) with
  :math:`dK_{abi} = \partial K_{ab} / \partial\theta_i`, where :math:`\theta` = ``k.theta``
  holds the logarithms of the p free hyperparameters, named by ``k.hyperparameter_names``;
* ``k.with_theta(theta)`` -> a new kernel, ``k.bounds`` -> log-space bounds of shape (p, 2);
* ``k1 + k2`` and ``k1 * k2`` -> :class:`Sum` and :class:`Product` (theta concatenated, names
  prefixed ``"k1."`` and ``"k2."``); a number ``c`` in ``c * k`` becomes :class:`Constant` (c).

Hyperparameters listed in ``fixed`` keep their value and are left out of theta, bounds and gradient.

The stationary kernels are written through the scaled squared distance
:math:`r^2 = \sum_j (x_j - x'_j)^2 / \ell_j^2` (one lengthscale, or one per input column: ARD) as
:math:`k = s\, g(r^2)`, s the signal variance. With :math:`w = -2\, dg/dr^2` the lengthscale
gradient is :math:`\partial k / \partial \log \ell_j = s\, w(r^2)\, (x_j - x'_j)^2 / \ell_j^2`.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist, pdist, squareform

__all__ = ["Kernel", "SquaredExponential", "RBF", "RationalQuadratic", "Exponential", "Matern32",
           "Matern52", "Periodic", "Constant", "Sum", "Product", "paper_rbf", "make_kernel",
           "KERNEL_NAMES", "DEFAULT_BOUNDS", "DataDrivenHyperparameters", "data_driven_hyperparameters",
           "check_inputs"]

DEFAULT_BOUNDS = (1e-5, 1e5)
"""Default (lower, upper) bounds of every hyperparameter, natural units."""


def check_inputs(X, name: str = "X") -> np.ndarray:
    """Validated float array of shape (n_samples, n_features): 2-D and finite.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
        Inputs, one per row.
    name : str, optional
        Name of the argument, for the message.

    Returns
    -------
    ndarray of shape (n_samples, n_features)
        ``X`` as float64.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D or has a NaN or infinite entry.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"`{name}` must be a 2-D array of shape (n_samples, n_features), got "
                         f"shape {X.shape}. Reshape a single feature with {name}.reshape(-1, 1).")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"`{name}` contains NaN or inf in {np.sum(~np.isfinite(X))} entries. "
                         "Remove or impute those rows first.")
    return X


def _sqdist(X, Y):
    """Squared Euclidean distances, ndarray of shape (n, m); exactly symmetric when Y is None."""
    if Y is None:
        return squareform(pdist(X, "sqeuclidean"))
    return cdist(X, Y, "sqeuclidean")


class Kernel:
    """Abstract covariance function; see the module docstring for the protocol.

    Subclasses implement ``hyperparameter_names``, ``theta``, ``bounds``, ``params``,
    ``with_theta``, ``_eval(X, Y, eval_gradient)`` (validated inputs, ``Y=None`` meaning ``Y = X``),
    ``_diag(X)`` and ``_check_features(d)``.
    """

    __array_ufunc__ = None  # so that numpy scalars defer to __rmul__/__radd__: np.float64(2) * k

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable; build a new kernel, "
                             "e.g. with kernel.with_theta(theta).")

    def __call__(self, X, Y=None, eval_gradient=False):
        """Covariance matrix K of shape (n, m); with ``eval_gradient`` also dK, shape (n, n, p)."""
        X = check_inputs(X, "X")
        if Y is not None:
            if eval_gradient:
                raise ValueError("eval_gradient=True needs Y=None: the gradient is only defined "
                                 "for the square matrix k(X, X). Call kernel(X, "
                                 "eval_gradient=True).")
            Y = check_inputs(Y, "Y")
            if Y.shape[1] != X.shape[1]:
                raise ValueError(f"`X` and `Y` must have the same number of columns, got "
                                 f"{X.shape[1]} and {Y.shape[1]}. Both hold inputs of one space.")
        self._check_features(X.shape[1])
        return self._eval(X, Y, eval_gradient)

    def diag(self, X):
        """Diagonal of k(X, X), without forming the matrix.

        Parameters
        ----------
        X : array_like of shape (n, n_features)
            Inputs, one per row.

        Returns
        -------
        ndarray of shape (n,)
            k(x_a, x_a) for every row a of ``X``.

        Raises
        ------
        ValueError
            If ``X`` is not 2-D or not finite, or a per-column hyperparameter does not have
            ``n_features`` entries.
        """
        X = check_inputs(X, "X")
        self._check_features(X.shape[1])
        return self._diag(X)

    def _check_features(self, n_features):
        """Raise ValueError if the kernel cannot take inputs with ``n_features`` columns."""

    def _check_theta(self, theta):
        theta = np.asarray(theta, dtype=float)
        p = len(self.hyperparameter_names)
        if theta.shape != (p,) or not np.all(np.isfinite(theta)):
            raise ValueError(f"`theta` must be a finite array of shape ({p},) (log of "
                             f"{self.hyperparameter_names}), got {theta!r}.")
        return theta

    def __add__(self, other):
        return Sum(self, _as_kernel(other))

    def __radd__(self, other):
        return Sum(_as_kernel(other), self)

    def __mul__(self, other):
        return Product(self, _as_kernel(other))

    def __rmul__(self, other):
        return Product(_as_kernel(other), self)


def _as_kernel(other):
    if isinstance(other, Kernel):
        return other
    if isinstance(other, numbers.Real):
        return Constant(float(other))
    raise TypeError("Kernels combine with kernels or positive numbers, got "
                    f"{type(other).__name__}.")


def _format(value):
    if np.ndim(value) == 0:
        return f"{value:.4g}"
    return "[" + ", ".join(f"{v:.4g}" for v in value) + "]"


class _Parametric(Kernel):
    """A kernel with named positive hyperparameters; ``_vector`` names may be arrays (ARD)."""

    _names: tuple[str, ...] = ()
    _vector: tuple[str, ...] = ()

    def __init__(self, *, fixed=(), bounds=None, **values):
        fixed = (fixed,) if isinstance(fixed, str) else tuple(fixed)
        unknown = set(fixed) - set(self._names)
        if unknown:
            raise ValueError(f"`fixed` names unknown hyperparameters {sorted(unknown)}; "
                             f"{type(self).__name__} has {self._names}.")
        values = {n: self._check_value(n, values[n]) for n in self._names}
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_fixed", frozenset(fixed))
        object.__setattr__(self, "_bounds", self._check_bounds(bounds))

    def _check_value(self, name, value):
        value = np.array(value, dtype=float)
        if value.ndim > (name in self._vector) or value.size == 0:
            allowed = ("a scalar or a 1-D array, one entry per input column"
                       if name in self._vector else "a scalar")
            raise ValueError(f"`{name}` of {type(self).__name__} must be {allowed}, got shape "
                             f"{value.shape}.")
        if not np.all(np.isfinite(value) & (value > 0)):
            raise ValueError(f"`{name}` must be positive and finite, got {_format(value)}. "
                             f"Hyperparameters are scales; pass e.g. {name}=1.0.")
        value.setflags(write=False)
        return value if value.ndim else float(value)

    def _check_bounds(self, bounds):
        if not isinstance(bounds, dict):
            bounds = dict.fromkeys(self._names, DEFAULT_BOUNDS if bounds is None else bounds)
        unknown = set(bounds) - set(self._names)
        if unknown:
            raise ValueError(f"`bounds` names unknown hyperparameters {sorted(unknown)}; "
                             f"{type(self).__name__} has {self._names}.")
        out = {}
        for name in self._names:
            pair = np.asarray(bounds.get(name, DEFAULT_BOUNDS), dtype=float)
            if pair.shape != (2,) or not 0 < pair[0] < pair[1]:
                raise ValueError(f"bounds of `{name}` must be a pair 0 < lower < upper (natural "
                                 f"units), got {pair.tolist()}. Pass e.g. bounds=(1e-5, 1e5).")
            out[name] = (float(pair[0]), float(pair[1]))
        return out

    def _free(self):
        return [n for n in self._names if n not in self._fixed]

    @property
    def hyperparameter_names(self):
        """Free hyperparameters in theta order; ARD entries get suffixes ``_0, _1, ...``."""
        names = []
        for n in self._free():
            size = np.size(self._values[n])
            names += [n] if np.ndim(self._values[n]) == 0 else [f"{n}_{j}" for j in range(size)]
        return tuple(names)

    @property
    def theta(self):
        """Log of the free hyperparameters, ndarray of shape (p,)."""
        values = [np.atleast_1d(self._values[n]) for n in self._free()]
        return np.log(np.concatenate(values)) if values else np.empty(0)

    @property
    def bounds(self):
        """Log-space bounds of theta, ndarray of shape (p, 2)."""
        rows = [np.log(self._bounds[n]) for n in self._free()
                for _ in range(np.size(self._values[n]))]
        return np.array(rows).reshape(-1, 2)

    @property
    def params(self):
        """All hyperparameters (free and fixed) in natural units, dict name -> float or ndarray."""
        return dict(self._values)

    def with_theta(self, theta):
        """New kernel of the same type with free hyperparameters ``exp(theta)``."""
        theta, values, start = self._check_theta(theta), dict(self._values), 0
        for name in self._free():
            size = np.size(self._values[name])
            values[name] = np.exp(theta[start:start + size]).reshape(np.shape(self._values[name]))
            start += size
        return type(self)(**values, fixed=self._fixed, bounds=self._bounds)

    def _check_features(self, n_features):
        for name in self._vector:
            value = self._values[name]
            if np.ndim(value) == 1 and value.size != n_features:
                raise ValueError(f"`{name}` has {value.size} entries (one per input column) but X "
                                 f"has {n_features} columns. Pass a scalar {name} or one entry per "
                                 "column.")

    def __repr__(self):
        args = [f"{n}={_format(self._values[n])}" for n in self._names]
        if self._fixed:
            args.append(f"fixed={tuple(n for n in self._names if n in self._fixed)}")
        return f"{type(self).__name__}({', '.join(args)})"

    def _key(self):
        values = tuple((n, tuple(np.atleast_1d(v)), np.ndim(v)) for n, v in self._values.items())
        return type(self), values, self._fixed, tuple(self._bounds.items())

    def __eq__(self, other):
        return isinstance(other, _Parametric) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


class _Stationary(_Parametric):
    r"""k = s g(r²) with r² = Σ_j (x_j − x'_j)²/ℓ_j²; subclasses give g and w = −2 dg/dr²."""

    _names = ("lengthscale", "signal_var")
    _vector = ("lengthscale",)

    def _g(self, r2):
        raise NotImplementedError

    def _w(self, r2):
        raise NotImplementedError

    def _eval(self, X, Y, eval_gradient):
        ls, s = self._values["lengthscale"], self._values["signal_var"]
        r2 = _sqdist(X / ls, None if Y is None else Y / ls)
        K = s * self._g(r2)
        if not eval_gradient:
            return K
        dK, start = np.empty(K.shape + (len(self.hyperparameter_names),)), 0
        for name in self._free():
            size = np.size(self._values[name])
            self._fill_gradient(name, dK[..., start:start + size], X, r2, K)
            start += size
        return K, dK

    def _fill_gradient(self, name, out, X, r2, K):
        """Write ∂K/∂log(name) into ``out`` of shape (n, n, size of name)."""
        if name == "signal_var":
            out[..., 0] = K
        elif name == "lengthscale":
            self._lengthscale_gradient(out, X, r2)
        else:
            out[..., 0] = self._values["signal_var"] * self._dg(name, r2)

    def _lengthscale_gradient(self, out, X, r2):
        # ∂k/∂log ℓ_j = s w(r²) (x_j − x'_j)²/ℓ_j², one (n, n) slice at a time
        ls, sw = self._values["lengthscale"], self._values["signal_var"] * self._w(r2)
        if np.ndim(ls) == 0:
            np.multiply(sw, r2, out=out[..., 0])
            return
        for j, l_j in enumerate(ls):
            diff = (X[:, j, None] - X[None, :, j]) / l_j
            np.multiply(sw, diff * diff, out=out[..., j])

    def _diag(self, X):
        return np.full(X.shape[0], self._values["signal_var"] * self._g(0.0))


class SquaredExponential(_Stationary):
    r"""Squared exponential (RBF) kernel, :math:`k = s \exp(-r^2/2)`.

    Parameters
    ----------
    lengthscale : float or array of shape (n_features,)
        ℓ, one per input column for automatic relevance determination (ARD).
    signal_var : float
        s, the prior variance k(x, x).
    bounds : (lower, upper) or dict name -> (lower, upper)
        Natural units; default ``DEFAULT_BOUNDS``.
    fixed : names of hyperparameters kept out of theta.
    """

    def __init__(self, lengthscale=1.0, signal_var=1.0, *, bounds=None, fixed=()):
        super().__init__(lengthscale=lengthscale, signal_var=signal_var, bounds=bounds, fixed=fixed)

    def _g(self, r2):
        return np.exp(-0.5 * r2)

    def _w(self, r2):
        return np.exp(-0.5 * r2)


RBF = SquaredExponential


class RationalQuadratic(_Stationary):
    r"""Rational quadratic kernel, :math:`k = s\,(1 + r^2/(2\alpha))^{-\alpha}`.

    A scale mixture of squared exponentials; α → ∞ recovers it. Parameters as
    :class:`SquaredExponential`, plus ``alpha`` (α > 0, the shape parameter).
    """

    _names = ("lengthscale", "alpha", "signal_var")

    def __init__(self, lengthscale=1.0, alpha=1.0, signal_var=1.0, *, bounds=None, fixed=()):
        super().__init__(lengthscale=lengthscale, alpha=alpha, signal_var=signal_var, bounds=bounds,
                         fixed=fixed)

    def _base(self, r2):
        return 1.0 + r2 / (2.0 * self._values["alpha"])

    def _g(self, r2):
        return self._base(r2) ** -self._values["alpha"]

    def _w(self, r2):
        return self._base(r2) ** (-self._values["alpha"] - 1.0)

    def _dg(self, name, r2):
        # ∂g/∂log α = g (−α log b + r²/(2b)), b = 1 + r²/(2α)
        a, b = self._values["alpha"], self._base(r2)
        return b ** -a * (-a * np.log(b) + r2 / (2.0 * b))


class Exponential(_Stationary):
    r"""Exponential (Matérn ν = 1/2, Ornstein-Uhlenbeck) kernel, :math:`k = s\,e^{-r}`.

    Parameters as :class:`SquaredExponential`.
    """

    def __init__(self, lengthscale=1.0, signal_var=1.0, *, bounds=None, fixed=()):
        super().__init__(lengthscale=lengthscale, signal_var=signal_var, bounds=bounds, fixed=fixed)

    def _g(self, r2):
        return np.exp(-np.sqrt(r2))

    def _w(self, r2):
        # w = e^{-r}/r; at r = 0 every (x_j − x'_j)² vanishes too and the gradient is 0
        r = np.sqrt(r2)
        return np.divide(np.exp(-r), r, out=np.zeros_like(r), where=r > 0)


class Matern32(_Stationary):
    r"""Matérn ν = 3/2 kernel, :math:`k = s\,(1 + \sqrt3 r)\,e^{-\sqrt3 r}`.

    Parameters as :class:`SquaredExponential`.
    """

    def __init__(self, lengthscale=1.0, signal_var=1.0, *, bounds=None, fixed=()):
        super().__init__(lengthscale=lengthscale, signal_var=signal_var, bounds=bounds, fixed=fixed)

    def _g(self, r2):
        r = np.sqrt(3.0 * r2)
        return (1.0 + r) * np.exp(-r)

    def _w(self, r2):
        return 3.0 * np.exp(-np.sqrt(3.0 * r2))


class Matern52(_Stationary):
    r"""Matérn ν = 5/2 kernel, :math:`k = s\,(1 + \sqrt5 r + 5r^2/3)\,e^{-\sqrt5 r}`.

    Parameters as :class:`SquaredExponential`.
    """

    def __init__(self, lengthscale=1.0, signal_var=1.0, *, bounds=None, fixed=()):
        super().__init__(lengthscale=lengthscale, signal_var=signal_var, bounds=bounds, fixed=fixed)

    def _g(self, r2):
        r = np.sqrt(5.0 * r2)
        return (1.0 + r + r * r / 3.0) * np.exp(-r)

    def _w(self, r2):
        r = np.sqrt(5.0 * r2)
        return 5.0 / 3.0 * (1.0 + r) * np.exp(-r)


class Periodic(_Parametric):
    r"""Periodic (exp-sine-squared) kernel, :math:`k = s \exp(-\sum_j u_j)`.

    :math:`u_j = 2 \sin^2(\pi (x_j - x'_j)/p) / \ell_j^2`.

    For one input column this is scikit-learn's ``ExpSineSquared`` (times s). For several columns
    scikit-learn puts the Euclidean distance ‖x − x'‖ inside the sine, which is not positive
    semi-definite in general; the sum over columns used here (GPflow's form) is a product of 1-D
    periodic kernels and therefore is. The period p is shared; the lengthscale may be ARD.
    """

    _names = ("lengthscale", "period", "signal_var")
    _vector = ("lengthscale",)

    def __init__(self, lengthscale=1.0, period=1.0, signal_var=1.0, *, bounds=None, fixed=()):
        super().__init__(lengthscale=lengthscale, period=period, signal_var=signal_var,
                         bounds=bounds, fixed=fixed)

    def _eval(self, X, Y, eval_gradient):
        ls, p, s = (self._values[n] for n in self._names)
        Y = X if Y is None else Y
        ls = np.broadcast_to(ls, X.shape[1])
        # u = Σ_j u_j, v = −∂u/∂log p = Σ_j 2 a_j sin(2 a_j)/ℓ_j², a_j = π Δ_j/p; column by column
        u, v, dls = np.zeros((X.shape[0], Y.shape[0])), 0.0, []
        for j, l_j in enumerate(ls):
            arg = np.pi * (X[:, j, None] - Y[None, :, j]) / p
            u_j = 2.0 * (np.sin(arg) / l_j) ** 2
            u += u_j
            if eval_gradient:
                v += 2.0 * arg * np.sin(2.0 * arg) / l_j**2
                dls.append(2.0 * u_j)                         # ∂u/∂log ℓ_j = −2 u_j
        K = s * np.exp(-u)
        if not eval_gradient:
            return K
        grads = {"lengthscale": dls if np.ndim(self._values["lengthscale"]) else [sum(dls)],
                 "period": [v], "signal_var": [np.ones_like(K)]}
        blocks = [g * K for n in self._free() for g in grads[n]]
        return K, np.stack(blocks, axis=-1) if blocks else np.empty(K.shape + (0,))

    def _diag(self, X):
        return np.full(X.shape[0], self._values["signal_var"])


class Constant(_Parametric):
    """Constant kernel, k(x, x') = c (``value``); ``c * kernel`` builds it from a number."""

    _names = ("value",)

    def __init__(self, value=1.0, *, bounds=None, fixed=()):
        super().__init__(value=value, bounds=bounds, fixed=fixed)

    def _eval(self, X, Y, eval_gradient):
        K = np.full((X.shape[0], X.shape[0] if Y is None else Y.shape[0]), self._values["value"])
        return (K, K[..., None].repeat(len(self._free()), axis=2)) if eval_gradient else K

    def _diag(self, X):
        return np.full(X.shape[0], self._values["value"])


class _Binary(Kernel):
    """Two kernels combined elementwise; theta = concatenation of k1.theta and k2.theta."""

    _op = "?"

    def __init__(self, k1, k2):
        for name, k in (("k1", k1), ("k2", k2)):
            if not isinstance(k, Kernel):
                raise TypeError(f"`{name}` must be a Kernel, got {type(k).__name__}.")
        object.__setattr__(self, "k1", k1)
        object.__setattr__(self, "k2", k2)

    @property
    def hyperparameter_names(self):
        return tuple(f"k1.{n}" for n in self.k1.hyperparameter_names) + \
            tuple(f"k2.{n}" for n in self.k2.hyperparameter_names)

    @property
    def theta(self):
        return np.concatenate([self.k1.theta, self.k2.theta])

    @property
    def bounds(self):
        return np.vstack([self.k1.bounds, self.k2.bounds])

    @property
    def params(self):
        return {f"{k}.{n}": v for k in ("k1", "k2") for n, v in getattr(self, k).params.items()}

    def with_theta(self, theta):
        theta, p1 = self._check_theta(theta), len(self.k1.hyperparameter_names)
        return type(self)(self.k1.with_theta(theta[:p1]), self.k2.with_theta(theta[p1:]))

    def _check_features(self, n_features):
        self.k1._check_features(n_features)
        self.k2._check_features(n_features)

    def __repr__(self):
        return f"({self.k1!r} {self._op} {self.k2!r})"

    def __eq__(self, other):
        return type(other) is type(self) and (self.k1, self.k2) == (other.k1, other.k2)

    def __hash__(self):
        return hash((type(self), self.k1, self.k2))


class Sum(_Binary):
    """k(x, x') = k1(x, x') + k2(x, x')."""

    _op = "+"

    def _eval(self, X, Y, eval_gradient):
        if not eval_gradient:
            return self.k1._eval(X, Y, False) + self.k2._eval(X, Y, False)
        (K1, dK1), (K2, dK2) = self.k1._eval(X, Y, True), self.k2._eval(X, Y, True)
        return K1 + K2, np.concatenate([dK1, dK2], axis=2)

    def _diag(self, X):
        return self.k1._diag(X) + self.k2._diag(X)


class Product(_Binary):
    """k(x, x') = k1(x, x') k2(x, x'); ∂k/∂θ by the product rule."""

    _op = "*"

    def _eval(self, X, Y, eval_gradient):
        if not eval_gradient:
            return self.k1._eval(X, Y, False) * self.k2._eval(X, Y, False)
        (K1, dK1), (K2, dK2) = self.k1._eval(X, Y, True), self.k2._eval(X, Y, True)
        return K1 * K2, np.concatenate([dK1 * K2[..., None], K1[..., None] * dK2], axis=2)

    def _diag(self, X):
        return self.k1._diag(X) * self.k2._diag(X)


def paper_rbf(X, l2=73.54, scale="sd", *, signal_var=1.0, bounds=None, fixed=()):
    r"""RBF kernel of [MO03], :math:`K(x, x') = \exp(-\sum_j (x_j - x'_j)^2 / (v_j l^2))`.

    Section 5 of [MO03] uses l² = 73.54 with v_j the standard deviation of input j (Boston
    housing, ``scale="sd"``) and l² = 3 with v_j the variance (robot arm, ``scale="var"``); both
    with ``ddof=1``. As a :class:`SquaredExponential` this is the ARD lengthscale
    :math:`\ell_j = \sqrt{v_j l^2 / 2}` and signal variance 1.

    Parameters
    ----------
    X : array of shape (n_samples, n_features)
        The inputs whose column spread sets v_j.
    l2 : float
        l², the squared global lengthscale.
    scale : {"sd", "var"}
        Whether v_j is the sample standard deviation or the sample variance of column j.
    signal_var : float, optional
        Signal variance k(x, x); 1 in the paper.
    bounds : (lower, upper) or dict name -> (lower, upper), optional
        Natural-unit bounds, as for :class:`SquaredExponential`.
    fixed : sequence of str, optional
        Names of hyperparameters kept out of theta.

    Returns
    -------
    SquaredExponential
        With ARD lengthscale of shape (n_features,), ℓ_j = sqrt(v_j l² / 2).

    Raises
    ------
    ValueError
        If ``X`` is not a finite 2-D array, ``scale`` is not "sd"/"var", ``l2`` is not positive and
        finite, or a column of ``X`` is constant (or ``X`` has one row), so that v_j = 0.
    """
    X = check_inputs(X, "X")
    if scale not in ("sd", "var"):
        raise ValueError(f'`scale` must be "sd" or "var", got {scale!r}. It says whether v_j is '
                         "the standard deviation or the variance of input column j.")
    if not (np.isfinite(l2) and l2 > 0):
        raise ValueError(f"`l2` must be positive and finite, got {l2!r}. It is the squared "
                         "lengthscale l².")
    v = X.std(axis=0, ddof=1) if X.shape[0] > 1 else np.zeros(X.shape[1])
    v = v if scale == "sd" else v**2
    if not np.all(v > 0):
        raise ValueError(f"every input column must vary to set v_j, but columns "
                         f"{np.flatnonzero(~(v > 0)).tolist()} are constant (or X has one row). "
                         "Drop constant columns first.")
    return SquaredExponential(np.sqrt(v * l2 / 2.0), signal_var, bounds=bounds, fixed=fixed)


_KERNELS = {"se": SquaredExponential, "rbf": SquaredExponential, "rq": RationalQuadratic,
            "exponential": Exponential, "matern32": Matern32, "matern52": Matern52,
            "periodic": Periodic}
KERNEL_NAMES = ("se", "rq", "exponential", "matern32", "matern52", "periodic")
"""Names accepted by :func:`make_kernel` (``"rbf"`` is an alias of ``"se"``)."""


def make_kernel(name, n_features, *, ard=False, **hyperparameters):
    """Kernel by name, for the CLI and the app.

    Parameters
    ----------
    name : one of ``KERNEL_NAMES``
    n_features : int
        Number of input columns; an array lengthscale must have this length.
    ard : bool
        If True, a scalar (or default) lengthscale is repeated once per input column.
    **hyperparameters
        Passed to the kernel class (e.g. ``lengthscale``, ``signal_var``, ``fixed``, ``bounds``).

    Returns
    -------
    Kernel
        An instance of the named class (:class:`SquaredExponential` for ``"se"`` and ``"rbf"``).

    Raises
    ------
    ValueError
        If ``name`` is unknown, ``n_features`` is not a positive integer, or an array
        hyperparameter does not have ``n_features`` entries.
    """
    cls = _KERNELS.get(str(name).lower())
    if cls is None:
        raise ValueError(f"unknown kernel {name!r}; choose one of {KERNEL_NAMES}.")
    if not (isinstance(n_features, numbers.Integral) and n_features >= 1):
        raise ValueError(f"`n_features` must be a positive integer, got {n_features!r}.")
    if ard:
        ls = np.asarray(hyperparameters.get("lengthscale", 1.0), dtype=float)
        hyperparameters["lengthscale"] = np.full(n_features, ls) if ls.ndim == 0 else ls
    kernel = cls(**hyperparameters)
    kernel._check_features(n_features)
    return kernel


@dataclass(frozen=True)
class DataDrivenHyperparameters:
    """A start on the data's own scale: ℓ the median distance between inputs, σ_f² the variance of the target."""

    lengthscale: float
    signal_var: float
    n_used: int


def data_driven_hyperparameters(X, y, *, max_points: int = 1000, rng=0) -> DataDrivenHyperparameters:
    """Lengthscale and signal variance on the scale of the data (the "median heuristic").

    ℓ is the median Euclidean distance ‖x_i − x_j‖ over the pairs i < j of the inputs, or of ``max_points`` of them
    drawn at random without replacement when there are more (the pairs of n inputs are n²/2 distances: 8 MB at the
    default 1000, 32 GB at 90,000 rows); σ_f² = var(y) over all n with the sample divisor n − 1. A zero median
    (mostly identical inputs) or variance falls back to 1, so that the kernel stays valid.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Inputs, n >= 2.
    y : ndarray of shape (n,)
        Targets.
    max_points : int, optional
        Most inputs used for the median, >= 2.
    rng : Generator, int or None, optional
        Seed of the random choice of ``max_points`` inputs (used only when n > ``max_points``).

    Returns
    -------
    DataDrivenHyperparameters
        ``lengthscale``, ``signal_var`` and ``n_used``, the number of inputs of the median.

    Examples
    --------
    >>> data_driven_hyperparameters(np.array([[0.0], [1.0], [3.0]]), np.array([1.0, 2.0, 3.0]))
    DataDrivenHyperparameters(lengthscale=2.0, signal_var=1.0, n_used=3)
    """
    X, y = check_inputs(X), np.asarray(y, dtype=float)
    if X.shape[0] < 2 or y.shape != (X.shape[0],) or max_points < 2:
        raise ValueError(f"`X` (n, d) and `y` (n,) must describe the same n >= 2 cases and `max_points` must be at "
                         f"least 2, got shapes {X.shape} and {y.shape} and max_points={max_points}.")
    used = X
    if X.shape[0] > max_points:  # the pairs of a random subsample: bounded time and memory
        used = X[np.random.default_rng(rng).choice(X.shape[0], max_points, replace=False)]
    median = float(np.median(pdist(used)))
    var = float(np.var(y, ddof=1))
    return DataDrivenHyperparameters(median if median > 0 else 1.0, var if var > 0 else 1.0, used.shape[0])
