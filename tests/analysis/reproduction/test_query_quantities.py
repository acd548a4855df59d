"""The quantities read from a run's queries (tvbo/analysis/reproduction/query_quantities.py),
each against a case worked out by hand, and each prediction on them able to fail."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import xarray as xr

from tests.analysis.reproduction.fakes import _campaign, _run
from tvbo.analysis.reproduction import query_quantities as qq
from tvbo.analysis.reproduction.predict import QUANTITIES, Measurements, combine, evaluate
from tvbo.analysis.reproduction.spec import QUANTITY_NAMES, Prediction, Term
from tvbo.results.schema import ATTRIBUTE_PREFIX, PRESENT_VARIABLE, RUN_KEYS

BOX = [[-600.0, 600.0], [-600.0, 600.0]]


def _one_run(benchmark: str = "griewank", algorithm: str = "a", seed: int = 0, *,
             x=None, regret=None, f=None, f_star=None, warmup=None, selected=None,
             config: dict | None = None) -> xr.Dataset:
    """A one-run Dataset with only the variables the quantities read (run keys as dims)."""
    n = len(warmup)
    data = {"is_warmup": ("iteration", np.asarray(warmup, np.int8))}
    for name, values in (("regret", regret), ("f", f), ("f_star", f_star),
                         ("state_selected_prior", selected)):
        if values is not None:
            data[name] = ("iteration", np.asarray(values, float))
    if x is not None:
        data["x"] = (("iteration", "dim"), np.asarray(x, float))
    ds = xr.Dataset(data, coords={"iteration": np.arange(n)})
    default = {"benchmark": {"domain": {"spatial": BOX}}}
    ds.attrs["config_json"] = json.dumps(default if config is None else config)
    return ds.expand_dims(benchmark=[benchmark], algorithm=[algorithm], seed=[seed],
                          speed=[1.0])


def _value(frame) -> float:
    assert len(frame) == 1
    return float(frame["value"].iloc[0])


def test_the_vocabulary_lists_every_query_quantity() -> None:
    assert set(qq.QUERY_QUANTITIES) <= set(QUANTITY_NAMES) == set(QUANTITIES)


def test_bowl_share_and_median_by_hand() -> None:
    # warm-up query at a corner (left out); then x = (1/2, 1/2): z = 0, bowl 0, and x = (1, 1/2):
    # z = (600, 0), bowl 600^2 / 4000 = 90. Regret 1 and 91: the bowl carries 45 of 46.
    ds = _one_run(x=[[0, 0], [0.5, 0.5], [1.0, 0.5]], regret=[500.0, 1.0, 91.0],
                  warmup=[1, 0, 0])
    assert _value(qq.bowl_share(ds)) == pytest.approx(45.0 / 46.0)
    assert _value(qq.bowl_median(ds)) == pytest.approx(45.0)
    # a small box [-5, 5]: z = (5, 0) gives 25 / 4000
    small = _one_run(x=[[0, 0], [0.5, 0.5], [1.0, 0.5]], regret=[1.0, 1.0, 1.0],
                     warmup=[1, 0, 0], config={"benchmark": {"domain": {
                         "spatial": [[-5.0, 5.0], [-5.0, 5.0]]}}})
    assert _value(qq.bowl_share(small)) == pytest.approx(25.0 / 4000.0 / 2.0)


def test_bowl_terms_need_griewank_and_a_domain() -> None:
    with pytest.raises(qq.Absent, match="griewank only"):
        qq.bowl_share(_one_run("sphere6", x=[[0.5, 0.5]], regret=[1.0], warmup=[0]))
    with pytest.raises(qq.Absent, match="no spatial domain"):
        qq.bowl_share(_one_run(x=[[0.5, 0.5]], regret=[1.0], warmup=[0], config={}))
    with pytest.raises(qq.Absent, match="x not recorded"):
        qq.bowl_share(_one_run(regret=[1.0], warmup=[0]))


def test_face_share_by_hand() -> None:
    # post-warm-up rows: centre (no), x_1 = 1 (face), x_1 = 0.005 (face), x_2 = 0.98 (inside
    # the 0.01 margin? no: 0.98 < 0.99): 2 of 4
    ds = _one_run("sphere6", x=[[0, 0], [0.5, 0.5], [1.0, 0.5], [0.005, 0.3], [0.2, 0.98]],
                  warmup=[1, 0, 0, 0, 0])
    assert _value(qq.face_share(ds)) == pytest.approx(0.5)


def test_beats_warmup_simple_and_cumulative_regret_by_hand() -> None:
    kept = _one_run("sphere6", f=[1.0, 3.0, 2.0, 2.5], f_star=[5.0] * 4, warmup=[1, 1, 0, 0],
                    regret=[4.0, 2.0, 3.0, 2.5])
    assert _value(qq.beats_warmup(kept)) == 0.0  # best after (2.5) below the warm-up's 3
    assert _value(qq.simple_regret(kept)) == pytest.approx(2.0)  # 5 - 3
    assert _value(qq.cumulative_regret(kept)) == pytest.approx(5.5)  # 3 + 2.5
    better = _one_run("sphere6", f=[1.0, 3.0, 2.0, 4.0], f_star=[5.0] * 4, warmup=[1, 1, 0, 0])
    assert _value(qq.beats_warmup(better)) == 1.0
    assert _value(qq.simple_regret(better)) == pytest.approx(1.0)


def test_true_prior_share_by_hand() -> None:
    ds = _one_run("hills", selected=[2, 1, 2, 2], warmup=[0] * 4,
                  config={"benchmark": {"true_prior": 2}})
    assert _value(qq.true_prior_share(ds)) == pytest.approx(0.75)
    with pytest.raises(qq.Absent, match="names no true prior"):
        qq.true_prior_share(_one_run("hills", selected=[2], warmup=[0], config={}))


def test_merged_campaign_per_run_configs_and_padding() -> None:
    """Two runs of different lengths in one campaign (NaN-padded queries, per-run configs)."""
    a = _one_run(x=[[0.5, 0.5], [1.0, 0.5]], regret=[1.0, 91.0], warmup=[0, 0])
    b = _one_run(seed=1, x=[[1.0, 0.5]], regret=[91.0], warmup=[0],
                 config={"benchmark": {"domain": {"spatial": [[-5.0, 5.0]] * 2}}})
    texts = [a.attrs.pop("config_json"), b.attrs.pop("config_json")]
    ds = xr.concat([a, b], dim="seed", join="outer")
    ds[ATTRIBUTE_PREFIX + "config_json"] = (RUN_KEYS, np.array(texts, object).reshape(1, 1, 2, 1))
    ds[PRESENT_VARIABLE] = (RUN_KEYS, np.ones((1, 1, 2, 1), np.int8))
    frame = qq.bowl_share(ds).sort_values("seed")
    assert frame["value"].tolist() == pytest.approx([45.0 / 46.0, 25.0 / 4000.0 / 91.0])


def test_a_run_without_its_per_query_record_is_missing_not_zero() -> None:
    """A run longer than the merge's max_queries (tvbo.results.campaign) keeps no queries in the
    campaign: all NaN. Its query quantities are missing; the other run's are computed. The
    campaign's ``dim`` axis is longer than Griewank's here (a higher-dimensional benchmark beside
    it), so an empty run must not keep the padded columns."""
    a = _one_run(x=[[0.5, 0.5, np.nan], [1.0, 0.5, np.nan]], regret=[1.0, 91.0], warmup=[0, 0])
    b = _one_run(seed=1, x=[[np.nan] * 3] * 2, regret=[np.nan] * 2, warmup=[0, 0])
    texts = [a.attrs.pop("config_json"), b.attrs.pop("config_json")]
    ds = xr.concat([a, b], dim="seed", join="outer")
    ds[ATTRIBUTE_PREFIX + "config_json"] = (RUN_KEYS, np.array(texts, object).reshape(1, 1, 2, 1))
    ds[PRESENT_VARIABLE] = (RUN_KEYS, np.ones((1, 1, 2, 1), np.int8))
    frame = qq.bowl_share(ds)
    assert frame["seed"].tolist() == [0]
    assert frame["value"].tolist() == pytest.approx([45.0 / 46.0])


def test_dimension_padding_of_a_lower_dimensional_run() -> None:
    """A merged campaign pads ``dim`` with NaN for a benchmark of lower dimension: those
    columns are not coordinates (x = 0.5 then 1.0 in one dimension: 1 of 2 on a face)."""
    ds = _one_run("forrester", x=[[0.5, np.nan], [1.0, np.nan], [np.nan, np.nan]],
                  f=[1.0, 2.0, np.nan], f_star=[3.0, 3.0, np.nan], warmup=[0, 0, 0])
    assert _value(qq.face_share(ds)) == pytest.approx(0.5)
    assert _value(qq.simple_regret(ds)) == pytest.approx(1.0)


# -- predictions on these quantities fail when the runs contradict them ----------------------------
class _Campaigns:
    """The two members of Campaigns that Measurements reads: datasets by key."""

    def __init__(self, datasets: dict[str, xr.Dataset]) -> None:
        self.datasets = datasets

    def get(self, key: str) -> xr.Dataset | None:
        return self.datasets.get(key)


class _Spec:
    def replicate(self, campaign: str) -> str | None:
        return {"c": "h"}.get(campaign)


def _campaign_of(runs: list[xr.Dataset]) -> xr.Dataset:
    return xr.combine_by_coords(runs, combine_attrs="override", join="outer")


#: quantity -> (benchmark, run arguments of a LOW value, of a HIGH value), three seeds each
CASES = {
    "bowl_share": ("griewank", dict(x=[[0.5, 0.5], [0.6, 0.5]], regret=[10.0, 20.0],
                                    warmup=[0, 0]),
                   dict(x=[[1.0, 0.5], [1.0, 1.0]], regret=[91.0, 181.0], warmup=[0, 0])),
    "bowl_median": ("griewank", dict(x=[[0.5, 0.5], [0.6, 0.5]], regret=[1.0, 2.0],
                                     warmup=[0, 0]),
                    dict(x=[[1.0, 0.5], [1.0, 1.0]], regret=[91.0, 181.0], warmup=[0, 0])),
    "face_share": ("sphere6", dict(x=[[0.5, 0.5], [0.4, 0.5]], warmup=[0, 0]),
                   dict(x=[[1.0, 0.5], [0.0, 0.5]], warmup=[0, 0])),
    "beats_warmup": ("sphere6", dict(f=[3.0, 1.0], f_star=[5.0, 5.0], warmup=[1, 0]),
                     dict(f=[1.0, 3.0], f_star=[5.0, 5.0], warmup=[1, 0])),
    "simple_regret": ("sphere6", dict(f=[4.0, 1.0], f_star=[5.0, 5.0], warmup=[1, 0]),
                      dict(f=[1.0, 2.0], f_star=[5.0, 5.0], warmup=[1, 0])),
    "cumulative_regret": ("hills", dict(regret=[1.0, 1.0], warmup=[0, 0]),
                          dict(regret=[4.0, 5.0], warmup=[0, 0])),
    "true_prior_share": ("hills", dict(selected=[1, 1, 2], warmup=[0, 0, 0],
                                       config={"benchmark": {"true_prior": 2}}),
                         dict(selected=[2, 2, 2], warmup=[0, 0, 0],
                              config={"benchmark": {"true_prior": 2}})),
}


def _measured(quantity: str, swap_heldout: bool) -> tuple[Measurements, str]:
    benchmark, low, high = CASES[quantity]
    out = {}
    for key, seeds in (("c", (0, 1, 2)), ("h", (10, 11, 12))):
        lo, hi = (high, low) if key == "h" and swap_heldout else (low, high)
        runs = [_one_run(benchmark, name, seed, **args)
                for name, args in (("a", lo), ("b", hi)) for seed in seeds]
        out[key] = _campaign_of(runs)
    return Measurements(_Campaigns(out)), benchmark


@pytest.mark.parametrize("quantity", sorted(CASES))
def test_each_query_quantity_prediction_holds_and_can_be_contradicted(quantity: str) -> None:
    assert quantity in qq.QUERY_QUANTITIES
    prediction = Prediction("order", quantity, Term("a", "c"), Term("b", "c"),
                            (CASES[quantity][0],), "c", f"{quantity}: a < b")
    measured, _ = _measured(quantity, swap_heldout=False)
    assert combine(evaluate(prediction, _Spec(), measured)) == "holds"
    # the held-out seeds reverse the order: the prediction fails there
    measured, _ = _measured(quantity, swap_heldout=True)
    outcomes = evaluate(prediction, _Spec(), measured)
    assert [o.status for o in outcomes] == ["holds", "fails"]
    assert combine(outcomes) == "fails"
    # the opposite prediction fails on the campaign's own seeds
    reverse = Prediction("order", quantity, Term("b", "c"), Term("a", "c"),
                         (CASES[quantity][0],), "c", f"{quantity}: b < a")
    measured, _ = _measured(quantity, swap_heldout=False)
    assert combine(evaluate(reverse, _Spec(), measured)) == "fails"


def test_relations_and_bounds() -> None:
    measured, benchmark = _measured("face_share", swap_heldout=False)
    # face share: a 0 on every seed, b 1 on every seed (no spread: s.e. 0)

    def status(relation: str, lower: str, higher: str, kind: str = "order",
               bound: float | None = None) -> str:
        p = Prediction(kind, "face_share", Term(lower, "c"), Term(higher, "c"), (benchmark,),
                       "c", "t", relation, bound)
        return combine(evaluate(p, _Spec(), measured))

    assert status("<=", "a", "b") == "holds" and status("<=", "b", "a") == "fails"
    assert status("=", "a", "b") == "fails" and status("=", "a", "a") == "holds"
    assert status(">", "b", "b", "bound", 0.9) == "holds"
    assert status(">", "a", "a", "bound", 0.9) == "fails"
    assert status("<", "a", "a", "bound", 0.1) == "holds"
    assert status("<", "b", "b", "bound", 0.1) == "fails"


def test_missing_variable_is_missing_evidence() -> None:
    measured, benchmark = _measured("face_share", swap_heldout=False)
    p = Prediction("order", "true_prior_share", Term("a", "c"), Term("b", "c"), (benchmark,),
                   "c", "t")
    outcomes = evaluate(p, _Spec(), measured)
    assert combine(outcomes) == "missing"
    assert "state_selected_prior not recorded" in outcomes[0].detail


def test_quantities_on_a_written_campaign(tmp_path) -> None:
    """Through the run-file writer and the campaign merge (ragged runs, per-run configs)."""
    runs = [_run("shekel", "gp-ucb", seed, 1.0) for seed in (0, 1, 2)]
    path = _campaign(tmp_path / "c" / "campaign.nc", runs)
    with xr.open_dataset(path) as ds:
        frame = qq.simple_regret(ds).sort_values("seed")
        cumulative = qq.cumulative_regret(ds).sort_values("seed")
        faces = qq.face_share(ds)
    for run, value, total in zip(runs, frame["value"], cumulative["value"], strict=True):
        f = run["f"].values.ravel()
        post = run["is_warmup"].values.ravel() == 0
        assert value == pytest.approx(float(run["f_star"].values.max() - f.max()))
        assert total == pytest.approx(float(run["regret"].values.ravel()[post].sum()))
    assert len(faces) == 3 and all(0.0 <= v <= 1.0 for v in faces["value"])
    assert not math.isnan(float(faces["value"].sum()))
