"""The GP page's large-data mode on a Dask cluster: when the server was started with a scheduler address
(``explorer serve --scheduler ADDRESS``, or ``$EXPLORER_SCHEDULER``), large data run on the chunked operator of
:mod:`explorer.distributed` on that cluster, and the page takes more rows.

Without a scheduler address the mode is today's (the app is for a class, not for 10⁷ rows): at most
:data:`~explorer.views.gp_bootstrap.settings.LOW_RANK_ROWS` rows, Φ in the server's memory. With one:

* the data folder's files may hold :data:`CLUSTER_ROWS` rows (:data:`CLUSTER_DATA_DIR_LIMITS`); the server reads such a
  file once (seconds at 10⁶ rows), as it reads a smaller one, and shares it between the sessions;
* the problem's rows go to the workers in chunks of :data:`CLUSTER_CHUNK_ROWS` and the features Φ are computed there
  (:func:`explorer.distributed.chunked_nystrom`, the landmarks drawn as the in-memory mode draws them), so the server
  holds X, y and the theory's N-vectors, never Φ;
* every theory job — ADATAP, the learning curve, eq. (48) and the infinitesimal jackknife at held-out inputs, the
  leave-one-out limit — runs its passes on the cluster from the job's thread (never on the server's event loop);
* the Monte-Carlo jobs run on the chunks (:mod:`explorer.distributed.bootstrap_error`,
  :mod:`explorer.distributed.comparisons`: occupations seeded per sample and block of rows); the learning curve's
  Monte-Carlo is the square loss's;
* the evidence maximum of a CSV above LOW_RANK_ROWS rows is fitted on a random subsample of
  :data:`CLUSTER_EVIDENCE_ROWS` rows (as the command line's chunked path does).

Pages layer: the state's engine decides; the computations are the runtime's and the core's.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace

import numpy as np

from explorer import datasets
from explorer.distributed.comparisons import IJ_HOLDOUT_ENTRIES
from explorer.gp_bootstrap import experiments
from explorer.gp_bootstrap import problem as problems
from explorer.gp_bootstrap.l1 import scaled_bin_width
from explorer.gp_bootstrap.stages import CurveMC, CurvePoint
from explorer.lowrank import NYSTROM_JITTER
from explorer.progress import Hooks
from explorer.runtime import engine as dask_engine
from explorer.views.gp_bootstrap.settings import DATA_DIR_LIMITS, LOW_RANK_ROWS, SUBSAMPLE_SEED

__all__ = ["CLUSTER_ROWS", "CLUSTER_DATA_DIR_LIMITS", "CLUSTER_CHUNK_ROWS", "CLUSTER_EVIDENCE_ROWS", "ChunkedFeatures",
           "scheduler_given", "large_data_rows", "data_dir_limits", "chunked_problem", "is_chunked",
           "evidence_rows", "check_holdout_ij", "mc_curve", "distribution", "holdout", "IJ_HOLDOUT_ENTRIES"]

#: Most rows of the large-data mode on a cluster (a data folder's CSV): X, y and the theory's ~20 N-vectors stay in
#: the server (8 N bytes each: 160 MB at 10⁶ rows), Φ on the workers.
CLUSTER_ROWS = 1_000_000
#: Limits of reading a data folder's CSV on a cluster (today's DATA_DIR_LIMITS scaled to CLUSTER_ROWS rows).
CLUSTER_DATA_DIR_LIMITS = {"max_bytes": 700_000_000, "max_rows": CLUSTER_ROWS, "max_values": 34_000_000}
#: Rows per chunk of the problem's rows on the workers (Φ_c: 8·R·m bytes, 100 MB at m = 256).
CLUSTER_CHUNK_ROWS = 50_000
#: Rows of the random subsample on which the evidence maximum of data above LOW_RANK_ROWS rows is fitted.
CLUSTER_EVIDENCE_ROWS = 5_000


def scheduler_given(client) -> bool:
    """Whether a state's ``client`` (its ``client`` parameter) is a cluster the server was given by address: an
    engine connected to a scheduler (not a local cluster it started), a ``distributed.Client``, or None while
    ``$EXPLORER_SCHEDULER`` is set (the process's shared engine then connects to it). Starts nothing."""
    if client is None:
        return bool(os.environ.get(dask_engine.SCHEDULER_ENV))
    if isinstance(client, dask_engine.Engine):
        return client.cluster is None
    return True


def large_data_rows(client) -> int:
    """Most rows of the large-data mode: :data:`CLUSTER_ROWS` on a cluster given by address, else LOW_RANK_ROWS."""
    return CLUSTER_ROWS if scheduler_given(client) else LOW_RANK_ROWS


def data_dir_limits(client) -> dict:
    """The limits of reading a data folder's CSV (:data:`CLUSTER_DATA_DIR_LIMITS` on a cluster, else today's)."""
    return CLUSTER_DATA_DIR_LIMITS if scheduler_given(client) else DATA_DIR_LIMITS


def evidence_rows(data: datasets.Dataset) -> datasets.Dataset:
    """``data`` for the low-rank evidence fit: as they are up to LOW_RANK_ROWS rows, else a random subsample of
    :data:`CLUSTER_EVIDENCE_ROWS` rows (seed SUBSAMPLE_SEED, in file order; said in the data's name)."""
    if data.n <= LOW_RANK_ROWS:
        return data
    rows = np.sort(np.random.default_rng(SUBSAMPLE_SEED).choice(data.n, size=CLUSTER_EVIDENCE_ROWS, replace=False))
    return replace(data.subset(rows), name=f"{data.name} (evidence on a random {CLUSTER_EVIDENCE_ROWS:,} of "
                                           f"{data.n:,} rows, seed {SUBSAMPLE_SEED})")


@dataclass(frozen=True)
class ChunkedFeatures:
    """What the page reads of a low-rank model whose Φ is on the workers: its rank, φ at new inputs, the landmarks
    and how it was made (the in-memory ``LowRankFeatures``' report, without Φ)."""

    operator: object
    landmarks: np.ndarray

    @property
    def rank(self) -> int:
        return self.operator.rank

    method = "nystrom"
    jitter = NYSTROM_JITTER

    def transform(self, X: np.ndarray) -> np.ndarray:
        """φ(x) of shape (M, m) (computed here from the broadcast map)."""
        return self.operator.features_at(X)

    def description(self, seed_option: str = "the seed") -> str:
        return (f"{self.rank} Nyström landmarks drawn with {seed_option}, jitter {self.jitter:.2g} on K_LL; rows in "
                f"{len(self.operator.parts)} chunks on the Dask cluster")

    def as_dict(self) -> dict:
        return {"method": self.method, "rank": self.rank, "landmarks": self.landmarks.tolist(),
                "jitter": float(self.jitter), "chunks": list(self.operator.rows.sizes)}


def chunked_problem(data: datasets.Dataset, kernel, noise_var: float, rank: int, holdout: int, client
                    ) -> problems.RegressionProblem:
    """The low-rank problem of ``data`` (the first ``holdout`` rows held out) with its training rows in chunks on the
    cluster of ``client`` and Φ computed there (the landmarks of the in-memory mode: rank ``rank``, SUBSAMPLE_SEED)."""
    from explorer.distributed import RowChunks, chunked_nystrom, landmark_rows

    X, y, X_test, y_test = datasets.holdout_split(data, holdout, 10)
    engine = client if isinstance(client, dask_engine.Engine) else None
    rows = RowChunks.from_arrays(engine.client if engine else client, X, y, CLUSTER_CHUNK_ROWS)
    op = chunked_nystrom(rows, kernel, rank, rng=SUBSAMPLE_SEED)
    features = ChunkedFeatures(op, landmark_rows(rows.n, rank, SUBSAMPLE_SEED))
    return problems.RegressionProblem(data.name, X, y, kernel, float(noise_var), op, X_test, y_test, features)


def check_holdout_ij(problem) -> None:
    """A ValueError (one sentence) when the jackknife at ``problem``'s held-out inputs would keep more than
    :data:`IJ_HOLDOUT_ENTRIES` derivatives M·N in the server."""
    m = len(problem.X_test)
    if m * problem.n > IJ_HOLDOUT_ENTRIES:
        raise ValueError(f"The jackknife at {m:,} held-out inputs would keep {m * problem.n:,} derivatives (8 bytes "
                         f"each) on the server; it takes at most {IJ_HOLDOUT_ENTRIES:,}: lower 'Held-out rows' to "
                         f"{IJ_HOLDOUT_ENTRIES // problem.n:,} or fewer to see it.")


def is_chunked(problem) -> bool:
    """Whether ``problem``'s rows are in chunks on a cluster (its features are :class:`ChunkedFeatures`)."""
    return isinstance(getattr(problem, "features", None), ChunkedFeatures)


# ------------------------------------------------------------------------------------ the Monte-Carlo on the chunks


def mc_curve(problem, grid, samples: int, loss: str, seed: int, hooks: Hooks) -> CurveMC:
    """Efron's estimate of ε(S) (square loss) at every S/N of ``grid`` on the chunks, one S/N after the other, the curve
    so far published after each (``hooks.partial``); a ValueError for another loss."""
    from explorer.distributed.bootstrap_error import chunked_bootstrap_error

    if loss != "square":
        raise ValueError(f"On the Dask cluster the Monte-Carlo learning curve is computed for the square loss only, "
                         f"not {loss}: choose the square loss to compare it with the theory.")
    points: list[CurvePoint] = []
    curve = CurveMC((), tuple(grid))
    for j, v in enumerate(grid):
        hooks.check(j * samples, len(grid) * samples)
        hooks.report(j / len(grid), f"Monte-Carlo at S/N = {v:g} on the cluster ({j + 1} of {len(grid)})")
        mc = chunked_bootstrap_error(problem.operator, problem.y, problem.noise_var, problem.sample_size(v), samples,
                                     rng=seed)
        points.append(CurvePoint(float(v), mc.value, mc.se, samples, int(np.count_nonzero(mc.n_test))))
        curve = CurveMC(tuple(points), tuple(grid))
        if hooks.partial is not None:
            hooks.partial(curve)
    return curve


def distribution(problem, s_over_n: float, samples: int, seed: int, hooks: Hooks
                 ) -> experiments.DistributionComparison:
    """The L1 map on a sample of rows (all up to MAP_ALL_ROWS) on the chunks."""
    from explorer.distributed.comparisons import chunked_distribution_comparison

    return chunked_distribution_comparison(problem.operator, problem.y, problem.noise_var, s_over_n, samples,
                                           name=problem.name, bin_width=scaled_bin_width(problem.y), rng=seed,
                                           hooks=hooks)


def holdout(problem, s_over_n: float, samples: int, seed: int, hooks: Hooks) -> experiments.HoldoutComparison:
    """Eq. (48), the jackknife and the Monte-Carlo at the held-out inputs, on the chunks."""
    from explorer.distributed.comparisons import chunked_holdout_comparison

    return chunked_holdout_comparison(problem.operator, problem.y, problem.noise_var, s_over_n, samples,
                                      problem.X_test, rng=seed, hooks=hooks)
