"""Controls that several states declare alike, declared here once so their bounds and wording agree on every page.

Each function returns a fresh ``param`` parameter for a state's class body (``seed = controls.seed()``); the
state keeps its own parameter order, label and help where they differ.
"""

from __future__ import annotations

import param

__all__ = ["MAX_SEED", "MAX_MC_SAMPLES", "MONTE_CARLO_SEED", "seed", "mc_samples", "target", "standardize"]

#: Largest seed a page takes (the URL and the settings JSON carry it; 31 bits fit every JavaScript number).
MAX_SEED = 2**31 - 1
#: Most Monte-Carlo bootstrap samples a page runs at once (the CLI's ``--mc-samples`` bound as well).
MAX_MC_SAMPLES = 100_000
#: Help of the seed of a page whose only randomness is its Monte-Carlo bootstrap.
MONTE_CARLO_SEED = "Seed of the Monte-Carlo random generator; same settings and seed, same numbers."


def seed(doc: str = MONTE_CARLO_SEED, *, metadata: dict | None = None) -> param.Integer:
    """A page's ``seed``: a whole number from 0 to :data:`MAX_SEED`, 0 by default; ``doc`` says what it seeds;
    ``metadata`` is the state's declaration of it (``declarations.control(...)``)."""
    return param.Integer(default=0, bounds=(0, MAX_SEED), label="Seed", doc=doc, metadata=metadata)


def mc_samples(default: int, softbounds: tuple[int, int], label: str, doc: str, *, minimum: int = 2,
               metadata: dict | None = None) -> param.Integer:
    """A number of Monte-Carlo bootstrap samples, from ``minimum`` to :data:`MAX_MC_SAMPLES`; ``metadata`` is the
    state's declaration of it."""
    return param.Integer(default=default, bounds=(minimum, MAX_MC_SAMPLES), softbounds=softbounds, label=label,
                         doc=doc, metadata=metadata)


def target(column: str, *, metadata: dict | None = None) -> param.Selector:
    """A CSV's ``target`` column, None until a CSV is chosen; ``column`` says which, after "Column of";
    ``metadata`` is the state's declaration of it."""
    return param.Selector(default=None, objects=[], allow_None=True, label="Target column",
                          doc=f"Column of {column}; every other column is an input.", metadata=metadata)


def standardize(statistics: str, advice: str, *, metadata: dict | None = None) -> param.Boolean:
    """``standardize``, off by default: ``statistics`` says whose mean and sd (and the CLI's twin), ``advice`` when
    to tick it; ``metadata`` is the state's declaration of it."""
    return param.Boolean(default=False, label="Standardise inputs and target",
                         doc=f"Scale every input column and the target to mean 0 and sample sd 1 {statistics}. "
                             f"{advice}", metadata=metadata)
