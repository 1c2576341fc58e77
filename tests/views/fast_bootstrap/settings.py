"""Settings shared by the fast-bootstrap view tests (small enough to run in well under a second)."""
from explorer.fast_bootstrap.problem import Setting
from explorer.views import fast_bootstrap as V

#: Ten values of γ, six on the reduced grid (K − κ1 − 1 = 3), a few replications: well under a second.
SMALL = dict(n_points=60, full_start=5.0, full_stop=50.0, full_step=5.0, full_replications=4, fast_start=5.0,
             fast_stop=50.0, fast_step=9.0, fast_replications=3, replica_points=4, seed=3)
SMALL_SETTING = Setting((5.0, 50.0, 5.0), 4, (5.0, 50.0, 9.0), 3, log_complexity=True)
#: An MLP whose full bootstrap is estimated above AUTO_SECONDS (so it waits for its button) and would take
#: many seconds if it were not cancelled.
SLOW_MLP = dict(model="mlp", n_points=40, full_start=1.0, full_stop=4.0, full_step=1.0, full_replications=2000,
                fast_start=1.0, fast_stop=4.0, fast_step=1.0, fast_replications=2, max_epochs=200, n_init=3,
                log_complexity=False, seed=0)


def small_state(**settings) -> V.FastBootstrapState:
    return V.FastBootstrapState(**{**SMALL, **settings})

