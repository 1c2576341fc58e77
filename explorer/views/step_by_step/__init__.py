"""The "Bootstrap, step by step" page: the resamples one at a time beside the theory of seed 000 (issue 24)."""
