"""The glossary of the app: the words every page uses, in plain words first and the papers' symbols second.

:data:`GLOSSARY` holds the entries (term, what it means, where the papers define it); :class:`Glossary` is the
header's "Glossary" button and the text it opens in the template's modal, on every page of the app
(:func:`explorer.app.create_app` puts the button in the header and the text in the modal, then calls
:meth:`Glossary.attach`).
"""

from __future__ import annotations

from typing import NamedTuple

import panel as pn

__all__ = ["Entry", "GLOSSARY", "glossary_markdown", "Glossary"]


class Entry(NamedTuple):
    """One term of the glossary: its name, what it means in plain words and where the papers define it."""

    term: str
    meaning: str
    source: str


#: The entries, in the order a first lecture on the bootstrap meets them.
GLOSSARY = (
    Entry("Bootstrap sample (resample)",
          "A new data set made by drawing points at random, with replacement, from the N data points: a point can "
          "come several times (its count s_i) or not at all (left out). Refitting the model on many of them shows "
          "how much its predictions would vary with other data.",
          "seed 000 §3, eq. 11: s_i ~ Poisson(S/N)"),
    Entry("S/N (bootstrap size)",
          "The average size S of a bootstrap sample divided by the number N of data points. S/N = 1 is the "
          "classical bootstrap; a point is left out of a resample with probability e^(−S/N), 37 % at S/N = 1.",
          "seed 000 §3"),
    Entry("Test error (Efron's estimate)",
          "The error of the fits at the points each resample left out, averaged over the resamples: every point "
          "is tested only by fits that did not see it.",
          "seed 000 eq. 17"),
    Entry("Monte-Carlo",
          "Computing an average by actually drawing many random resamples and refitting the model on each. Its "
          "answer wobbles by about one standard error, which shrinks as 1/√B with the number B of resamples.",
          "seed 000 §5: the simulations the theory is compared with"),
    Entry("Standard error (SE)",
          "How far a Monte-Carlo average typically is from the value it would reach with endlessly many "
          "resamples: ± 1 SE covers the true value about two times in three.",
          "—"),
    Entry("Replica theory",
          "A method from statistical physics that computes the average over all possible resamples with a "
          "formula, without drawing any: the average is written for n copies (replicas) of the model and n is "
          "set to 0 at the end.",
          "seed 000 §2 (the replica trick)"),
    Entry("ADATAP",
          "The adaptive TAP approximation that makes the replica theory computable: each point feels the other "
          "points through a bell-shaped (Gaussian) average. It is solved by iterating a few equations per point "
          "and gets more accurate as N grows.",
          "seed 000 §4.3, eqs. 20-21, solved by eqs. 54-59"),
    Entry("Approximate ADATAP",
          "A cheaper shortcut of ADATAP: one shared value for all points instead of solving the equations point "
          "by point (no iteration). Where it lands nearer to Monte-Carlo than ADATAP, two errors cancel.",
          "seed 000 §5 and App. A.2"),
    Entry("Gaussian process (GP)",
          "The model fitted to the data and to every resample: a smooth curve whose wiggliness the kernel's "
          "lengthscale sets and whose closeness to the points the noise σ² sets.",
          "seed 000 §4.1 and eq. 50"),
    Entry("Prediction at point i (f_i)",
          "The value the fitted curve takes at data point i; over the resamples it varies, and its histogram is "
          "the bootstrap distribution that the theory's mixture of Gaussians describes.",
          "seed 000 eq. 60"),
)


def glossary_markdown(entries=GLOSSARY) -> str:
    """The glossary as Markdown: a heading and one paragraph per entry (the term in bold, the papers' reference
    after it)."""
    lines = ["## Glossary"]
    for entry in entries:
        where = "" if entry.source == "—" else f" *({entry.source})*"
        lines.append(f"**{entry.term}**: {entry.meaning}{where}")
    return "\n\n".join(lines)


class Glossary(pn.viewable.Viewer):
    """The header's "Glossary" button (:attr:`button`, CSS class ``explorer-glossary-button``) and the text it
    opens (the viewable itself, CSS class ``explorer-glossary``: put it in the template's ``modal``)."""

    def __init__(self, **params):
        super().__init__(**params)
        self.button = pn.widgets.Button(label="Glossary", color="light", width=110, align="center",
                                        css_classes=["explorer-glossary-button"])
        self.text = pn.pane.Markdown(glossary_markdown(), sizing_mode="stretch_width",
                                     css_classes=["explorer-glossary"])

    def attach(self, template: pn.template.BaseTemplate) -> None:
        """Open ``template``'s modal (where the glossary's text is) when the button is pressed."""
        self.button.on_click(lambda event: template.open_modal())

    def __panel__(self) -> pn.pane.Markdown:
        return self.text
