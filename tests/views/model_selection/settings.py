"""Settings shared by the model-selection view tests (small enough that every job ends in a second or two)."""
from explorer.views import model_selection as V

#: 32 training and 32 test cases, two criteria and two kernels to rank, few restarts, iterations and partitions.
SMALL = dict(n_points=32, n_test=32, criteria=["evidence", "loo"], rank_kernels=["se", "exponential"],
             curve_points=5, n_restarts=1, max_iter=8, n_partitions=4, n_objects=4)


def small_state(**settings) -> V.SelectionState:
    return V.SelectionState(**{**SMALL, **settings})
