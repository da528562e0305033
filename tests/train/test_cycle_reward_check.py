"""``train cycle`` probes its reward reviewer before training and refuses a gamed one unless
forced; the run records the check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cycle_samples import write_data
from typer.testing import CliRunner

from papergym.cli import app
from papergym.errors import BadInputError
from papergym.jsonl import write_jsonl
from papergym.settings.train import TrainConfig
from papergym.train.cycle.reviewers import build_scorer
from papergym.train.cycle.reward_check import check_reward_reviewer, probe_papers
from papergym.write.data import WriteExample
from support.review_papers import synthetic_paper, write_baseline

PAPER = synthetic_paper(paragraphs_per_section=4)
CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def data_with_papers(folder: Path, papers: int = 2) -> Path:
    """A `write prepare` folder whose training examples carry ``PAPER`` as their reference."""
    write_data(folder, count=papers)
    examples = [
        WriteExample(
            id=f"e{i}",
            source=f"paper{i}.tex",
            title=f"Paper {i}",
            split="train",
            system="Write a short paper.",
            prompt="Write a paper.",
            completion=PAPER,
            keys=(),
        )
        for i in range(papers)
    ]
    write_jsonl(folder / "sft.jsonl", examples)
    return folder


def config(tmp_path: Path, *, guards: str, force: bool = False) -> TrainConfig:
    baseline = write_baseline(tmp_path / "baseline.json", PAPER)
    return TrainConfig.model_validate(
        {
            "output_dir": str(tmp_path / "run"),
            "review": {"baseline": str(baseline), "guards": {"apply": guards}},
            "cycle": {
                "data": str(data_with_papers(tmp_path / "data")),
                "reviewer": "offline",
                "watch": "structure",
                "probe_papers": 2,
                "force_reward": force,
            },
        }
    )


def test_probe_papers_are_the_datas_reference_papers(tmp_path: Path) -> None:
    settings = config(tmp_path, guards="offline").cycle
    assert probe_papers(settings) == [PAPER, PAPER]
    assert probe_papers(settings.model_copy(update={"probe_papers": 0})) == []
    assert probe_papers(settings.model_copy(update={"probe_papers": 1})) == [PAPER]


def test_a_gamed_reward_reviewer_is_refused_unless_forced(tmp_path: Path) -> None:
    gamed = config(tmp_path, guards="none")
    papers = probe_papers(gamed.cycle)
    with pytest.raises(BadInputError, match="gamed by its probes: word_list"):
        check_reward_reviewer(gamed.cycle, build_scorer("offline", gamed), papers)
    forced = config(tmp_path, guards="none", force=True)
    check = check_reward_reviewer(forced.cycle, build_scorer("offline", forced), papers)
    assert check.forced and "word_list" in check.failing and check.report is not None
    guarded = config(tmp_path, guards="offline")
    passed = check_reward_reviewer(guarded.cycle, build_scorer("offline", guarded), papers)
    assert passed.failing == [] and not passed.forced


@pytest.mark.slow  # the training stack's imports: about 4 s on a busy 2-core machine
def test_run_cycle_writes_the_check_into_the_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny_model: Path
) -> None:
    import papergym.train.cycle.run as cycle_module

    forced = config(tmp_path, guards="none", force=True)
    forced = forced.model_copy(
        update={"model": forced.model.model_copy(update={"name_or_path": str(tiny_model)})}
    )
    check = check_reward_reviewer(
        forced.cycle, build_scorer("offline", forced), probe_papers(forced.cycle)
    )
    monkeypatch.setattr(
        cycle_module,
        "play_round",
        lambda shared, number, folder, current, chosen: {"model": current},
    )
    summary = cycle_module.run_cycle(
        forced, build_scorer("offline", forced), None, reward_check=check
    )
    recorded = json.loads((Path(summary["run_dir"]) / "reward-check.json").read_text("utf-8"))
    assert recorded["forced"] is True and "word_list" in recorded["failing"]
    assert summary["reward_check"]["forced"] is True


@pytest.mark.slow  # the training stack's imports: about 4 s on a busy 2-core machine
def test_train_cycle_refuses_then_records_force_reward(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import papergym.train.cycle.run as cycle_module

    seen: list[Any] = []

    def record(settings: Any, *args: Any, reward_check: Any = None, **kwargs: Any) -> Any:
        seen.append((settings.cycle.force_reward, reward_check))
        return {"rounds": [], "final_model": "m", "run_dir": str(tmp_path)}

    monkeypatch.setattr(cycle_module, "run_cycle", record)
    baseline = write_baseline(tmp_path / "baseline.json", PAPER)
    data = data_with_papers(tmp_path / "data")
    args = [
        "train",
        "cycle",
        str(CONFIGS / "cycle-tiny-cpu.yaml"),
        "--data",
        str(data),
        "-o",
        str(tmp_path / "run"),
        f"review.baseline={baseline}",
        "review.guards.apply=none",
        "cycle.probe_papers=1",
        "--json",
    ]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2, refused.output
    assert "--force-reward" in refused.output and not seen
    forced = CliRunner().invoke(app, [*args, "--force-reward"])
    assert forced.exit_code == 0, forced.output
    ((force_set, check),) = seen
    assert force_set and check.forced and check.failing
