"""View of seed 001 (model selection): state and tab."""
