"""[MO03b]'s figure as "Reproduce a figure" presets of the SVM page (Fig. 1 left and right)."""

from __future__ import annotations

from collections.abc import Callable

from explorer.views.common.state.presets import PaperNumber, Preset, States

_PAPER = "[MO03b] (Malzahn & Opper, NIPS 2003), §6"


def _field_p(which: str) -> Callable[[States], str | None]:
    """p(−1|x) of the SVM state's field at the shown test input, Monte-Carlo or theory ([MO03b] Fig. 1 right)."""
    def read(states: States) -> str | None:
        s = states["svm_"]
        if s.field is None:
            return None
        j = min(s.index, s.field.theory_mean.size - 1)
        if which == "mc":
            return f"{s.field.mc_p_negative[j]:.3f} ± {s.field.mc_p_negative_se[j]:.3f} ({s.dataset}, test input {j})"
        return f"{s.field.theory_p_negative[j]:.3f} ({s.dataset}, test input {j})"
    return read


def _svm_presets() -> tuple[Preset, ...]:
    grid = [0.25, 0.5, 1.0, 1.5, 2.0, 3.0]
    curve = {"curve_grid": grid, "curve_mc_samples": 100, "seed": 0, "auto_mc": True}
    where = f"{_PAPER}, inset of Fig. 1 right"
    left = "The figure prints no numbers (curves only). The paper tuned one width v_k per input (values not " \
           "printed); the app uses one width L = √10 on standardised inputs. 100 Monte-Carlo SVMs per S/N " \
           "(the paper does not state its count)."
    return (
        Preset("004-fig1-crabs", "[MO03b] Fig. 1 left: SVM learning curve, crabs", "[MO03b], Fig. 1 left",
               "svm", {"svm_": {"dataset": "crabs", "lengthscale": 3.16228, **curve}},
               f"Bootstrap classification error ε(S) of the hard-margin SVM on crabs (N = 200): replica theory "
               f"(eq. 17) against Monte-Carlo at S/N = 0.25-3, with the S → ∞ leave-one-out limits. {left} The paper's other "
               f"sets (wisconsin, pima, sonar) take minutes here at these counts: choose them in the SVM tab.", 8.0),
        Preset("004-fig1-right", "[MO03b] Fig. 1 right: field at a test input (upload sonar.csv)",
               "[MO03b], Fig. 1 right", "svm",
               {"svm_": {"lengthscale": 3.16228, "holdout": 20, "s_over_n": 1.0, "mc_samples": 1000, "seed": 0,
                         "auto_mc": True, "test_index": 0}},
               "Bootstrap distribution of the internal field at held-out test inputs, S = N: the paper holds out "
               "20 of the 208 Sonar rows (N = 188). Sonar is not shipped: upload sonar.csv (UCI) in the SVM tab; "
               "this preset keeps the chosen data set. The paper shows one atypical bimodal test input and does "
               "not say which; compare its p(−1|x) with ours at the inputs of the table. 1000 Monte-Carlo SVMs "
               "(the paper does not state its count).", 16.0,
               (PaperNumber("p(−1|x), simulation", "0.376", 0.376, where, _field_p("mc")),
                PaperNumber("p(−1|x), theory", "0.405", 0.405, where, _field_p("theory")))),
    )


PRESETS: tuple[Preset, ...] = _svm_presets()
