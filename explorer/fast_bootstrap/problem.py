"""The problem of [LSWV05]'s fast bootstrap: the data as the bootstrap sees them, the model family, the setting.

:func:`prepare_data` the inputs and targets (the toy data in the paper's units, any other data set standardised),
:func:`make_model` the family (LS-SVM, RBFN or MLP) and its width, :class:`Setting` the complexity grids and
replication counts of the full and the fast bootstrap (:data:`TABLE_1`, :data:`TABLE_2`, :func:`paper_setting`,
:func:`with_overrides`). The CLI's ``fast-bootstrap`` and the app's fast-bootstrap tab build theirs with these.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.spatial.distance import pdist

from explorer.datasets import Dataset
from explorer.fast_bootstrap import bootstrap as fastboot
from explorer.fast_bootstrap.lssvm import LSSVM
from explorer.fast_bootstrap.networks import MLP, RBFN
from explorer.kernels import SquaredExponential

__all__ = ["MODELS", "TOY_LENGTHSCALE", "Grids", "Setting", "TABLE_1", "TABLE_2", "paper_setting", "with_overrides",
           "make_model", "default_lengthscale", "PreparedData", "prepare_data"]


#: The model families of [LSWV05]: least-squares SVM, radial-basis-function network, multilayer perceptron.
MODELS = ("ls-svm", "rbfn", "mlp")


#: Kernel width ℓ of the LS-SVM on the toy data: the maximum-evidence lengthscale of a GP on eq. (19) data
#: (0.084-0.087 over seeds 0-2 with [Fis16]'s optimiser); [LSWV05] does not state its width.
TOY_LENGTHSCALE = 0.085


@dataclass(frozen=True)
class Grids:
    """The complexity grids of a :class:`Setting` as arrays: ``full`` (full bootstrap, §3) and ``fast``
    (the reduced grid of the fast bootstrap, §4); ndarrays of shape (Q,) and (Q_fast,)."""

    full: np.ndarray
    fast: np.ndarray


@dataclass(frozen=True)
class Setting:
    """Grids (start, stop, step) and replication counts of the full and fast bootstrap (Tables 1-2)."""

    full_grid: tuple[float, float, float]
    full_replications: int
    fast_grid: tuple[float, float, float]
    fast_replications: int
    log_complexity: bool = False

    def grids(self) -> Grids:
        """The full and the reduced grid as arrays (:func:`~explorer.fast_bootstrap.bootstrap.complexity_grid`).

        Returns
        -------
        Grids
            ``full`` from ``full_grid`` and ``fast`` from ``fast_grid``.

        Raises
        ------
        ValueError
            If a (start, stop, step) triple does not describe a grid (see ``complexity_grid``).
        """
        return Grids(fastboot.complexity_grid(*self.full_grid), fastboot.complexity_grid(*self.fast_grid))


#: Table 1 of [LSWV05] (toy example): full bootstrap 100 replications, fast bootstrap 10.
TABLE_1 = {
    "mlp": Setting((1, 13, 1), 100, (1, 13, 3), 10),
    "rbfn": Setting((10, 19, 1), 100, (10, 19, 3), 10),
    "ls-svm": Setting((5, 50, 0.1), 100, (5, 50, 5), 10, log_complexity=True),
}


#: Table 2 of [LSWV05] (Santa Fe laser, fast bootstrap only; the full grid here is the reduced one
#: refined to step 1 / 5 / 5 so that the full bootstrap can be compared when asked for).
TABLE_2 = {
    "mlp": Setting((4, 9, 1), 100, (4, 9, 1), 10),
    "rbfn": Setting((60, 140, 5), 100, (60, 140, 20), 20),
    "ls-svm": Setting((15, 105, 1), 100, (15, 105, 5), 10, log_complexity=True),
}


def paper_setting(model: str, data: Dataset) -> Setting:
    """Table 1's setting for the toy data, Table 2's for a time series embedding, Table 1's otherwise.

    Parameters
    ----------
    model : {"ls-svm", "rbfn", "mlp"}
        The model family.
    data : Dataset
        The data; a NAR embedding (target ``x(t+1)``) selects Table 2.

    Returns
    -------
    Setting
        Grids and replication counts of the paper for this model.

    Raises
    ------
    ValueError
        If ``model`` is not one of :data:`MODELS`.
    """
    _check_model(model)
    return (TABLE_2 if data.target_name == "x(t+1)" else TABLE_1)[model]


def with_overrides(setting: Setting, **changes) -> Setting:
    """A copy of ``setting`` with some fields replaced (validated by building the grids).

    Parameters
    ----------
    setting : Setting
        The setting to start from.
    **changes
        New values of :class:`Setting` fields; None keeps the old value.

    Returns
    -------
    Setting
        The new setting.

    Raises
    ------
    ValueError
        If a grid is invalid (:func:`complexity_grid`) or a replication count is below 1.
    """

    new = replace(setting, **{k: v for k, v in changes.items() if v is not None})
    new.grids()
    for name in ("full_replications", "fast_replications"):
        if int(getattr(new, name)) < 1:
            raise ValueError(f"`{name}` must be at least 1, got {getattr(new, name)}.")
    return new


def make_model(model: str, data: Dataset, *, lengthscale: float | None = None, wsf: float = 8.0,
               max_epochs: int = 200, n_init: int = 3):
    """The model family: LS-SVM with a Gaussian kernel of width ℓ (default: TOY_LENGTHSCALE on the toy data,
    the median distance between standardised inputs otherwise), RBFN with width factor WSF, or MLP.

    Parameters
    ----------
    model : {"ls-svm", "rbfn", "mlp"}
        The model family.
    data : Dataset
        The data (for the LS-SVM's default width).
    lengthscale : float, optional
        ℓ of the LS-SVM's kernel; default :func:`default_lengthscale`.
    wsf : float
        Width scaling factor WSF of the RBFN, eq. (14).
    max_epochs : int
        Largest number of Levenberg–Marquardt evaluations per MLP training run.
    n_init : int
        Random restarts per MLP training.

    Returns
    -------
    LSSVM, RBFN or MLP
        The family; only the options of the chosen model are used.

    Raises
    ------
    ValueError
        If ``model`` is unknown or the LS-SVM width is not positive (or as the RBFN and MLP constructors).
    """
    _check_model(model)
    if model == "ls-svm":
        ell = lengthscale if lengthscale is not None else default_lengthscale(data)
        if not (np.isfinite(ell) and ell > 0):
            raise ValueError(f"the LS-SVM kernel width must be positive, got {ell}.")
        return LSSVM(SquaredExponential(lengthscale=float(ell)))
    if model == "rbfn":
        return RBFN(wsf=float(wsf))
    return MLP(max_epochs=int(max_epochs), n_init=int(n_init))


def default_lengthscale(data: Dataset) -> float:
    """TOY_LENGTHSCALE for the toy data; the median pairwise distance of the prepared inputs otherwise.

    Parameters
    ----------
    data : Dataset
        A regression data set (:func:`prepare_data`).

    Returns
    -------
    float
        ℓ; the median is over the first 1000 prepared inputs.
    """
    if data.name == "toy":
        return TOY_LENGTHSCALE
    return float(np.median(pdist(prepare_data(data).X[:1000])))


@dataclass(frozen=True)
class PreparedData:
    """Inputs and targets as the bootstrap sees them (:func:`prepare_data`)."""

    X: np.ndarray  # inputs, shape (N, d)
    y: np.ndarray  # targets, shape (N,)


def prepare_data(data: Dataset) -> PreparedData:
    """X and y: the toy data in the paper's units; any other data set standardised, inputs and target, by
    :meth:`Dataset.standardized` (mean 0, sample sd 1, as everywhere in the project).

    Parameters
    ----------
    data : Dataset
        A regression data set.

    Returns
    -------
    PreparedData
        ``X`` of shape (N, d) and ``y`` of shape (N,).

    Raises
    ------
    ValueError
        If the data set is not a regression task.
    """
    if data.task != "regression":
        raise ValueError(f"the fast bootstrap of [LSWV05] is for regression; {data.name!r} is a "
                         f"{data.task} data set.")
    prepared = data if data.name == "toy" else data.standardized(targets=True)
    return PreparedData(np.asarray(prepared.inputs), np.asarray(prepared.targets))


def _check_model(model: str) -> None:
    if model not in MODELS:
        raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}.")
