"""View of seed 002 (fast bootstrap): state and tab."""
