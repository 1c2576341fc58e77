"""The README's library examples run as printed (docs that match behaviour)."""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_library_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_python_block_runs(index, one_blas_thread):
    namespace: dict = {}
    exec(compile(BLOCKS[index], f"README.md python block {index}", "exec"), namespace)
    if "mc" in namespace:        # [MO03]: the ADATAP solution converged and ε(S = N) lies near Monte-Carlo
        from explorer.bootstrap import estimates, replica
        assert namespace["sol"].converged
        mc = estimates.bootstrap_test_error(namespace["mc"], namespace["data"].targets)
        assert abs(replica.bootstrap_test_error(namespace["sol"]) - mc.value) < 0.1 * mc.value
    if "curve" in namespace:     # the low-rank path: ADATAP within 4 standard errors of its Monte-Carlo plus 3 %
        from explorer.bootstrap import replica
        assert namespace["sol"].converged
        error = namespace["curve"].errors[0]
        assert abs(replica.bootstrap_test_error(namespace["sol"]) - error.value) < 4 * error.se + 0.03 * error.value
    if "res" in namespace:       # [LSWV05]: both bootstraps selected a complexity of the grid
        res = namespace["res"]
        assert res.full.selected in res.full.grid and 0 < res.gain < 1
    if "boot" in namespace:      # scikit-learn: a mean and sd per test row, an interval per training row
        import numpy as np
        X, X_test, low, high = (namespace[k] for k in ("X", "X_test", "low", "high"))
        assert namespace["mean"].shape == namespace["std"].shape == (len(X_test),)
        assert np.all(namespace["std"] > 0) and low.shape == high.shape == (len(X),) and np.all(low < high)


def test_readme_links_into_the_repository_resolve():
    """Every relative link (the Documentation section's pages, the docs' derivations) names a file of the tree."""
    links = re.findall(r"(?<!!)\[[^\]]*\]\(([^)\s#]+)(?:#[^)]*)?\)", README.read_text(encoding="utf-8"))
    local = [link for link in links if "://" not in link and not link.startswith("mailto:")]
    assert any(link.startswith("docs/user_guide/") for link in local), local
    missing = [link for link in local if not (README.parent / link).is_file()]
    assert not missing, missing


def test_readme_images_exist_with_one_screenshot_per_tab():
    text = README.read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)
    assert images and all((README.parent / image).is_file() for image in images), images
    shots = {image for image in images if image.startswith("docs/screenshots/")}
    # step by step (normal and Presentation mode), 4 GP tabs, SVM, model selection's two sub-panels, fast bootstrap
    assert len(shots) == 10
