"""Tests for explorer.datasets: shipped tables, generators, user CSV validation."""
import gzip
import hashlib
import io
import re
import socket
from pathlib import Path

import numpy as np
import pytest

from explorer import datasets
from explorer.datasets import (
    STANDARDIZE_DDOF,
    Dataset,
    DatasetError,
    gp_teacher,
    load,
    load_csv,
    standardization,
    toy_function,
)

REPO = Path(__file__).resolve().parents[1]
SHARED_PROVENANCE = REPO.parent / "shared" / "datasets" / "PROVENANCE.md"

# SHA-256 of the shipped CSVs, copied from the table in ../shared/datasets/PROVENANCE.md (part A).
SHA256 = {
    "boston.csv": "de34377a9f15b743089e8ff434fc6792f668c7e7c0219fb13c5b8aa6cd7b7cb2",
    "crabs.csv": "c112a5e147591d8e04f32dbf3f3e2be2eb74860119c6f6b5e33191ef84ee16aa",
    "pima.csv": "68201f941bf711bfd553f43b3efeb088b6ac53c40c661ca5cb49dcf9040ec70d",
    "biopsy_complete.csv": "6f751b2fc2dc2ca7e4974a8cc0a9f9c0ace1f0816a3caa6ed88da7d8aae44995",
}
# ggplot2's diamonds, gzip'd (datasets/PROVENANCE.md, ggplot2 section; not in the shared folder), and the SHA-256 of
# the CSV text inside it, which does not depend on how it was compressed.
DIAMONDS = "diamonds.csv.gz"
SHA256[DIAMONDS] = "ceddcfa7524a59d20da2c4f5f531b6fc4b26406516b40df2d01512226be2a3b5"
DIAMONDS_CSV_SHA256 = "0e7164799468299f8dc09b006cf396c43717c3dc71f947f0a32cc6e199895b46"


def provenance_hashes(path: Path) -> dict[str, str]:
    rows = re.findall(r"^\| (\S+\.csv(?:\.gz)?) \| \d+ \| \d+ \| ([0-9a-f]{64}) \|$", path.read_text(), flags=re.M)
    return dict(rows)


# ----------------------------------------------------------------------------- shipped tables


@pytest.mark.parametrize("name, n, d, target, task", [
    ("boston", 506, 13, "medv", "regression"),
    ("crabs", 200, 5, "sp", "classification"),
    ("pima", 532, 7, "type", "classification"),
    ("wisconsin", 683, 9, "class", "classification"),
    ("diamonds", 53940, 6, "log_price", "regression"),
])
def test_shipped_shapes(name, n, d, target, task):
    ds = load(name)
    assert (ds.n, ds.d, ds.target_name, ds.task) == (n, d, target, task)
    assert ds.inputs.shape == (n, d) and ds.targets.shape == (n,)
    assert ds.inputs.dtype == ds.targets.dtype == np.float64
    assert len(ds.feature_names) == d and target not in ds.feature_names
    assert np.isfinite(ds.inputs).all() and ds.provenance and ds.description


@pytest.mark.parametrize("name, labels, n_neg, n_pos", [
    ("crabs", ("B", "O"), 100, 100),
    ("pima", ("No", "Yes"), 355, 177),
    ("wisconsin", ("benign", "malignant"), 444, 239),
])
def test_shipped_class_targets(name, labels, n_neg, n_pos):
    ds = load(name)
    assert ds.class_labels == labels
    assert set(np.unique(ds.targets)) == {-1.0, 1.0}
    assert ((ds.targets == -1).sum(), (ds.targets == 1).sum()) == (n_neg, n_pos)


def test_shipped_columns_are_the_documented_ones():
    assert load("crabs").feature_names == ("FL", "RW", "CL", "CW", "BD")
    assert load("wisconsin").feature_names == tuple(f"V{k}" for k in range(1, 10))
    assert "part" not in load("pima").feature_names
    boston = load("boston")
    assert boston.class_labels is None
    # raw units, first row of MASS::Boston: crim 0.00632, tax 296, medv 24.0
    assert boston.inputs[0, 0] == 0.00632 and boston.inputs[0, 9] == 296 and boston.targets[0] == 24.0
    assert boston.targets.max() == 50.0


