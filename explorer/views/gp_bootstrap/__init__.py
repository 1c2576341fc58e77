"""Views of seed 000 (GP bootstrap): session state, figures and the four GP tabs."""
