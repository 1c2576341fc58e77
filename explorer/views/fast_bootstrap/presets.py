"""[LSWV05]'s tables as "Reproduce a figure" presets of the fast-bootstrap page (Tables 1-2, Figs. 2-3)."""

from __future__ import annotations

from collections.abc import Callable

from explorer.views.common.state.presets import PaperNumber, Preset, States, percent

_PAPER = "[LSWV05] (Lendasse et al., Neurocomputing 2005), §5"


def _fb(part: str, what: str) -> Callable[[States], str | None]:
    """A number of the fast-bootstrap state's comparison: ``part`` "fast" or "full", ``what`` "selected",
    "F", "models" (J·Q) or "gain" (Table 1's gain, bootstrap models only)."""
    def read(states: States) -> str | None:
        res = states["fb_"].comparison
        curve = None if res is None else (res.fast if part == "fast" else res.full)
        if curve is None:
            return None
        if what == "selected":
            return f"{curve.selected:g}"
        if what == "F":
            f = curve.f_test
            return f"F({f.df_num},{f.df_den}) = {f.F:.4g} (p = {f.p_value:.3g})"
        if what == "models":
            return str(int(curve.bootstrap_models))
        return None if res.paper_gain is None else percent(res.paper_gain)
    return read


def _fb_numbers(table: str, *, models: tuple[int | None, int], fisher: tuple[str, float],
                selected: tuple[int, int] | None = None, gain: tuple[str, float] | None = None
                ) -> tuple[PaperNumber, ...]:
    """The numbers ``table`` of [LSWV05] prints for one model: the complexity the full and the fast bootstrap
    select, the experiments J·Q of each (None: the table has no full bootstrap), Table 1's gain and the fast
    bootstrap's F test (each as printed, with its value)."""
    rows: dict[str, tuple[str, float | None, Callable[[States], str | None]]] = {}
    if selected is not None:
        for part, n in zip(("full", "fast"), selected):
            rows[f"selected ({part} bootstrap)"] = (str(n), float(n), _fb(part, "selected"))
    for part, n in zip(("full", "fast"), models):
        if n is not None:
            rows[f"experiments J·Q ({part})"] = (str(n), float(n), _fb(part, "models"))
    if gain is not None:
        rows["gain"] = (*gain, _fb("full", "gain"))
    rows["Fisher's F (fast)"] = (*fisher, _fb("fast", "F"))
    return tuple(PaperNumber(q, text, value, f"{_PAPER}, {table}", ours)
                 for q, (text, value, ours) in rows.items())


