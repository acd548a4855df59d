"""Shared f*(t) oracle tables and the cheap per-query refinement (issue 14, items 1-3).

* A table is the grid the run would have built, bit for bit, and a run given it is identical to
  one that builds its own.
* A table built for anything else (benchmark, horizon, options, oracle settings) or damaged is
  rejected with one line naming the field, expected (this run) and found (file); the CLI exits 2.
* The workflow plans one oracle job per benchmark configuration and feeds it to every run.
* Regression against ``tests/fixtures/oracle_baseline.json``, recorded by
  ``benchmarks/oracle_baseline.py`` BEFORE the oracle changes (independent of today's code): the
  same runs, now with a shared table and the fast refinement, give the same f* at every query
  time to ``REFINE_RTOL`` and the same regrets to 1e-9 relative.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tvbo
from tvbo.benchmarks import make
from tvbo.benchmarks import oracle_table as ot
from tvbo.benchmarks.oracle import REFINE_RTOL, TimeGridOracle
from tvbo.cli import main
from tvbo.results.schema import CODE_ATTRIBUTE, COST_ATTRIBUTES

FIXTURE = Path(__file__).parents[1] / "fixtures" / "oracle_baseline.json"
OPTS = {"horizon": 30.0, "cost": 0.5}


@pytest.fixture(scope="module")
def table_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("oracle") / "hartmann3.npz"
    tvbo.write_oracle("hartmann3", path, **OPTS)
    return path


def _rewrite(src: Path, dst: Path, **header_edits) -> Path:
    """A copy of a table with header entries replaced (arrays and their hash kept)."""
    table = ot.read_oracle_table(src)
    header = {**table.header, **header_edits}
    edited = ot.OracleTable(table.times, table.f_star, table.argmax, header)
    return ot.write_oracle_table(edited, dst)


# -- the table is the in-run grid -----------------------------------------------------------------
def test_table_is_the_grid_a_run_builds(table_path: Path) -> None:
    fresh = make("hartmann3", **OPTS)
    times, argmax, f_star = fresh.oracle.grid()
    table = ot.read_oracle_table(table_path)
    np.testing.assert_array_equal(table.times, times)
    np.testing.assert_array_equal(table.f_star, f_star)
    np.testing.assert_array_equal(table.argmax, argmax)
    assert table.header["benchmark"] == "hartmann3" and table.header["horizon"] == 30.0
    assert json.loads(table.header["options"])["cost"] == 0.5
    loaded = make("hartmann3", **OPTS)
    ot.load_oracle_table(loaded, table_path)
    np.testing.assert_array_equal(loaded.oracle.grid()[2], f_star)


def test_loading_skips_the_build(table_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bench = make("hartmann3", **OPTS)
    ot.load_oracle_table(bench, table_path)

    def no_build(self: TimeGridOracle) -> None:
        raise AssertionError("the grid was rebuilt although a table was loaded")

    monkeypatch.setattr(TimeGridOracle, "_build", no_build)
    assert np.isfinite(bench.f_star(12.34)) and np.isfinite(bench.refine_f_star(7.5, [0.2, 0.8]))


def test_run_with_table_is_bit_identical(table_path: Path) -> None:
    kw = dict(seed=1, horizon=30.0, cost=0.5, warmup=4, profile="botorch-i9-laptop")
    own = tvbo.simulate("hartmann3", "w-dbo", **kw)
    shared = tvbo.simulate("hartmann3", "w-dbo", oracle_table=table_path, **kw)
    again = tvbo.simulate("hartmann3", "w-dbo", oracle_table=table_path, **kw)
    assert own.n_iterations > 10
    for name in own.data_vars:
        np.testing.assert_array_equal(shared[name].values, own[name].values, err_msg=name)
        np.testing.assert_array_equal(again[name].values, shared[name].values, err_msg=name)
    assert json.loads(shared.attrs["config_json"])["oracle_table"]["data_sha256"]
    for ds in (shared, again):  # the runs' own CPU and wall seconds differ from run to run
        for name in COST_ATTRIBUTES:
            assert ds.attrs.pop(name) >= 0.0
        # and so may the code record (what the process had loaded by then)
        assert "tvbo.benchmarks.oracle_table" in json.loads(ds.attrs.pop(CODE_ATTRIBUTE))
    assert shared.attrs == again.attrs


# -- rejection: each field named, expected vs found -----------------------------------------------
@pytest.mark.parametrize(
    ("name", "options", "fragments"),
    [
        ("shekel", OPTS, ["benchmark expected 'shekel', found 'hartmann3'"]),
        ("hartmann3", {"horizon": 40.0, "cost": 0.5}, ["horizon expected 40.0, found 30.0"]),
        ("hartmann3", {"horizon": 30.0, "cost": 1.0}, ["benchmark option 'cost'",
                                                       "expected 1.0, found 0.5"]),
        ("hartmann3", {**OPTS, "oracle_grid_step": 0.5}, ["benchmark option 'oracle_grid_step'",
                                                          "expected 0.5, found 1.0"]),
    ],
)
def test_mismatched_table_is_rejected(table_path, name, options, fragments) -> None:
    bench = make(name, **options)
    with pytest.raises(ot.OracleTableError) as info:
        ot.load_oracle_table(bench, table_path)
    message = str(info.value)
    assert "\n" not in message and str(table_path) in message
    for fragment in fragments:
        assert fragment in message
    assert bench.oracle._F is None  # nothing installed


def test_other_oracle_settings_are_rejected(table_path, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(ot, "ORACLE_CODE_VERSION", "0-older")
    older = tmp_path / "older.npz"
    tvbo.write_oracle("hartmann3", older, **OPTS)
    monkeypatch.undo()
    with pytest.raises(ot.OracleTableError,
                       match=r"oracle setting 'oracle_code_version' expected '1', found '0-older'"):
        ot.load_oracle_table(make("hartmann3", **OPTS), older)
    # a benchmark class setting (sample counts) is named too
    bench = make("hartmann3", **OPTS)
    bench.oracle_raw_samples = 2048
    with pytest.raises(ot.OracleTableError,
                       match=r"'benchmark_settings.oracle_raw_samples' expected 2048, found 1024"):
        ot.load_oracle_table(bench, table_path)
    # the hash itself is checked, not only the settings it summarises
    tampered = _rewrite(table_path, tmp_path / "hash.npz", settings_sha256="0" * 64)
    with pytest.raises(ot.OracleTableError, match=r"settings_sha256 expected '[0-9a-f]{64}'"):
        ot.load_oracle_table(make("hartmann3", **OPTS), tampered)


def test_damaged_tables_are_rejected(table_path: Path, tmp_path: Path) -> None:
    data = table_path.read_bytes()
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ot.OracleTableError, match=r"unreadable \(truncated"):
        ot.read_oracle_table(truncated)
    with pytest.raises(ot.OracleTableError, match="no such file"):
        ot.read_oracle_table(tmp_path / "absent.npz")
    other = tmp_path / "other.npz"
    np.savez(other, times=np.zeros(3))
    with pytest.raises(ot.OracleTableError, match=r"field\(s\) argmax, f_star, header missing"):
        ot.read_oracle_table(other)
    # arrays edited behind the header's back (a valid zip): the data hash catches it
    table = ot.read_oracle_table(table_path)
    forged = tmp_path / "forged.npz"
    with zipfile.ZipFile(table_path) as z, zipfile.ZipFile(forged, "w") as out:
        for item in z.namelist():
            raw = z.read(item)
            if item == "f_star.npy":
                raw = raw[: -8] + np.float64(table.f_star[-1] + 1e-9).tobytes()
            out.writestr(item, raw)
    with pytest.raises(ot.OracleTableError, match=r"data_sha256 expected .* the file is damaged"):
        ot.read_oracle_table(forged)
    wrong_format = _rewrite(table_path, tmp_path / "fmt.npz", format="something-else")
    with pytest.raises(ot.OracleTableError, match="format expected 'tvbo-oracle-table', found"):
        ot.read_oracle_table(wrong_format)


def test_write_is_atomic_and_readable_by_others(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "t.npz"
    tvbo.write_oracle("powell", out, horizon=5.0)
    assert out.is_file() and not list(out.parent.glob(".*tmp"))
    assert out.stat().st_mode & 0o044  # not mkstemp's 0600


# -- command line ---------------------------------------------------------------------------------
def test_cli_oracle_then_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = tmp_path / "h3.npz"
    flags = ["--horizon", "20", "--cost", "0.5"]
    assert main(["oracle", "--benchmark", "hartmann3", *flags, "--out", str(table), "--quiet"]) == 0
    run = tmp_path / "run.nc"
    assert main(["run", "--benchmark", "hartmann3", "--algorithm", "gp-ucb", *flags,
                 "--warmup", "3", "--quiet", "--oracle-table", str(table), "--out", str(run)]) == 0
    assert run.is_file()


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["run", "--benchmark", "shekel", "--algorithm", "gp-ucb", "--horizon", "20"],
         "benchmark expected 'shekel', found 'hartmann3'"),
        (["run", "--benchmark", "hartmann3", "--algorithm", "gp-ucb", "--horizon", "20"],
         "benchmark option 'cost' expected 8.0, found 0.5"),
    ],
)
def test_cli_rejects_a_mismatched_table(tmp_path, capsys, argv, fragment) -> None:
    table = tmp_path / "h3.npz"
    main(["oracle", "--benchmark", "hartmann3", "--horizon", "20", "--cost", "0.5",
          "--out", str(table), "--quiet"])
    out = tmp_path / "run.nc"
    with pytest.raises(SystemExit) as info:
        main([*argv, "--oracle-table", str(table), "--out", str(out), "--quiet"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tvbo: error: oracle table") and fragment in err
    assert not out.exists()


def test_cli_oracle_bad_input(tmp_path, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["oracle", "--benchmark", "nope", "--out", str(tmp_path / "x.npz")])
    assert info.value.code == 2 and "valid" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["oracle", "--benchmark", "hartmann3", "--benchmark-options", '{"colour": 1}',
              "--out", str(tmp_path / "x.npz")])
    assert info.value.code == 2 and "colour" in capsys.readouterr().err
    assert not (tmp_path / "x.npz").exists()


# -- regression against the baseline recorded before the change -----------------------------------
def _baseline() -> dict:
    return json.loads(FIXTURE.read_text())


def _close(new: list[float], old: list[float]) -> float:
    a, b = np.asarray(new), np.asarray(old)
    return float(np.max(np.abs(a - b) / (1.0 + np.abs(b)))) if len(b) else 0.0


@pytest.mark.parametrize(
    "name",
    ["shekel", "hartmann3", "ackley", "griewank", "eggholder", "schwefel", "hartmann6", "powell"],
)
def test_query_time_f_star_matches_the_baseline(name: str, tmp_path: Path) -> None:
    """The first 45 queries of the baseline's gp-ucb run (w-dbo for the 8 s benchmarks), with a
    shared table: same query times, f* within REFINE_RTOL, regret never below -REFINE_RTOL."""
    base = _baseline()
    algorithm = "w-dbo" if name in ("shekel", "hartmann3") else "gp-ucb"
    (rec,) = [r for r in base["runs"] if (r["benchmark"], r["algorithm"]) == (name, algorithm)]
    table = tvbo.write_oracle(name, tmp_path / "t.npz", horizon=base["horizon"])
    ds = tvbo.simulate(name, algorithm, seed=rec["seed"], horizon=base["horizon"],
                       warmup=5, profile=base["profile"], max_iterations=45,
                       oracle_table=table).squeeze()
    n = int(ds["n_iterations"])
    assert n == min(45, len(rec["t_sample"]))
    assert ds["t_sample"].values[:n].tolist() == rec["t_sample"][:n]
    f_star = ds["f_star"].values[:n]
    assert _close(f_star, rec["f_star"][:n]) <= REFINE_RTOL
    assert np.all(ds["regret"].values[:n] >= -REFINE_RTOL * (1.0 + np.abs(f_star)))


@pytest.mark.parametrize(("name", "algorithm"), [("hartmann3", "bolt"), ("shekel", "gp-ucb")])
def test_whole_run_regrets_match_the_baseline(name: str, algorithm: str, tmp_path) -> None:
    base = _baseline()
    (rec,) = [r for r in base["runs"] if (r["benchmark"], r["algorithm"]) == (name, algorithm)]
    table = tvbo.write_oracle(name, tmp_path / "t.npz", horizon=base["horizon"])
    ds = tvbo.simulate(name, algorithm, seed=rec["seed"], horizon=base["horizon"], warmup=5,
                       profile=base["profile"], oracle_table=table).squeeze()
    assert ds["t_sample"].values.tolist() == rec["t_sample"]
    assert _close(ds["f_star"].values, rec["f_star"]) <= REFINE_RTOL
    assert _close(ds["f_star_grid"].values, rec["f_star_grid"]) <= REFINE_RTOL
    for metric in ("average_regret", "time_integrated_regret"):
        assert float(ds[metric]) == pytest.approx(rec[metric], rel=1e-9, abs=0)


# -- the Newton polish itself, against closed forms -----------------------------------------------
def test_newton_polish_reaches_box_constrained_maxima() -> None:
    """max of -sum w (x - c)^2 + coupling on [0, 1]^3 is the clipped centre when the coupling is
    0; with a cusp-free coupling the result must match scipy's L-BFGS-B on the same problem."""
    from tvbo.benchmarks.oracle import newton_polish, polish

    c = np.array([0.3, 1.4, -0.2])  # interior, above and below the box
    w = np.array([1.0, 5.0, 0.5])

    def fun(X: np.ndarray) -> np.ndarray:
        return -np.sum(w * (X - c) ** 2, axis=1)

    def grad(X: np.ndarray) -> np.ndarray:
        return -2.0 * w * (X - c)

    starts = np.random.default_rng(3).uniform(size=(6, 3))
    X, F, converged = newton_polish(fun, grad, starts)
    assert converged.all()
    np.testing.assert_allclose(X, np.tile(np.clip(c, 0, 1), (6, 1)), atol=1e-12)
    assert np.all(F >= fun(starts))

    def fun2(X: np.ndarray) -> np.ndarray:  # non-convex: several local maxima
        return np.sum(np.sin(7.0 * X) - 0.3 * X**2, axis=1) + 0.5 * X[:, 0] * X[:, 1]

    def grad2(X: np.ndarray) -> np.ndarray:
        g = 7.0 * np.cos(7.0 * X) - 0.6 * X
        g[:, 0] += 0.5 * X[:, 1]
        g[:, 1] += 0.5 * X[:, 0]
        return g

    X2, F2, conv2 = newton_polish(fun2, grad2, starts)
    Xs, Fs = polish(fun2, grad2, X2, refine_best=False)  # L-BFGS-B from Newton's answer
    assert conv2.all() and np.all(Fs - F2 <= 1e-12 * (1 + np.abs(F2)))
    assert np.all(F2 >= fun2(starts))


