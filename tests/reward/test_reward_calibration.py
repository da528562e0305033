"""The offline judge's calibration as data: the shipped file, other files, the config key and
``papergym calibrate-reward``."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from test_reward_offline import INSTANCES
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.jsonl import write_jsonl
from papergym.reward.offline import (
    BUNDLED_CALIBRATION,
    OfflineCalibration,
    OfflineJudge,
    calibrate,
    load_calibration,
)
from papergym.reward.runtime import make_judge
from papergym.settings import load_config

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "src" / "papergym" / "reward" / BUNDLED_CALIBRATION
runner = CliRunner()


def test_the_shipped_calibration_gives_todays_weight_and_threshold() -> None:
    shipped = load_calibration()
    # refit on the tuning half of the shared papers (issue 23): coverage alone separates widest
    assert (shipped.lexical_weight, shipped.threshold) == (1.0, 0.875)
    judge = OfflineJudge()
    assert (judge.lexical_weight, judge.threshold) == (1.0, 0.875)
    # the coherence rules are in the name: score caches of the old judge are not reused
    assert judge.name == "offline:minilm+coverage+coherence(w=1,t=0.875)"
    assert (shipped.positives, shipped.negatives, shipped.instances) == (80, 560, 8)
    assert shipped.margin == 0.25


def test_the_shipped_calibration_has_provenance_and_no_machine_path() -> None:
    text = SHIPPED.read_text("utf-8")
    assert not re.search(r"(^|[\s\"'(])/(work|tmp|home|root|Users)/", text), "a machine path"
    provenance = OfflineCalibration.model_validate_json(text).provenance
    assert provenance.command.startswith("papergym calibrate-reward ")
    assert "tuning half" in provenance.data and "extractive" in provenance.data
    assert provenance.papergym_version == "0.1.0"


def test_package_data_globs_ship_the_calibration_file() -> None:
    """An installed (non-editable) package must carry the file the judge loads by default."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    globs = pyproject["tool"]["setuptools"]["package-data"]["papergym"]
    package = REPO / "src" / "papergym"
    assert any(SHIPPED in set(package.glob(pattern)) for pattern in globs), globs


def _write(path: Path, **changes: object) -> Path:
    data = json.loads(SHIPPED.read_text("utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_another_calibration_file_decides_the_verdicts(tmp_path: Path) -> None:
    instance = INSTANCES[0]
    answer = instance.reference_answer
    strict = OfflineJudge(calibration=_write(tmp_path / "strict.json", threshold=1.5))
    lenient = OfflineJudge(calibration=str(_write(tmp_path / "lenient.json", threshold=-1.0)))
    assert all(v.passed is False for v in strict.judge_sync(instance, answer)[0])
    assert all(v.passed is True for v in lenient.judge_sync(instance, "Unrelated words.")[0])
    assert strict.name != OfflineJudge().name  # a cached score never crosses calibrations
    # an explicit threshold still wins over the file's
    assert OfflineJudge(0.5, calibration=strict.calibration).threshold == 0.5


def test_the_config_key_points_the_judge_at_another_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "cal.json", threshold=0.42, lexical_weight=0.5)
    config = load_config(None, ["reward.judge=offline", f"reward.calibration={path}"], env={})
    judge = make_judge(config)
    assert isinstance(judge, OfflineJudge)
    assert (judge.threshold, judge.lexical_weight) == (0.42, 0.5)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such calibration file"),
        ("{not json", "not JSON: "),
        ('{"threshold": 0.5}', "not an offline-judge calibration: "),
        ("folder", "is a folder, not a calibration file"),
    ],
)
def test_a_bad_calibration_file_is_one_line_naming_it(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "cal.json"
    if content == "folder":
        path.mkdir()
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(BadInputError) as error:
        OfflineJudge(calibration=path)
    assert str(error.value).startswith(f"{path}: {message}")
    assert "\n" not in str(error.value)


def test_a_weight_out_of_range_is_refused_with_its_key(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match=r"lexical_weight: Input should be less than"):
        load_calibration(_write(tmp_path / "cal.json", lexical_weight=2.0))


def test_calibrate_reward_writes_a_file_the_judge_loads(tmp_path: Path) -> None:
    source = tmp_path / "build" / "instances.jsonl"
    source.parent.mkdir()
    # a second instance of the first paper (another recipe): left out, or its own reference
    # would count as a negative
    twin = INSTANCES[0].model_copy(update={"id": "twin", "recipe": "innov"})
    write_jsonl(source, [*INSTANCES, twin])
    out = tmp_path / "cal.json"
    result = runner.invoke(app, ["calibrate-reward", str(source), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["left_out"] == 1 and summary["instances"] == 3

    written = load_calibration(out)
    expected = calibrate(INSTANCES)
    assert (written.threshold, written.lexical_weight) == (
        expected.threshold,
        expected.lexical_weight,
    )
    assert written.by_weight == expected.by_weight
    assert written.provenance.command == "papergym calibrate-reward instances.jsonl -o cal.json"
    assert str(tmp_path) not in out.read_text("utf-8")  # no machine path in what may ship
    assert "3 instances, one per paper, from instances.jsonl" in written.provenance.data
    assert "1 more instances" in written.provenance.note
    assert next(iter(json.loads(out.read_text("utf-8")))) == "format"
    assert OfflineJudge(calibration=out).threshold == expected.threshold


def test_calibrate_reward_refuses_one_paper_and_a_folder_for_out(tmp_path: Path) -> None:
    source = tmp_path / "instances.jsonl"
    write_jsonl(source, INSTANCES[:1])
    one = runner.invoke(app, ["calibrate-reward", str(source), "-o", str(tmp_path / "c.json")])
    assert one.exit_code == 2
    assert "at least two papers" in one.output and len(one.output.strip().splitlines()) == 1
    folder = runner.invoke(app, ["calibrate-reward", str(source), "-o", str(tmp_path)])
    assert folder.exit_code == 2 and "is a folder" in folder.output
    assert not (tmp_path / "c.json").exists()
