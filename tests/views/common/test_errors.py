"""One table of error wordings: every page's sentences, first match wins, then what every page says."""

import re

import numpy as np
import pytest

pytest.importorskip("panel")

from explorer.bootstrap.replica import ConvergenceError  # noqa: E402
from explorer.datasets import DatasetError  # noqa: E402
from explorer.engine import EngineError  # noqa: E402
from explorer.svm_bootstrap.classifier import NotSeparableError  # noqa: E402
from explorer.views.common.errors import WORDING, describe_error  # noqa: E402
from explorer.views.pages import PAGES  # noqa: E402


def test_the_table_words_errors_for_pages_of_the_registry_only():
    assert set(WORDING) <= {page.key for page in PAGES}


@pytest.mark.parametrize("page,err,expected", [
    ("gp", ConvergenceError("no fixed point.", None), r"^The replica \(ADATAP\) theory did not converge: no fixed "
                                                      r"point\. Try a larger noise σ²"),
    ("gp", np.linalg.LinAlgError("not positive definite"), r"^The kernel matrix could not be factorised \(not "
                                                           r"positive definite\)\. Increase the noise σ²"),
    ("svm", NotSeparableError("two identical inputs carry different labels"),
     r"^The data cannot be separated by a hard-margin SVM: two identical inputs carry different labels$"),
    ("svm", NotSeparableError("no margin"), r"^The data cannot be separated by a hard-margin SVM with this kernel: "
                                            r"no margin A shorter lengthscale L"),
    ("selection", ConvergenceError("stuck.", None), r"bootstrap \.632 criterion did not converge: stuck\. Leave out"),
    ("fastboot", np.linalg.LinAlgError("singular"), r"^A least-squares or kernel system could not be solved"),
    ("fastboot", FloatingPointError("overflow"), r"^FloatingPointError: overflow$"),  # no wording: its type
    ("svm", DatasetError("column 'y' has one class"), r"^The data cannot be used: column 'y' has one class$"),
    (None, ValueError("S/N must be positive."), r"^S/N must be positive\.$"),
    (None, EngineError("The Dask engine dropped this job."), r"^The Dask engine dropped this job\.$"),
    (None, KeyError("x"), r"^KeyError: 'x'$"),
])
def test_each_page_says_its_sentence(page, err, expected):
    assert re.search(expected, describe_error(err, page)), describe_error(err, page)


def test_a_brace_in_an_error_message_is_kept():
    assert describe_error(ValueError("a {b} c")) == "a {b} c"


def test_the_states_use_the_table():
    from explorer.views.fast_bootstrap.state import FastBootstrapState
    from explorer.views.gp_bootstrap.state import GPBootstrapState
    from explorer.views.model_selection.state import SelectionState
    from explorer.views.svm_bootstrap.state import SVMState

    err = np.linalg.LinAlgError("x")
    for cls, key in ((GPBootstrapState, "gp"), (SVMState, "svm"), (SelectionState, "selection"),
                     (FastBootstrapState, "fastboot")):
        assert cls.describe_error(err) == describe_error(err, key)
