"""The words of the Gaussian-process pages ([MO03]) in the app's glossary: the approximations beside ADATAP, the
model, the prediction whose bootstrap distribution the pages draw and the L1 map's distance."""

from __future__ import annotations

from explorer.views.common.layout.glossary import Entry

__all__ = ["GLOSSARY"]

#: The page's own words, after those every page shares (:data:`explorer.views.common.layout.glossary.WORDS`).
GLOSSARY = (
    Entry("Approximate ADATAP",
          "A cheaper shortcut of ADATAP: one shared value for all points instead of solving the equations point "
          "by point (no iteration). Where it lands nearer to Monte-Carlo than ADATAP, two errors cancel.",
          "[MO03] §5 and App. A.2"),
    Entry("VG (variational Gaussian)",
          "Another approximation of the replica average: the best Gaussian in the sense of a variational bound. "
          "Cruder than ADATAP; [MO03] shows it in Fig. 1.",
          "[MO03] Fig. 1; derivation in the docs' derivations"),
    Entry("MF (mean field)",
          "The simplest approximation of the replica average: each point feels only the average of the others. "
          "The crudest curve of [MO03]'s Fig. 1.",
          "[MO03] Fig. 1; derivation in the docs' derivations"),
    Entry("Gaussian process (GP)",
          "The model fitted to the data and to every resample: a smooth curve whose wiggliness the kernel's "
          "lengthscale sets and whose closeness to the points the noise σ² sets.",
          "[MO03] §4.1 and eq. 50"),
    Entry("Prediction at point i (f_i)",
          "The value the fitted curve takes at data point i; over the resamples it varies, and its histogram is "
          "the bootstrap distribution that the theory's mixture of Gaussians describes.",
          "[MO03] eq. 60"),
    Entry("L1 distance and noise floor",
          "The L1 distance measures how far a Monte-Carlo histogram is from the theory's distribution (0: the "
          "same; 2: nothing in common). Even a perfect theory is not at 0, because the histogram of finitely many "
          "resamples wobbles: the noise floor is that distance, computed for histograms drawn from the theory "
          "itself.",
          "[MO03] Fig. 5"),
)