def _fb_presets() -> tuple[Preset, ...]:
    toy = {"dataset": "toy", "n_points": 200, "seed": 0, "kappa0": 1, "kappa1": 2, "with_full": True,
           "auto_run": True}
    laser = {"dataset": "time series CSV", "series_csv": "santafe_laser_A.csv", "series_column": "value", "lags": 6,
             "seed": 0, "kappa0": 1, "kappa1": 2, "with_full": False, "with_replica": False, "auto_run": True}
    note2 = ("Santa Fe laser A is not shipped: the preset reads santafe_laser_A.csv (columns t, value) from the "
             "server's data folder (`explorer serve --data-dir FOLDER`); without it, upload the file in the Fast "
             "bootstrap tab and apply the preset again. Only the fast bootstrap runs, as in the paper.")
    return (
        Preset("002-t1-mlp", "[LSWV05] Table 1: MLP on the toy function", "[LSWV05], Table 1 (MLP), Figs. 2-3",
               "fastboot", {"fb_": {**toy, "model": "mlp", "full_start": 1, "full_stop": 13, "full_step": 1,
                                    "full_replications": 10, "fast_start": 1, "fast_stop": 13, "fast_step": 3,
                                    "fast_replications": 10, "log_complexity": False, "max_epochs": 200,
                                    "n_init": 3}},
               "MLP, 1-13 hidden units, on 200 points of eq. (19). Fast bootstrap as Table 1 (1-13 by 3, 10 "
               "replications); the full bootstrap with 10 replications per size instead of 100 (100 take "
               "minutes here), so its J·Q and the gain differ from the paper's. Measured here: 30 s.", 30.0,
               _fb_numbers("Table 1 and text", selected=(6, 6), models=(1300, 50),
                           gain=("96.2 %", 0.962), fisher=("F(1,2) = 3.2545", 3.2545)),
               run=("fb_",)),
        Preset("002-t1-rbfn", "[LSWV05] Table 1: RBFN on the toy function", "[LSWV05], Table 1 (RBFN), Figs. 4-5",
               "fastboot", {"fb_": {**toy, "model": "rbfn", "full_start": 10, "full_stop": 19, "full_step": 1,
                                    "full_replications": 100, "fast_start": 10, "fast_stop": 19, "fast_step": 3,
                                    "fast_replications": 10, "log_complexity": False, "wsf": 8.0}},
               "RBFN, 10-19 kernels, on 200 points of eq. (19), at Table 1's grids and replications (100 full, 10 "
               "fast). The paper does not state its width factor; the app's default WSF = 8.", 16.0,
               _fb_numbers("Table 1 and text", selected=(17, 16), models=(1000, 40),
                           gain=("96 %", 0.96), fisher=("F(1,1) = 16.3085", 16.3085)),
               run=("fb_",)),
        Preset("002-t1-lssvm", "[LSWV05] Table 1: LS-SVM on the toy function",
               "[LSWV05], Table 1 (LS-SVM), Figs. 6-7", "fastboot",
               {"fb_": {**toy, "model": "ls-svm", "full_start": 5, "full_stop": 50, "full_step": 0.1,
                        "full_replications": 100, "fast_start": 5, "fast_stop": 50, "fast_step": 5,
                        "fast_replications": 10, "log_complexity": True, "lengthscale": 0.0, "with_replica": True,
                        "replica_points": 46}},
               "LS-SVM, γ from 5 to 50, on 200 points of eq. (19), at Table 1's grids and replications (100 full, 10 "
               "fast), F test in log γ; plus the replica theory's optimism at 46 values of γ. The paper does not "
               "state its kernel width; the app uses ℓ = 0.085 (maximum evidence on such data).", 5.0,
               _fb_numbers("Table 1 and text", selected=(12, 15), models=(45100, 100),
                           gain=("99.8 %", 0.998), fisher=("F(1,7) = 0*", 0.0)),
               run=("fb_",)),
        Preset("002-t2-mlp", "[LSWV05] Table 2: MLP on the Santa Fe laser", "[LSWV05], Table 2 (MLP), Figs. 9-10",
               "fastboot", {"fb_": {**laser, "model": "mlp", "fast_start": 4, "fast_stop": 9, "fast_step": 1,
                                    "fast_replications": 10, "log_complexity": False, "max_epochs": 100,
                                    "n_init": 2}},
               f"MLP, 4-9 hidden units, NAR(6) on the Santa Fe laser, fast bootstrap at Table 2's grid and 10 "
               f"replications. {note2} The paper gives no MLP epochs or restarts: the preset uses 100 epochs and 2 "
               f"restarts (measured here: 39 s; the app's defaults, 200 and 3, took 466 s on these 994 points).", 39.0,
               _fb_numbers("Table 2", models=(None, 60), fisher=("F(1,3) = 0.2002", 0.2002)),
               run=("fb_",)),
        Preset("002-t2-rbfn", "[LSWV05] Table 2: RBFN on the Santa Fe laser", "[LSWV05], Table 2 (RBFN), Figs. 11-12",
               "fastboot", {"fb_": {**laser, "model": "rbfn", "fast_start": 60, "fast_stop": 140, "fast_step": 20,
                                    "fast_replications": 20, "log_complexity": False, "wsf": 8.0}},
               f"RBFN, 60-140 kernels, NAR(6) on the Santa Fe laser, fast bootstrap at Table 2's grid and 20 "
               f"replications. {note2}", 20.0,
               _fb_numbers("Table 2", models=(None, 100), fisher=("F(1,2) = 1.6472", 1.6472)),
               run=("fb_",)),
        Preset("002-t2-lssvm", "[LSWV05] Table 2: LS-SVM on the Santa Fe laser",
               "[LSWV05], Table 2 (LS-SVM), Figs. 13-14", "fastboot",
               {"fb_": {**laser, "model": "ls-svm", "fast_start": 15, "fast_stop": 105, "fast_step": 5,
                        "fast_replications": 10, "log_complexity": True, "lengthscale": 0.0}},
               f"LS-SVM, γ from 15 to 105 by 5 (Table 2; the paper's text says [25-1000]), NAR(6) on the Santa Fe "
               f"laser, fast bootstrap with 10 replications, F test in log γ. {note2}", 7.0,
               _fb_numbers("Table 2", models=(None, 190), fisher=("F(1,16) = 0*", 0.0)),
               run=("fb_",)),
    )


#: Every preset, in the order of the menu.


PRESETS: tuple[Preset, ...] = _fb_presets()
