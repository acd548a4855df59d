"""The workflow as the Snakemake workflow catalog and ``snakedeploy`` expect it.

A user who does not clone the repository runs ``snakedeploy deploy-workflow <repo> <dest>``: it
copies ``config/`` and ``profiles/`` into ``<dest>`` and writes ``<dest>/workflow/Snakefile``, a
``module`` that points at the repository's ``workflow/Snakefile``. Everything the workflow reads
from its own tree (schema, reproduction spec) must then be found relative to the rule files, not
to the working directory or ``workflow.basedir``; the deployed folder's ``config/config.yaml`` must
be the configuration that is planned. The catalog's listing rules (README words, LICENSE,
``.snakemake-workflow-catalog.yml``), the distribution name of the conda env and the snakefmt
formatting are checked here too, since each one breaks a deployment silently.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]

#: the first line of each licence text this project could declare (SPDX id -> header)
LICENCE_HEADERS = {"MIT": "MIT License"}


def test_license_file_matches_pyproject() -> None:
    declared = PYPROJECT["license"]
    assert declared in LICENCE_HEADERS, f"pyproject licence {declared!r}: add its header here"
    text = (REPO / "LICENSE").read_text()
    assert text.splitlines()[0].strip() == LICENCE_HEADERS[declared]
    # the MIT grant and disclaimer, not just the title
    assert "Permission is hereby granted, free of charge" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_catalog_standardized_usage_files() -> None:
    """The catalog lists a repository whose README says 'snakemake' and 'workflow'; its
    'standardized usage' also needs workflow/Snakefile, config/README.md and the yml."""
    readme = (REPO / "README.md").read_text().lower()
    assert "snakemake" in readme and "workflow" in readme
    assert (REPO / "workflow" / "Snakefile").is_file()
    assert not (REPO / "Snakefile").exists(), "one entry point: workflow/Snakefile"
    assert (REPO / "config" / "README.md").is_file()
    catalog = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())
    usage = catalog["usage"]
    stacks = usage["software-stack-deployment"]
    assert set(stacks) <= {"conda", "singularity", "singularity+conda"}
    assert any(stacks.values()), "at least one software-stack deployment"
    assert usage["report"] is True
    assert usage["mandatory-flags"]["desc"].strip()


def test_conda_env_installs_the_distribution_by_name_and_version() -> None:
    env = yaml.safe_load((REPO / "workflow" / "envs" / "tvbo.yaml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert f"{PYPROJECT['name']}=={PYPROJECT['version']}" in pip
    assert not any(line.startswith("-e") for line in pip), "a deployed workflow has no source tree"


def test_distribution_name_is_not_the_taken_pypi_name() -> None:
    """`tvbo` on PyPI is The Virtual Brain Ontology: installing it must never be our advice."""
    assert PYPROJECT["name"] == "tvbo-lab"
    assert PYPROJECT["scripts"]["tvbo"] == "tvbo.cli:main"  # the command keeps its name
    readme = (REPO / "README.md").read_text()
    assert "pip install tvbo-lab" in readme
    assert not re.search(r"pip install tvbo(?![-\w])", readme)


@pytest.mark.skipif(shutil.which("snakefmt", path=str(VENV_BIN)) is None,
                    reason="snakefmt is not installed (pip install -e '.[test]')")
def test_rule_files_are_snakefmt_clean() -> None:
    proc = subprocess.run([str(VENV_BIN / "snakefmt"), "--check", "workflow"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


def _source_copy(dest: Path) -> Path:
    """What a clone of the repository holds (tracked and new, unignored files): no .venv,
    results or data, which snakedeploy's local provider would otherwise copy whole."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.mark.skipif(shutil.which("snakedeploy", path=str(VENV_BIN)) is None,
                    reason="snakedeploy is not installed (pip install -e '.[test]')")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is needed to list the sources")
def test_snakedeploy_deployment_plans_its_own_config(tmp_path: Path) -> None:
    source = _source_copy(tmp_path / "tvbo-lab")
    dest = tmp_path / "deployed"
    deploy = subprocess.run(
        [str(VENV_BIN / "snakedeploy"), "deploy-workflow", str(source), str(dest),
         "--branch", "main", "--name", "tvbo"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert deploy.returncode == 0, deploy.stderr[-2000:]
    assert (dest / "config" / "config.yaml").is_file()
    assert (dest / "LICENSE").is_file()
    snakefile = dest / "workflow" / "Snakefile"
    text = snakefile.read_text()
    assert "module tvbo:" in text and "use rule * from tvbo" in text
    # snakedeploy 0.17's local provider writes the module path relative ("workflow/Snakefile"),
    # which Snakemake resolves against the deployed Snakefile's folder. A GitHub deployment writes
    # github("owner/repo", path="workflow/Snakefile", tag=...) instead; the local equivalent is
    # the absolute path, so that one line is rewritten and everything else is snakedeploy's.
    assert '"workflow/Snakefile"' in text
    snakefile.write_text(text.replace('"workflow/Snakefile"',
                                      repr(str(source / "workflow" / "Snakefile"))))
    # the deployed folder's OWN config is planned: the default campaign under another name
    deployed_config = dest / "config" / "config.yaml"
    text = deployed_config.read_text()
    assert re.search(r"^campaign: quickstart$", text, flags=re.M)
    deployed_config.write_text(re.sub(r"^campaign: quickstart$", "campaign: deployed", text,
                                      flags=re.M))
    config = yaml.safe_load(deployed_config.read_text())

    env = {**os.environ, "PATH": os.pathsep.join([str(VENV_BIN), os.environ.get("PATH", "")])}
    dry = subprocess.run([str(VENV_BIN / "snakemake"), "-n"], cwd=dest, capture_output=True,
                         text=True, env=env, timeout=300)
    assert dry.returncode == 0, (dry.stdout + dry.stderr)[-3000:]
    out = dry.stdout + dry.stderr
    counts = {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$",
                                                    out[out.index("Job stats:"):], flags=re.M)}
    runs = (len(config["benchmarks"]) * len(config["algorithms"]) * len(config["seeds"])
            * len(config["speeds"]))
    assert counts["simulate_run"] == runs == 90  # the default campaign: 3 x 10 x 3 x 1
    assert "results/deployed/campaign.nc" in out and "results/quickstart/" not in out
    assert not (dest / "results").exists(), "a dry run writes nothing"


def test_version_is_looked_up_under_the_distribution_name(capsys: pytest.CaptureFixture) -> None:
    from tvbo.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    captured = capsys.readouterr()  # argparse prints the message of parser.exit on stderr
    assert (captured.out + captured.err).split() == ["tvbo", PYPROJECT["version"]]
