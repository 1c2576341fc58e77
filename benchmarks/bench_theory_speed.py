"""CPU seconds of the ADATAP solve before and after a change of the theory: dense boston (N = 506, best of 7) and
low-rank diamonds (N = 53,940, m = 256, one solve), one JSON line per run.

Process time with one BLAS thread, so that other work on the machine changes it little. Run it on two checkouts in
turn, alternating (issue 47 compared main before it, 140d7e0, with the end of the issue):

    cd /tmp && for i in 1 2 3; do for t in /path/before /path/after; do
        PYTHONPATH=$t python /path/after/benchmarks/bench_theory_speed.py $t; done; done

(from outside a checkout, so that PYTHONPATH decides which ``explorer`` is imported; a checkout from before the
kernel operators has ``explorer.bootstrap.lowrank``, used when present).
"""
import json
import sys
import time

from threadpoolctl import threadpool_limits

from explorer import datasets, kernels, lowrank
from explorer.bootstrap import replica

try:
    from explorer.bootstrap import lowrank as LR  # before the kernel operators
except ImportError:
    LR = replica
from explorer.gp_bootstrap.experiments import regression_problem

with threadpool_limits(1):
    p = regression_problem(datasets.load("boston"))
    def cpu(f, k):
        t = []
        for _ in range(k):
            start = time.process_time()
            f()
            t.append(time.process_time() - start)
        return min(t)
    dense = cpu(lambda: replica.solve_replica(p.K, p.y, p.noise_var, 506.0), 7)
    d = datasets.load("diamonds").standardized(targets=True)
    f = lowrank.nystrom_features(kernels.SquaredExponential(2.0), d.inputs, 256, rng=0)
    low = cpu(lambda: LR.solve_replica_lowrank(f.phi, d.targets, 0.1, float(d.n)), 1)
print(json.dumps({"tree": sys.argv[1], "dense_boston_cpu_s": dense, "lowrank_diamonds_cpu_s": low}))