# -- workflow -------------------------------------------------------------------------------------
def test_workflow_plans_one_oracle_job_per_benchmark(tmp_path: Path) -> None:
    from tests.workflow.test_workflow import load_test_config, planned_jobs, snakemake

    config = load_test_config()
    config.update(benchmarks=["hartmann3", "eggholder", "ackley"], algorithms=["gp-ucb", "w-dbo"],
                  seeds=[0, 1], speeds=[1.0, 2.0],
                  benchmark_options={"hartmann3": {"cost": 0.5}})
    proc = snakemake(tmp_path, config, "-n", "--cores", "1", "--printshellcmds")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out = proc.stdout
    jobs = planned_jobs(out)
    assert jobs["oracle_table"] == 2  # hartmann3, eggholder; Ackley's argmax is closed-form
    assert jobs["simulate_run"] == 3 * 2 * 2 * 2
    assert out.count("tvbo oracle --benchmark hartmann3 --cost-table metronome --horizon 20.0 "
                     "--cost 0.5 --out results/test/oracles/hartmann3.npz") == 1
    assert out.count("--oracle-table results/test/oracles/hartmann3.npz") == 8
    assert out.count("--oracle-table results/test/oracles/eggholder.npz") == 8
    assert "oracles/ackley" not in out
    config["oracle_tables"] = False
    proc = snakemake(tmp_path, config, "-n", "--cores", "1", "--printshellcmds")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "oracle_table" not in planned_jobs(proc.stdout) and "--oracle-table" not in proc.stdout


def test_no_table_list_holds_only_exact_oracles() -> None:
    for name in sorted(ot.NO_TABLE_NEEDED):
        try:
            bench = make(name)
        except (ValueError, FileNotFoundError):  # real-data benchmarks need their prepared field
            continue
        assert bench.oracle_exact, name
