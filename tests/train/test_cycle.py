"""``papergym train cycle``: a real round on the tiny model with TRL's CPO trainer, resume at
the first unfinished round, and one-line errors for data from another command."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from cycle_samples import WordCountReviewer, write_data
from typer.testing import CliRunner

from papergym.cli import app
from papergym.jsonl import read_jsonl
from papergym.review.reward import ReviewReward
from papergym.settings.train import TrainConfig
from papergym.train.cycle.records import Pair, Paper, round_metrics
from papergym.train.cycle.reviewers import StructureReviewer
from papergym.train.cycle.run import run_cycle

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def cycle_config(tmp_path: Path, model: Path, data: Path, **cycle: Any) -> TrainConfig:
    return TrainConfig.model_validate(
        {
            "output_dir": str(tmp_path / "run"),
            "model": {"name_or_path": str(model), "dtype": "float32"},
            "lora": {"r": 4, "alpha": 8},
            "cycle": {
                "data": str(data),
                "rounds": 2,
                "input_fraction": 0.5,
                "samples": 3,
                "temperature": 1.0,
                "max_new_tokens": 16,
                "learning_rate": 1e-3,
                "steps": 2,
                "batch_size": 2,
                "gradient_accumulation_steps": 1,
                "max_length": 256,
                "warmup_ratio": 0.0,
                **cycle,
            },
        }
    )


def test_two_rounds_train_with_cpo_then_resume_at_the_unfinished_round(
    tmp_path: Path, tiny_model: Path
) -> None:
    data = write_data(tmp_path / "data", count=4, test=2)
    config = cycle_config(tmp_path, tiny_model, data)
    reviewer = WordCountReviewer()
    told: list[str] = []
    progress: dict[str, list[tuple[int, int, str, dict[str, Any]]]] = {}

    def phase(name: str, total: int, unit: str) -> Callable[[int, Mapping[str, Any]], None]:
        seen = progress.setdefault(name, [])
        return lambda done, values: seen.append((done, total, unit, dict(values)))

    summary = run_cycle(
        config,
        ReviewReward(reviewer),
        ReviewReward(StructureReviewer()),
        on_round=lambda n, what: told.append(f"{n}: {what}"),
        phase=phase,
    )
    run = tmp_path / "run"
    # each phase of a round reports its progress: papers written, reviewed, training steps
    assert progress["round 1 writing"] == [(6, 6, "papers", {})]  # both inputs in one batch
    for name in ("round 1 reviewing", "round 1 reviewing (watch)"):
        assert [done for done, *_ in progress[name]] == [1, 2, 3, 4, 5, 6]
    trained_phases = [name for name in progress if name.endswith("training")]
    assert trained_phases
    for name in trained_phases:
        assert [(done, total, unit) for done, total, unit, _ in progress[name]] == [
            (1, 2, "step"),
            (2, 2, "step"),
        ]
        assert all(isinstance(values["loss"], float) for *_, values in progress[name])
    first, second = summary["rounds"]
    assert first["inputs"] == 2 and first["papers"] == 6  # half of the 4 training inputs
    assert first["pairs"] + first["skipped"] == 2
    assert first["pairs"] >= 1 and first["model"] == str(run / "round-1" / "final")
    assert second["init_model"] == first["model"]  # the next round starts from the new weights
    trained = [r for r in summary["rounds"] if r["pairs"]]
    assert trained, "the word-count reviewer should separate some papers"
    for metrics in trained:
        assert metrics["steps"] == 2 and metrics["train_loss"] is not None
        assert metrics["chosen_score"] > metrics["rejected_score"]
        assert (Path(metrics["model"]) / "config.json").is_file()
    inputs = {
        p.input_id for r in (1, 2) for p in read_jsonl(run / f"round-{r}" / "papers.jsonl", Paper)
    }
    assert inputs == {"p0", "p1", "p2", "p3"}  # fresh inputs in round 2; test prompts unused
    pairs = read_jsonl(run / "round-1" / "pairs.jsonl", Pair)
    assert all(p.chosen_score > p.rejected_score for p in pairs)
    assert first["watch_papers"] == 6  # the structure watch scored every paper

    # a run killed in round 2 after its papers were scored: the same call resumes there
    papers_before = (run / "round-2" / "papers.jsonl").read_text()
    (run / "round-2" / "metrics.json").unlink()
    (run / "summary.json").unlink()
    calls = reviewer.calls
    told.clear()
    again = run_cycle(
        config, ReviewReward(reviewer), None, on_round=lambda n, w: told.append(f"{n}: {w}")
    )
    assert told[0] == "1: finished earlier; skipped"
    assert "generated and scored earlier; kept" in told[1]
    assert reviewer.calls == calls  # nothing reviewed again
    assert (run / "round-2" / "papers.jsonl").read_text() == papers_before
    assert again["rounds"][1]["pairs"] == second["pairs"]
    assert (run / "round-2" / "metrics.json").is_file() and (run / "summary.json").is_file()

    # asking for one more round continues the run: rounds 1 and 2 are kept, round 3 is new
    more = config.model_copy(update={"cycle": config.cycle.model_copy(update={"rounds": 3})})
    told.clear()
    extended = run_cycle(
        more, ReviewReward(reviewer), None, on_round=lambda n, w: told.append(f"{n}: {w}")
    )
    assert told[:2] == ["1: finished earlier; skipped", "2: finished earlier; skipped"]
    assert len(extended["rounds"]) == 3 and (run / "round-3" / "metrics.json").is_file()


def test_sft_on_the_chosen_papers_with_clipped_prompts(tmp_path: Path, tiny_model: Path) -> None:
    data = write_data(tmp_path / "data", count=2)
    config = cycle_config(
        tmp_path, tiny_model, data, rounds=1, input_fraction=1.0, loss="sft", max_prompt_tokens=6
    )
    summary = run_cycle(config, ReviewReward(WordCountReviewer()), None)
    (metrics,) = summary["rounds"]
    assert metrics["pairs"] + metrics["skipped"] == 2 and metrics["pairs"] >= 1  # seeded
    assert metrics["steps"] == 2 and metrics["nll_loss"] is None  # SFTTrainer, no SimPO terms
    assert metrics["clipped_prompts"] == 2  # long reference lists cut, and counted
    pairs = read_jsonl(tmp_path / "run" / "round-1" / "pairs.jsonl", Pair)
    assert all(p.prompt.startswith("Write a") and len(p.prompt) < 40 for p in pairs)


def test_a_changed_config_is_refused_in_the_same_run_folder(
    tmp_path: Path, tiny_model: Path
) -> None:
    data = write_data(tmp_path / "data", count=2)
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("cycle:\n  rounds: 9\n", encoding="utf-8")
    config = cycle_config(tmp_path, tiny_model, data)
    with pytest.raises(Exception, match="different configuration"):
        run_cycle(config, ReviewReward(WordCountReviewer()), None)


def test_cycle_help_explains_every_option() -> None:
    result = CliRunner().invoke(app, ["train", "cycle", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for option in ("--data", "--json", "--debug", "-o", "key=value"):
        assert option in result.output


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: (d / "instances.jsonl").write_text("{}\n"), "papergym build"),
        (lambda d: (d / "manifest.json").write_text('{"kind": "eval"}'), "another command"),
        (lambda d: None, "no manifest.json"),
    ],
)
def test_data_from_another_command_is_one_line_exit_2(
    tmp_path: Path, make: Any, message: str
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    make(data)
    run = tmp_path / "run"
    args = [
        "train",
        "cycle",
        str(CONFIGS / "cycle-tiny-cpu.yaml"),
        "--data",
        str(data),
        "-o",
        str(run),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and str(data) in lines[0]
    assert not run.exists()  # nothing written


def test_every_test_prompt_is_not_a_training_input(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", count=0, test=2)
    result = CliRunner().invoke(
        app, ["train", "cycle", str(CONFIGS / "cycle-tiny-cpu.yaml"), "--data", str(data)]
    )
    assert result.exit_code == 2
    assert "no training prompts" in result.output


def test_shipped_cycle_configs_load() -> None:
    from papergym.settings.train import load_config

    tiny = load_config(CONFIGS / "cycle-tiny-cpu.yaml")
    paper = load_config(CONFIGS / "cycle-12b.yaml")
    assert (paper.cycle.samples, paper.cycle.temperature, paper.cycle.loss) == (3, 0.4, "simpo")
    assert paper.cycle.input_fraction == pytest.approx(1 / 3)
    assert paper.cycle.reviewer == "llm" and paper.cycle.watch != paper.cycle.reviewer
    assert tiny.model.name_or_path == "tiny"
    with pytest.raises(Exception, match="must differ"):
        load_config(CONFIGS / "cycle-tiny-cpu.yaml", ["cycle.watch=offline"])


def test_a_run_folder_another_command_wrote_is_refused_in_one_line(tmp_path: Path) -> None:
    data = write_data(tmp_path / "data", count=2)
    run = tmp_path / "reviews"  # `papergym review -o` writes a config.yaml too
    run.mkdir()
    for name in ("config.yaml", "review.json", "reviews.jsonl", "reviews.md"):
        (run / name).write_text("cycle:\n  rounds: 1\n", encoding="utf-8")
    args = ["train", "cycle", str(CONFIGS / "cycle-tiny-cpu.yaml"), "--data", str(data)]
    result = CliRunner().invoke(app, [*args, "-o", str(run)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "not a `papergym train cycle` run folder" in lines[0], lines
    assert "different configuration" not in lines[0]  # what it used to say
    assert sorted(p.name for p in run.iterdir()) == [
        "config.yaml",
        "review.json",
        "reviews.jsonl",
        "reviews.md",
    ]


def test_data_given_relative_is_recorded_absolute_so_a_resume_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import papergym.train.cycle.run as cycle_module

    write_data(tmp_path / "write-data", count=2)
    seen: list[Any] = []

    def record_settings(settings: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(settings.cycle.data)
        raise SystemExit(0)  # the loop itself is tested above

    monkeypatch.setattr(cycle_module, "run_cycle", record_settings)
    monkeypatch.chdir(tmp_path)
    config = str(CONFIGS / "cycle-tiny-cpu.yaml")
    for data in ("write-data", "./write-data", str(tmp_path / "write-data")):
        CliRunner().invoke(app, ["train", "cycle", config, "--data", data, "-o", "run"])
    # the docs' `--data write-data` then `--data ./write-data` used to be refused as "a run
    # with a different configuration (cycle.data: ...)"
    assert [Path(p) for p in seen] == [(tmp_path / "write-data").resolve()] * 3


def test_a_run_with_a_relative_folder_resumes_from_another_working_folder(
    tmp_path: Path, tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_data(tmp_path / "data", count=4, test=2)
    config = cycle_config(tmp_path, tiny_model, data, rounds=1)
    relative = config.model_copy(update={"output_dir": Path("runs/cycle")})
    (tmp_path / "a").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    first = run_cycle(relative, ReviewReward(WordCountReviewer()), None)["rounds"][0]
    assert first["pairs"] >= 1
    assert Path(first["model"]).is_absolute()  # was "runs/cycle/round-1/final"
    # the same run, continued from another folder: round 2 must start from round 1's weights
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "a" / "runs" / "cycle"
    more = config.model_copy(
        update={"output_dir": run, "cycle": config.cycle.model_copy(update={"rounds": 2})}
    )
    second = run_cycle(more, ReviewReward(WordCountReviewer()), None)["rounds"][1]
    assert second["init_model"] == str(run / "round-1" / "final")


def test_the_summary_calls_the_offline_reviewer_a_baseline() -> None:
    from rich.console import Console

    from papergym.cli.train.cycle import summary_table
    from papergym.settings.models import PaperGymConfig

    settings = PaperGymConfig.model_validate(
        {"cycle": {"reviewer": "offline", "watch": "structure"}}
    )
    console = Console(width=200, record=True)
    console.print(summary_table({"run_dir": "run", "rounds": []}, settings))
    assert "reward: offline baseline, watch: structure" in console.export_text()


def test_the_summary_says_why_the_watch_columns_are_empty() -> None:
    from papergym.cli.train.cycle import watch_notes
    from papergym.settings.models import PaperGymConfig

    settings = PaperGymConfig.model_validate(
        {"model": {"name_or_path": "tiny"}, "cycle": {"watch": "structure"}}
    )
    papers = [
        Paper(input_id="a", sample=n, text=t, tokens=1, words=1, score=s, rating=s, watch_score=0)
        for n, (t, s) in enumerate([("x", 0.2), ("y", 0.4), ("z", 0.3)])
    ]
    pair = Pair(
        input_id="a", prompt="p", chosen="y", rejected="x", chosen_score=0.4,
        rejected_score=0.2, chosen_watch=0.0, rejected_watch=0.0,
    )  # fmt: skip
    metrics = {"round": 1, **round_metrics(papers, [pair], [])}
    assert metrics["watch_spearman"] is None and metrics["watch_pair_agreement"] is None

    notes = watch_notes({"rounds": [metrics]}, settings)

    assert notes[0] == (
        "round 1: watch ρ -: the watch gave all 3 papers the same score (0.000); "
        "watch agrees -: all 1 pair(s) tied on the watch"
    )
    assert "tiny model writes byte soup" in notes[1]
