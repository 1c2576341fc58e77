"""The glossary of the app: the words the pages use, in plain words first and the papers' symbols second.

:class:`Entry` is one term (term, what it means, where the papers define it); :data:`WORDS` holds the words every page
shares, each page holds its own in its folder (``explorer/views/<page>/glossary.py``), and the registry joins them,
shared words first (:data:`explorer.views.pages.GLOSSARY`); :data:`PAPERS` names the four papers by key ([MO03],
[MO03b], [Fis16], [LSWV05]). The documentation's glossary page (``docs/user_guide/glossary.md``) is generated from the
joined entries when the site builds (``docs/conf.py``). :class:`Glossary` is the header's "Glossary" button and the
text it opens in the template's modal, on every page of the app (:func:`explorer.app.create_app` puts the button in
the header and the text in the modal, then calls :meth:`Glossary.attach`). This module knows no page.
"""

from __future__ import annotations

from typing import NamedTuple

import panel as pn

__all__ = ["Entry", "WORDS", "PAPERS", "glossary_markdown", "glossary_page", "papers_markdown", "Glossary"]


class Entry(NamedTuple):
    """One term of the glossary: its name, what it means in plain words and where the papers define it."""

    term: str
    meaning: str
    source: str


#: The four papers by key: (key, authors and title, what the explorer takes from it).
PAPERS = (
    ("[MO03]", "Malzahn & Opper, *An Approximate Analytical Approach to Resampling Averages*, JMLR 4 (2003)",
     "GP regression: the replica theory, ADATAP, ε(S), the predictor's bootstrap distribution"),
    ("[MO03b]", "Malzahn & Opper, *Approximate Analytical Bootstrap Averages for Support Vector Classifiers*, "
                "NIPS 2003", "the hard-margin SVM's bootstrap"),
    ("[Fis16]", "Fischer, *Model Selection for Gaussian Process Regression by Approximation Set Coding*, ETH Zürich "
                "master thesis (2016)", "model selection: ASC against evidence and cross-validation"),
    ("[LSWV05]", "Lendasse, Simon, Wertz & Verleysen, *Fast bootstrap methodology for regression model selection*, "
                 "Neurocomputing (2005)", "the fast bootstrap of model complexity"),
)

#: The words every page shares, in the order a first lecture on the bootstrap meets them; each page's own words
#: follow them (its folder's ``glossary.GLOSSARY``, in the registry's order: :data:`explorer.views.pages.GLOSSARY`).
WORDS = (
    Entry("Bootstrap sample (resample)",
          "A new data set made by drawing points at random, with replacement, from the N data points: a point can "
          "come several times (its count s_i) or not at all (left out). Refitting the model on many of them shows "
          "how much its predictions would vary with other data.",
          "[MO03] §3, eq. 11: s_i ~ Poisson(S/N)"),
    Entry("Occupation numbers (counts s_i)",
          "How many times each data point i is in a resample: s_i = 0 means left out, 2 means drawn twice. The "
          "explorer draws each s_i independently from a Poisson distribution with mean S/N.",
          "[MO03] eqs. 10-11"),
    Entry("S/N (bootstrap size)",
          "The average size S of a bootstrap sample divided by the number N of data points (S is the mean, not a "
          "fixed size: the counts are Poisson). S/N = 1 is the classical bootstrap; a point is left out of a "
          "resample with probability e^(−S/N), 37 % at S/N = 1.",
          "[MO03] §3"),
    Entry("Test error ε(S) (Efron's estimate)",
          "The error of the fits at the points each resample left out, averaged over the resamples: every point "
          "is tested only by fits that did not see it. The learning curve is ε(S) against S/N.",
          "[MO03] eq. 17"),
    Entry("Monte-Carlo",
          "Computing an average by actually drawing many random resamples and refitting the model on each. Its "
          "answer wobbles by about one standard error, which shrinks as 1/√B with the number B of resamples.",
          "[MO03] §5: the simulations the theory is compared with"),
    Entry("Standard error (SE)",
          "How far a Monte-Carlo average typically is from the value it would reach with endlessly many "
          "resamples: ± 1 SE covers the true value about two times in three.",
          "—"),
    Entry("Seed",
          "The number that fixes the random draws: the same seed, S/N and sample index give the same resample in "
          "the app, on the command line and in the library, whatever else is computed.",
          "—"),
    Entry("Replica theory",
          "A method from statistical physics that computes the average over all possible resamples with a "
          "formula, without drawing any: the average is written for n copies (replicas) of the model and n is "
          "set to 0 at the end.",
          "[MO03] §2 (the replica trick)"),
    Entry("ADATAP",
          "Adaptive TAP (after Thouless, Anderson and Palmer): the approximation that makes the replica theory "
          "computable. Each point feels the other points through a bell-shaped (Gaussian) average. It is solved "
          "by iterating a few equations per point and gets more accurate as N grows.",
          "[MO03] §4.3, eqs. 20-21, solved by eqs. 54-59"),
)


def glossary_markdown(entries: tuple[Entry, ...], heading: str = "## Glossary") -> str:
    """The glossary of ``entries`` as Markdown: a heading, one paragraph per entry (the term in bold, the papers'
    reference after it) and a last paragraph naming the papers the references cite by key."""
    lines = [heading]
    for entry in entries:
        where = "" if entry.source == "—" else f" *({entry.source})*"
        lines.append(f"**{entry.term}**: {entry.meaning}{where}")
    lines.append("**The papers**: " + "; ".join(f"{key} {paper}" for key, paper, _ in PAPERS) + ".")
    return "\n\n".join(lines)


def glossary_page(entries: tuple[Entry, ...]) -> str:
    """The documentation's glossary page of ``entries`` (``docs/user_guide/glossary.md``, written by ``docs/conf.py``
    when the site builds from the app's, :func:`explorer.views.pages.glossary_page`): the glossary under a page
    title, and the papers as a table."""
    intro = ("The words the explorer uses, as the app's header *Glossary* explains them (the same text: this page is "
             "generated from it, `explorer/views/common/layout/glossary.py`). References name the papers by key; "
             "{doc}`concepts` puts the words together.")
    body = glossary_markdown(entries, heading="# Glossary").split("\n\n")
    return "\n\n".join([body[0], intro, *body[1:-1], "## The papers", papers_markdown()]) + "\n"


def papers_markdown() -> str:
    """The four papers as a Markdown table: key, paper, what the explorer takes from it."""
    rows = ["| key | paper | what the explorer takes from it |", "|---|---|---|"]
    rows += [f"| `{key}` | {paper} | {what} |" for key, paper, what in PAPERS]
    return "\n".join(rows)


class Glossary(pn.viewable.Viewer):
    """The header's "Glossary" button (:attr:`button`, CSS class ``explorer-glossary-button``) and the text it
    opens (the viewable itself, CSS class ``explorer-glossary``: put it in the template's ``modal``), of ``entries``
    (the app's: :data:`explorer.views.pages.GLOSSARY`)."""

    def __init__(self, entries: tuple[Entry, ...], **params):
        super().__init__(**params)
        self.button = pn.widgets.Button(label="Glossary", color="light", width=110, align="center",
                                        css_classes=["explorer-glossary-button"])
        self.text = pn.pane.Markdown(glossary_markdown(entries), sizing_mode="stretch_width",
                                     css_classes=["explorer-glossary"])

    def attach(self, template: pn.template.BaseTemplate) -> None:
        """Open ``template``'s modal (where the glossary's text is) when the button is pressed."""
        self.button.on_click(lambda event: template.open_modal())

    def __panel__(self) -> pn.pane.Markdown:
        return self.text
