"""Every scenario file passes: the shared conformance suite and the project's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from services.rules import scenario
from tests.conftest import ROOT, SHARED

OWN = ROOT / "tests" / "scenarios"


def _files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.json")) if folder.is_dir() else []


@pytest.mark.parametrize(
    "path",
    _files(SHARED / "conformance" / "examples")
    + _files(SHARED / "conformance" / "random")
    + _files(OWN),
    ids=lambda p: f"{p.parent.name}/{p.stem}",
)
def test_scenario_outcome_matches_its_expectation(path: Path) -> None:
    data = json.loads(path.read_text())
    assert scenario.first_difference(data["expect"], scenario.run(data)) is None


def test_the_shared_suite_is_present(shared: Path) -> None:
    assert len(_files(shared / "conformance" / "random")) >= 120
    assert len(_files(shared / "conformance" / "examples")) >= 3


def test_the_project_keeps_at_least_150_scenarios() -> None:
    assert len(_files(OWN)) >= 150


def test_scenario_ids_match_file_names() -> None:
    for path in _files(OWN):
        assert json.loads(path.read_text())["id"] == path.stem, path


def test_check_reports_a_wrong_expectation(tmp_path: Path, shared: Path) -> None:
    data = json.loads((shared / "conformance/examples/discard-win-pure-suit.json").read_text())
    data["expect"]["scores"] = [0, 0, 0, 0]
    (tmp_path / "wrong.json").write_text(json.dumps(data))
    proc = subprocess.run(
        [sys.executable, "-m", "services.cli", "scenario", "--check", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 1
    assert "wrong.json: scores: expected [0,0,0,0], got [-4,4,0,0]" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "0 passed, 1 failed"


def test_shuffle_command_prints_the_deal() -> None:
    seed = "df3595bcd4cd13aeb72e1c37b04031ddbaeb2694cdae35db67ceb6073ec4dfba"
    proc = subprocess.run(
        [sys.executable, "-m", "services.cli", "shuffle", seed],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    out = json.loads(proc.stdout)
    assert set(out) == {"commitment", "direction", "deal", "wall"}
    assert out["deal"][0] == "9m 2p 5s 4s 3m 8s 2m 1p 8p 7m 2p 5p 6s 9p"
    assert out["direction"] == "opposite"
