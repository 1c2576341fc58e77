"""View of seed 004 (SVM bootstrap): state and tab."""