def test_first_crab_is_blue_and_first_pima_is_not_diabetic():
    assert load("crabs").targets[0] == -1.0  # sp = B
    assert load("pima").targets[:2].tolist() == [-1.0, 1.0]  # No, Yes
    assert load("wisconsin").targets[0] == -1.0  # benign


def diamonds_raw() -> tuple[np.ndarray, np.ndarray]:
    """carat, depth, table, x, y, z and price of the shipped file, read with pandas (not the module's reader)."""
    pd = pytest.importorskip("pandas")
    table = pd.read_csv(REPO / "datasets" / DIAMONDS)
    return table[["carat", "depth", "table", "x", "y", "z"]].to_numpy(float), table["price"].to_numpy(float)


def test_diamonds_is_the_standardised_log_price_regression():
    """load("diamonds") = (column − mean) / sd (divisor n − 1) of the six measurements and of log(price), computed
    here from the raw file. Both sides sum 53,940 values of size ≤ 60 in a different order: they agree to
    ~n·ε·60/sd ≈ 1e-9 at worst, so 1e-9 absolute (the standardised values reach 46, y = 58.9 mm)."""
    ds, (x, price) = load("diamonds"), diamonds_raw()
    assert ds.task == "regression" and ds.class_labels is None and ds.target_name == "log_price"
    assert ds.feature_names == ("carat", "depth_pct", "table_pct", "length_x", "width_y", "depth_z")
    assert "natural log" in ds.description and "Inputs and target standardized" in ds.description
    log_price = np.log(price)
    np.testing.assert_allclose(ds.inputs, (x - x.mean(0)) / x.std(0, ddof=1), rtol=0, atol=1e-9)
    np.testing.assert_allclose(ds.targets, (log_price - log_price.mean()) / log_price.std(ddof=1), rtol=0, atol=1e-9)
    np.testing.assert_allclose(ds.inputs.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(ds.inputs.std(0, ddof=STANDARDIZE_DDOF), 1, rtol=1e-12)
    assert abs(ds.targets.mean()) < 1e-12 and ds.targets.std(ddof=STANDARDIZE_DDOF) == pytest.approx(1, rel=1e-12)
    # first row of ggplot2::diamonds: carat 0.23, price $326
    assert x[0, 0] == 0.23 and price[0] == 326 and price.min() == 326 and price.max() == 18823


def test_diamonds_csv_inside_the_gzip_file_has_its_provenance_hash():
    text = gzip.decompress((REPO / "datasets" / DIAMONDS).read_bytes())
    assert hashlib.sha256(text).hexdigest() == DIAMONDS_CSV_SHA256
    assert DIAMONDS_CSV_SHA256 in (REPO / "datasets" / "PROVENANCE.md").read_text()
    assert text.startswith(b"carat,cut,color,clarity,depth,table,price,x,y,z\n0.23,Ideal,E,SI2,")
    assert text.count(b"\n") == 53941


def test_diamonds_loads_offline(monkeypatch):
    """The file ships with the package: no network is touched (any socket would raise here)."""
    def no_network(*args, **kwargs):
        raise AssertionError("load('diamonds') tried to open a network connection")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    assert load("diamonds").n == 53940


def test_shipped_files_match_provenance_hashes():
    folder = REPO / "datasets"
    assert sorted(p.name for p in folder.iterdir() if p.name.endswith((".csv", ".csv.gz"))) == sorted(SHA256)
    for file, digest in SHA256.items():
        assert hashlib.sha256((folder / file).read_bytes()).hexdigest() == digest
    assert provenance_hashes(folder / "PROVENANCE.md") == SHA256


def test_hashes_agree_with_shared_provenance():
    if not SHARED_PROVENANCE.is_file():
        pytest.skip("../shared/datasets/PROVENANCE.md is not present")
    shared = provenance_hashes(SHARED_PROVENANCE)
    from_shared = {file: digest for file, digest in SHA256.items() if file != DIAMONDS}
    assert {file: shared[file] for file in from_shared} == from_shared


def test_available_and_load_are_case_insensitive():
    assert datasets.available() == ("boston", "crabs", "pima", "wisconsin", "diamonds", "toy", "teacher")
    assert load(" Boston ").name == "boston"


def fake_package(tmp_path: Path, monkeypatch, folder: str) -> Path:
    """Point the module at tmp_path/explorer/datasets.py; return the data folder to fill."""
    monkeypatch.setattr(datasets, "__file__", str(tmp_path / "explorer" / "datasets.py"))
    data = tmp_path / folder
    data.mkdir(parents=True)
    return data


def test_data_folder_of_source_checkout(tmp_path, monkeypatch):
    data = fake_package(tmp_path, monkeypatch, "datasets")
    (data / "crabs.csv").write_bytes((REPO / "datasets" / "crabs.csv").read_bytes())
    assert load("crabs").n == 200


def test_installed_data_folder_wins(tmp_path, monkeypatch):
    data = fake_package(tmp_path, monkeypatch, "explorer/_data")
    (tmp_path / "datasets").mkdir()  # a checkout folder without the file: must not be used
    lines = (REPO / "datasets" / "crabs.csv").read_text().splitlines()
    (data / "crabs.csv").write_text("\n".join(lines[:21]) + "\n")
    assert load("crabs").n == 20


# ----------------------------------------------------------------------------- generators


def test_toy_reproducible_and_seed_dependent():
    a, b, c = toy_function(rng=7), toy_function(rng=7), toy_function(rng=8)
    np.testing.assert_array_equal(a.inputs, b.inputs)
    np.testing.assert_array_equal(a.targets, b.targets)
    assert not np.array_equal(a.targets, c.targets)
    assert a.inputs.shape == (200, 1) and a.targets.shape == (200,)


def test_toy_follows_eq_19(rng):
    ds = toy_function(n=5000, rng=rng)
    x = ds.inputs[:, 0]
    noise = ds.targets - (np.sin(5 * x) + np.sin(15 * x) + np.sin(25 * x))
    assert x.min() >= 0.0 and x.max() <= 1.0
    assert noise.min() >= -0.5 and noise.max() <= 0.5
    # uniform on [-0.5, 0.5]: with 5000 draws the extremes come within 0.01 of the bounds
    # (P(max eps < 0.49) = 0.99^5000 ~ 1e-22) and the variance is 1/12 within 5 sd (sd of the sample
    # variance = sqrt((1/80 - 1/144) / 5000) = 0.0011).
    assert noise.min() < -0.49 and noise.max() > 0.49
    assert abs(noise.var() - 1 / 12) < 0.0055


def test_teacher_reproducible_and_seed_dependent():
    a, b, c = gp_teacher(rng=1), gp_teacher(rng=1), gp_teacher(rng=2)
    np.testing.assert_array_equal(a.inputs, b.inputs)
    np.testing.assert_array_equal(a.targets, b.targets)
    assert not np.array_equal(a.targets, c.targets)
    assert a.inputs.shape == (64, 1) and a.task == "regression"


def brute_force_covariance(x, kernel, ell=1.0, sf=1.0, alpha=0.5, period=2.0):
    """[Fis16] eqs. (2.5)-(2.8) written out independently, pairwise."""
    r = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    forms = {
        "se": np.exp(-0.5 * r**2 / ell**2),
        "rq": (1 + r**2 / (2 * alpha * ell**2)) ** -alpha,
        "exponential": np.exp(-r / ell),
        "periodic": np.exp(-2 * np.sin(np.pi * r / period) ** 2 / ell**2),
    }
    return sf**2 * forms[kernel]


@pytest.mark.parametrize("kernel", datasets.TEACHER_KERNELS)
def test_teacher_targets_whiten_to_standard_normal(kernel, rng):
    # If y ~ N(0, K_f + sigma_n^2 I) (eq. 2.3), then L^-1 y ~ N(0, I) for L L^T = K_y. With n = 400 the
    # sample mean has sd 0.05 and the sample variance sd 0.071; the tolerances are about 4.5 sd. The same
    # bounds hold for the inputs x ~ N(0, 1) (at least 400 values).
    d = 1 if kernel == "periodic" else 2
    ds = gp_teacher(400, rng, kernel=kernel, d=d, sigma_n=0.3)
    k_y = brute_force_covariance(ds.inputs, kernel) + 0.3**2 * np.eye(400)
    z = np.linalg.solve(np.linalg.cholesky(k_y), ds.targets)
    assert abs(z.mean()) < 0.23 and abs(z.var() - 1) < 0.32
    assert abs(ds.inputs.mean()) < 0.23 and abs(ds.inputs.var() - 1) < 0.32
    assert ds.feature_names == (("x",) if d == 1 else ("x1", "x2"))


# Drawn with seed 0 before the teacher's covariance came from kernels.make_kernel (datasets had its own
# covariance functions then): inputs[0], inputs[-1] and targets[[0, 1, n // 2, -1]] at the thesis' settings, the
# ones every page, command and experiment draws (d = 1, ell = 1, sigma_f = 1, alpha = 1/2, T = 2, sigma_n = 0.1;
# n = 64, and n = 2112 = 64 training + 2048 test cases of Experiment 3). The inputs come straight from the
# generator and are pinned exactly; the targets went through a Cholesky factor and a matrix product, whose last
# bits depend on the BLAS kernel the processor gets (see cholesky_draw_tolerance).
PINNED_TEACHER = {
    ("se", 64): ([0.1257302210933933, -0.4959107284421519],
                 [0.27211468569028596, 0.14965788984098286, 0.29949272075542277, 0.09520184943764667]),
    ("se", 2112): ([0.1257302210933933, -0.40541337850388154],
                   [0.6319778113475989, 0.3349202824317412, -0.7765253727331195, -0.03988386238993993]),
    ("rq", 64): ([0.1257302210933933, -0.4959107284421519],
                 [0.27211468569028596, 0.15101331798708414, 0.2994988988291784, 0.07591633641996945]),
    ("rq", 2112): ([0.1257302210933933, -0.40541337850388154],
                   [0.6319778113475989, 0.3373441604986337, -0.2854995256069562, -0.07890997115927366]),
    ("exponential", 64): ([0.1257302210933933, -0.4959107284421519],
                          [0.27211468569028596, -0.01290548390474297, 0.35472463747072347, 0.3365009201289154]),
    ("exponential", 2112): ([0.1257302210933933, -0.40541337850388154],
                            [0.6319778113475989, 0.06180435743485575, 0.32609491039804356, -0.9951600372400663]),
    ("periodic", 64): ([0.1257302210933933, -0.4959107284421519],
                       [0.27211468569028596, -0.037690182232616054, 0.09722929852004522, 0.1561780729786129]),
    ("periodic", 2112): ([0.1257302210933933, -0.40541337850388154],
                         [0.6319778113475989, 0.02261240802469834, -1.2830524960789786, -0.474006942464424]),
}


@pytest.mark.parametrize("kernel, n", sorted(PINNED_TEACHER))
def test_teacher_draws_are_pinned(kernel, n):
    ds = gp_teacher(n, 0, kernel=kernel)
    inputs, targets = PINNED_TEACHER[kernel, n]
    np.testing.assert_array_equal(ds.inputs[[0, -1], 0], inputs)  # the generator's own numbers: exact
    np.testing.assert_allclose(ds.targets[[0, 1, n // 2, -1]], targets, rtol=0, atol=cholesky_draw_tolerance(n))


def cholesky_draw_tolerance(n: int, jitter: float = 1e-8, sigma_f: float = 1.0) -> float:
    """How far a draw f = L z, L the Cholesky factor of K_f + jitter·σ_f²·I (n×n), may move between BLAS kernels.

    Cholesky is backward stable: the computed L is exact for a matrix within about n·ε·‖K‖ of K_f, and the blocked
    kernels of different processors (OpenBLAS Haswell, Zen, SkylakeX, Sandybridge; 1 or 2 threads) round in
    different places within that bound. The draw moves by about n·ε·√κ·σ_f, κ the condition number; κ ≤ n/jitter,
    since the largest eigenvalue is at most the trace n·σ_f² and the smallest at least jitter·σ_f². At the thesis'
    settings that is 1.1e-9 at n = 64 and 2.2e-7 at n = 2112, against moves of 5.8e-12 (Haswell against SkylakeX,
    n = 64) and 1.4e-10 (1 against 2 threads, n = 2112) seen; another seed, generator or shape moves them by ~0.1.
    """
    return n * np.finfo(float).eps * np.sqrt(n / jitter) * sigma_f


def test_generated_data_of_the_app_and_cli_are_pinned():
    # load(name, rng=GENERATED_DATA_SEED), as the pages and the commands draw them; values from before the change
    toy = load("toy", rng=datasets.GENERATED_DATA_SEED)
    np.testing.assert_array_equal(toy.inputs[[0, -1], 0], [0.6369616873214543, 0.5898700283209505])  # generator: exact
    # sin(5x) + sin(15x) + sin(25x) plus noise: no factorisation, but numpy's sin is a SIMD loop chosen per processor
    # (AVX-512 or AVX2), correct to a few ulp; three terms below 3 in size: 8 ulp of 4, 7e-15, allows for that
    np.testing.assert_allclose(toy.targets[[0, 1, 100, -1]], [-0.5672065341484384, 0.3217193635240496,
                                                              1.3290389313350985, 1.4529825682647681],
                               rtol=0, atol=8 * np.spacing(4.0))
    teacher = load("teacher", rng=datasets.GENERATED_DATA_SEED)
    np.testing.assert_allclose(teacher.targets[[0, 1, 32, -1]], PINNED_TEACHER["se", 64][1], rtol=0,
                               atol=cholesky_draw_tolerance(64))


@pytest.mark.parametrize("kernel", datasets.TEACHER_KERNELS)
def test_teacher_covariance_is_eqs_2_5_to_2_8(kernel, rng):
    # make_kernel's forms against the thesis' written out pairwise; a few ulp apart at most
    d = 1 if kernel == "periodic" else 3
    x = rng.standard_normal((30, d))
    got = datasets.teacher_covariance(kernel, d, lengthscale=0.7, sigma_f=1.3, alpha=0.8, period=1.7)(x)
    want = brute_force_covariance(x, kernel, ell=0.7, sf=1.3, alpha=0.8, period=1.7)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


def test_load_passes_options_to_generators():
    np.testing.assert_array_equal(load("toy", n=30, rng=3).targets, toy_function(30, rng=3).targets)
    np.testing.assert_array_equal(load("teacher", n=10, rng=3, kernel="periodic").targets,
                                  gp_teacher(10, 3, kernel="periodic").targets)


def test_generators_accept_a_generator_and_advance_it(rng):
    first, second = toy_function(20, rng=rng), toy_function(20, rng=rng)
    assert not np.array_equal(first.targets, second.targets)


# ----------------------------------------------------------------------------- Dataset


def test_dataset_is_immutable_and_copies_its_inputs():
    x = np.arange(6.0).reshape(3, 2)
    ds = Dataset("d", x, np.array([1.0, 2.0, 3.0]), ("a", "b"), "y", "regression", "", "")
    x[0, 0] = 99.0
    assert ds.inputs[0, 0] == 0.0
    with pytest.raises(ValueError, match="read-only"):
        ds.inputs[0, 0] = 1.0
    with pytest.raises(AttributeError):
        ds.name = "other"
    assert repr(ds) == "Dataset(name='d', task='regression', n=3, d=2, target_name='y')"


def test_subset_and_standardized():
    ds = load("crabs")
    part = ds.subset(np.arange(10))
    assert (part.n, part.d, part.class_labels) == (10, 5, ("B", "O"))
    assert ds.subset(ds.targets > 0).n == 100
    assert ds.subset(slice(0, 5)).n == 5
    x = np.column_stack([np.arange(12.0), np.full(12, 3.0)])
    z = Dataset("d", x, np.arange(12.0), ("a", "c"), "y", "regression", "", "").standardized().inputs
    np.testing.assert_allclose(z[:, 0].mean(), 0.0, atol=1e-15)
    np.testing.assert_allclose(z[:, 0].std(ddof=1), 1.0, rtol=1e-14)
    np.testing.assert_array_equal(z[:, 1], 0.0)


def test_standardization_fits_training_rows_with_the_sample_sd(rng):
    X, y = rng.normal(3.0, 2.0, size=(15, 2)), rng.normal(-1.0, 5.0, size=15)
    s = standardization(X, y)
    # independent: the textbook sample sd, sqrt(sum (x - mean)^2 / (n - 1))
    sd = np.sqrt(((X - X.sum(axis=0) / 15) ** 2).sum(axis=0) / 14)
    np.testing.assert_allclose(s.input_sd, sd, rtol=1e-13)
    np.testing.assert_allclose(s.inputs(X).std(axis=0, ddof=1), 1.0, rtol=1e-13)
    np.testing.assert_allclose(s.targets(y).mean(), 0.0, atol=1e-14)
    np.testing.assert_allclose(s.targets(y).std(ddof=1), 1.0, rtol=1e-13)
    X_new = rng.normal(size=(4, 2))
    np.testing.assert_allclose(s.inputs(X_new), (X_new - X.mean(axis=0)) / sd, rtol=1e-13)
    assert STANDARDIZE_DDOF == 1
    unchanged = standardization(X)
    np.testing.assert_array_equal(unchanged.targets(y), y)


def test_standardized_targets_and_its_validation():
    x = np.column_stack([np.arange(12.0), np.full(12, 3.0)])
    ds = Dataset("d", x, 5.0 + 2.0 * np.arange(12.0), ("a", "c"), "y", "regression", "", "")
    both = ds.standardized(targets=True)
    np.testing.assert_allclose(both.targets.std(ddof=1), 1.0, rtol=1e-14)
    np.testing.assert_allclose(both.targets, both.inputs[:, 0], rtol=1e-14)  # y is affine in a
    np.testing.assert_array_equal(ds.standardized().targets, ds.targets)
    with pytest.raises(DatasetError, match="only regression targets can be standardised"):
        load("crabs").standardized(targets=True)
    with pytest.raises(DatasetError, match="`X` must be a 2-D array"):
        standardization(np.arange(3.0))
    with pytest.raises(DatasetError, match=r"`y` must have shape \(n,\) = \(3,\)"):
        standardization(np.ones((3, 1)), np.ones(4))


# ----------------------------------------------------------------------------- user CSV files


def table_text(header="a,b,y", rows=None) -> str:
    rows = rows if rows is not None else [f"{i},{i * i % 7},{0.5 * i}" for i in range(12)]
    return "\n".join([header, *rows]) + "\n"


def test_load_csv_from_path(tmp_path):
    path = tmp_path / "my data.csv"
    path.write_text("\ufeff" + table_text() + "\n\n", encoding="utf-8")  # BOM and trailing blank lines
    ds = load_csv(path, "y")
    assert (ds.name, ds.n, ds.d, ds.feature_names, ds.task) == ("my data", 12, 2, ("a", "b"), "regression")
    np.testing.assert_array_equal(ds.targets, 0.5 * np.arange(12))
    assert hashlib.sha256(path.read_bytes()).hexdigest() in ds.provenance
    assert load_csv(str(path), "y", name="mine").name == "mine"


def test_load_csv_string_labels_are_classification():
    rows = [f"{i},{i % 3},{'yes' if i % 2 else 'no'}" for i in range(12)]
    ds = load_csv(io.StringIO(table_text(rows=rows)), "y")
    assert ds.task == "classification" and ds.class_labels == ("no", "yes")  # sorted: "no" -> -1
    np.testing.assert_array_equal(ds.targets, np.where(np.arange(12) % 2, 1.0, -1.0))


def test_load_csv_two_numeric_values():
    rows = [f"{i},{i % 3},{3 * (i % 2)}" for i in range(12)]
    ds = load_csv(io.StringIO(table_text(rows=rows)), "y")
    assert ds.task == "classification" and ds.class_labels == ("0", "3")
    np.testing.assert_array_equal(ds.targets, np.where(np.arange(12) % 2, 1.0, -1.0))
    kept = load_csv(io.StringIO(table_text(rows=rows)), "y", task="regression")
    assert kept.task == "regression" and kept.targets.max() == 3.0


def test_find_csv_files(tmp_path):
    for name in ["b.csv", "A.CSV", ".hidden.csv", "notes.txt"]:
        (tmp_path / name).write_text("x\n")
    (tmp_path / "sub.csv").mkdir()
    assert [p.name for p in datasets.find_csv_files(tmp_path)] == ["A.CSV", "b.csv"]


# ----------------------------------------------------------------------------- one test per message


def rows_with(i: int, text: str) -> list[str]:
    rows = table_text().splitlines()[1:]
    rows[i] = text
    return rows


CSV_ERRORS = [
    ("", {}, "is empty: expected a header row"),
    ("a,,y\n" + "1,2,3\n" * 12, {}, r"header column\(s\) \[2\] have no name"),
    ("a,b,a,y\n" + "1,2,3,4\n" * 12, {}, "duplicated column name.*'a'"),
    (table_text(rows=rows_with(4, "1,2")), {}, "line 6 has 2 fields but the header has 3 columns"),
    (table_text(), {"target": "price"}, r"target column 'price' is not in .*Available columns: 'a', 'b', 'y'"),
    ("a;b;y\n" + "1;2;3\n" * 12, {}, "may not be comma-separated"),
    ("y\n" + "1\n" * 12, {}, "only the target column 'y'; at least one input column"),
    (table_text(rows=["1,2,3"] * 9), {}, "has 9 data rows; at least 10"),
    (table_text(), {"task": "ranking"}, "`task` must be None, 'regression' or 'classification', got 'ranking'"),
    (table_text(rows=rows_with(2, "1,,3")), {}, r"empty field in column 'b' at row 3 \(line 4\)"),
    (table_text(rows=rows_with(2, "1,2,")), {}, r"empty field in column 'y' at row 3 \(line 4\)"),
    (table_text(rows=rows_with(5, "1,nan,3")), {}, r"column 'b', row 6 \(line 7\): 'nan' is not a finite number"),
    (table_text(rows=rows_with(0, "-inf,1,3")), {}, r"column 'a', row 1 \(line 2\): '-inf' is not a finite"),
    (table_text(rows=rows_with(7, "1,2,inf")), {}, r"column 'y', row 8 \(line 9\): 'inf' is not a finite"),
    (table_text(rows=rows_with(3, "1,abc,3")), {}, r"non-numeric value 'abc' in column 'b' at row 4 \(line 5\)"),
    (table_text(rows=rows_with(3, "1,2,n/a")), {}, r"non-numeric value 'n/a' in column 'y' at row 4"),
    (table_text("a,sex,y", [f"{i},{'MF'[i % 2]},{i}" for i in range(12)]), {},
     "column 'sex' is not numeric .*remove the column"),
    (table_text(rows=[f"{i},{i},2.5" for i in range(12)]), {}, "target column 'y' is constant"),
    (table_text(rows=[f"{i},{i},same" for i in range(12)]), {}, "target column 'y' is constant"),
    (table_text(rows=[f"{i},{i},{'abc'[i % 3]}" for i in range(12)]), {},
     "target column 'y' is not numeric and has 3 distinct labels"),
    (table_text(), {"task": "classification"}, "task='classification' needs a target with exactly two distinct"),
    (table_text(rows=[f"{i},{i},{'ab'[i % 2]}" for i in range(12)]), {"task": "regression"},
     "holds the labels 'a', 'b', but a regression target must be numeric"),
]


@pytest.mark.parametrize("text, options, message", CSV_ERRORS)
def test_load_csv_errors(text, options, message):
    options = {"target": "y", **options}
    with pytest.raises(DatasetError, match=message):
        load_csv(io.StringIO(text), **options)


def test_load_csv_missing_file(tmp_path):
    with pytest.raises(DatasetError, match="no CSV file at"):
        load_csv(tmp_path / "nope.csv", "y")


def test_load_csv_not_utf8(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes(table_text().replace("a,b", "a,\xe9").encode("latin-1"))
    with pytest.raises(DatasetError, match="is not UTF-8 text"):
        load_csv(path, "y")


def test_load_csv_binary_file_object():
    with pytest.raises(DatasetError, match="not readable as CSV text .*text mode"):
        load_csv(io.BytesIO(table_text().encode()), "y")


def test_find_csv_files_needs_a_directory(tmp_path):
    with pytest.raises(DatasetError, match="does not exist or is not a directory"):
        datasets.find_csv_files(tmp_path / "missing")


def test_missing_data_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets, "__file__", str(tmp_path / "explorer" / "datasets.py"))
    with pytest.raises(DatasetError, match="shipped data files were not found"):
        load("boston")


def test_modified_shipped_labels(tmp_path, monkeypatch):
    data = fake_package(tmp_path, monkeypatch, "datasets")
    (data / "crabs.csv").write_text((REPO / "datasets" / "crabs.csv").read_text().replace("\nO,", "\nX,", 1))
    with pytest.raises(DatasetError, match="unexpected label.*'X'"):
        load("crabs")


def test_modified_shipped_log_target(tmp_path, monkeypatch):
    data = fake_package(tmp_path, monkeypatch, "datasets")
    text = gzip.decompress((REPO / "datasets" / DIAMONDS).read_bytes()).replace(b",326,", b",0,", 1)
    (data / DIAMONDS).write_bytes(gzip.compress(text))
    with pytest.raises(DatasetError, match="column 'price' must be positive to take its log"):
        load("diamonds")


def test_truncated_gzip_file(tmp_path, monkeypatch):
    data = fake_package(tmp_path, monkeypatch, "datasets")
    (data / DIAMONDS).write_bytes((REPO / "datasets" / DIAMONDS).read_bytes()[:1000])
    with pytest.raises(DatasetError, match=r"ends in \.gz but is not a complete gzip file"):
        load("diamonds")


@pytest.mark.parametrize("call, message", [
    (lambda: load("sonar"), "unknown data set 'sonar'. Available: 'boston', .*load_csv"),
    (lambda: load("boston", rng=0), r"load\('boston'\) takes no options"),
    (lambda: load("toy", sigma=1), r"load\('toy'\) got unknown option\(s\) 'sigma'; it accepts 'n', 'noise'"),
    (lambda: toy_function(n=0), "`n` must be an integer >= 1, got 0"),
    (lambda: gp_teacher(d=1.5), "`d` must be an integer >= 1, got 1.5"),
    (lambda: toy_function(noise=-0.1), "`noise` must be a finite number >= 0, got -0.1"),
    (lambda: gp_teacher(kernel="matern"), "`kernel` must be one of 'se', 'rq', .*got 'matern'"),
    (lambda: gp_teacher(kernel="periodic", d=2), r"periodic covariance of eq. \(2.8\) .*only for d = 1, got d = 2"),
    (lambda: gp_teacher(lengthscale=0.0), "`lengthscale` must be a finite number > 0, got 0.0"),
    (lambda: gp_teacher(sigma_n=float("nan")), "`sigma_n` must be a finite number >= 0, got nan"),
    (lambda: gp_teacher(jitter=-1e-8), "`jitter` must be a finite number >= 0"),
    (lambda: gp_teacher(200, 0, jitter=0.0), "not positive definite with jitter = 0. Raise `jitter`"),
])
def test_argument_errors(call, message):
    with pytest.raises(DatasetError, match=message):
        call()


def dataset_with(**changes) -> Dataset:
    fields = dict(name="d", inputs=np.zeros((3, 2)), targets=np.array([1.0, -1.0, 1.0]), feature_names=("a", "b"),
                  target_name="y", task="classification", description="", provenance="")
    return Dataset(**{**fields, **changes})


@pytest.mark.parametrize("changes, message", [
    ({"inputs": np.zeros(3)}, r"`inputs` must be a 2-D array of shape \(n, d\), got shape \(3,\)"),
    ({"targets": np.zeros(4)}, r"`targets` must have shape \(n,\) = \(3,\)"),
    ({"feature_names": ("a",)}, "`feature_names` must name the d = 2 input columns, got 1"),
    ({"task": "ranking"}, "`task` must be 'regression' or 'classification', got 'ranking'"),
    ({"inputs": np.full((3, 2), np.nan)}, "`inputs` and `targets` must be finite"),
    ({"targets": np.array([0.0, 1.0, 1.0])}, "classification targets must be -1.0 or \\+1.0"),
])
def test_dataset_errors(changes, message):
    with pytest.raises(DatasetError, match=message):
        dataset_with(**changes)


def test_subset_error():
    with pytest.raises(DatasetError, match="`rows` must select rows of the 3 in 'd'"):
        dataset_with().subset([5])


def test_holdout_split_keeps_the_leading_rows_for_testing_and_names_the_minimum():
    data = datasets.load("boston")
    X, y, X_test, y_test = datasets.holdout_split(data, 5, 10)
    np.testing.assert_array_equal(X_test, data.inputs[:5])
    np.testing.assert_array_equal(y_test, data.targets[:5])
    np.testing.assert_array_equal(X, data.inputs[5:])
    np.testing.assert_array_equal(y, data.targets[5:])
    assert datasets.holdout_split(data, 0, 10)[2:] == (None, None)
    with pytest.raises(ValueError, match=rf"between 0 and {data.n - 2} \(two training rows must remain\), got -1"):
        datasets.holdout_split(data, -1, 2, "two")
    with pytest.raises(ValueError, match=rf"between 0 and {data.n - 10} \(10 training rows must remain\)"):
        datasets.holdout_split(data, data.n - 9, 10)
