"""``papergym train opsd|grpo|sft|pipeline|verl-prepare|cycle``: options, progress and tables;
the run itself is :mod:`papergym.train.run` (:func:`~papergym.train.run.run_pipeline`), the
final evaluation :mod:`papergym.train.evaluation`, the cycle :mod:`papergym.train.cycle.run`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from papergym.cli.common import (
    DebugOption,
    JsonOption,
    exit_unfinished,
    reports_errors,
    stderr,
    stdout,
)
from papergym.cli.groups import HELP_SETTINGS, HelpGroup
from papergym.cli.train.cycle import cycle_command
from papergym.cli.train.options import (
    ConfigArgument,
    ConfigFileOption,
    DataOption,
    LogEveryOption,
    OutputOption,
    OverridesArgument,
    config_path,
)
from papergym.cli.train.write_sft import write_sft_command
from papergym.records import Instance
from papergym.settings.train import StageName, TrainConfig, load_config
from papergym.train.divergence import divergence_warnings
from papergym.train.grpo_signal import learning_signal_warnings
from papergym.train.progress import ProgressReport
from papergym.train.run import held_out_split, quiet_libraries, run_pipeline
from papergym.train.stages import stage_runners

app = typer.Typer(
    name="train",
    help="Train a research planner on a build: OPSD, GRPO, SFT, the two-stage pipeline, or a "
    "verl bundle for multi-node GRPO; or a paper writer: SFT on real papers (write-sft), then by "
    "review (cycle).",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings=HELP_SETTINGS,
    cls=HelpGroup,
)


def _config(
    config_path: Path,
    overrides: list[str],
    data: Path | None,
    output: Path | None,
    stage: StageName | None,
) -> TrainConfig:
    extra = list(overrides)
    if output is not None:
        extra.append(f"output_dir={output}")
    if stage is not None:
        extra.append(f"stages=[{stage}]")
    return load_config(config_path, extra, data=data)


def _run(config: TrainConfig, as_json: bool, log_every: int | None = None) -> None:
    quiet_libraries()
    live = not as_json and stderr.is_terminal
    with ProgressReport(stderr, live=live, every=log_every) as report:

        def announce(stage: StageName, what: str) -> None:
            report.say(f"{stage}: {what}")

        held_out = _held_out(config)
        result = run_pipeline(config, stage_runners(report), on_stage=announce)
    if not as_json:
        stdout.print(_summary_table(result))
        stdout.print(f"final model: {result['final_model']}")
    for warning in [*learning_signal_warnings(result), *divergence_warnings(result)]:
        stderr.print(warning, highlight=False, markup=False, soft_wrap=True)
    evaluated = _final_eval(config, result, held_out, as_json)
    if as_json:
        if evaluated is not None:
            result["eval"] = evaluated
        stdout.print_json(json.dumps(result, default=float))


def _held_out(config: TrainConfig) -> list[Instance]:
    """The held-out instances both evaluations use; says on stderr when an evaluation is
    asked for and there are none."""
    held_out = held_out_split(config)
    if held_out.note is not None:
        stderr.print(
            held_out.note,
            highlight=False,
            soft_wrap=True,  # one line, however narrow the terminal or log
        )
    return held_out.instances


def _final_eval(
    config: TrainConfig, result: dict[str, Any], held_out: list[Instance], as_json: bool
) -> dict[str, Any] | None:
    """``papergym eval`` of the base model and each stage's final model on the held-out
    split, into RUN/eval/ (eval.final); its table is printed, its rewards returned."""
    if not held_out or not config.eval.final:
        return None
    from papergym.cli.eval import print_eval_summary
    from papergym.train.evaluation import eval_values, evaluate_run, free_memory

    free_memory()
    stderr.print(
        f"eval: base model and {len(result['stages'])} stage(s) on {len(held_out)} held-out "
        "question(s)",
        highlight=False,
    )
    run_eval = evaluate_run(config, result, held_out)
    if run_eval.summary is None:
        exit_unfinished(
            run_eval.failures,
            "eval answer(s) could not be generated; finished answers are kept: run the same "
            "command again",
        )
    if not as_json:
        print_eval_summary(run_eval.summary, run_eval.tracker)
        stdout.print(f"eval: {run_eval.out}")
    return {"dir": str(run_eval.out), "reward": eval_values(run_eval.summary)}


def _summary_table(result: dict[str, Any]) -> Table:
    table = Table(title=f"Training run {result['run_dir']}")
    columns = ("stage", "steps", "loss", "reward", "tied groups", "seconds", "resumed from")
    for column in (*columns, "final model"):
        table.add_column(column)
    for stage in result["stages"]:
        loss = stage.get("last_loss", stage.get("train_loss"))
        reward = stage.get("mean_reward")
        tied = stage.get("tied_share")
        table.add_row(
            str(stage["stage"]),
            _fmt(stage.get("steps")),
            _fmt(loss),
            _fmt(reward),
            f"{tied:.0%}" if isinstance(tied, int | float) else "-",
            _fmt(stage.get("seconds")),
            str(stage.get("resumed_from") or "-"),
            str(stage.get("final_model", "")),
        )
    return table


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


EVAL_HELP = (
    "\n\nWith a held-out split (data.test_fraction): eval.steps=N answers eval.step_questions "
    "held-out questions greedily every N steps and appends eval/* (reward with its 95% "
    "interval, specific, general, unscored, words) to the stage's metrics.jsonl; the run ends "
    "with a `papergym eval` of the base model and each stage's final model in RUN/eval/ "
    "(eval.final=false: not). watch.judge=offline|llm scores the same answers with a second "
    "judge (eval/watch_reward), warns when the reward rises for watch.patience evaluations "
    "while the watch falls, and keeps the weights of the watch's peak in the stage's best/."
)


def _training_command(name: str, stage: StageName | None, summary: str) -> None:
    """Register ``papergym train NAME``: one stage, or (stage None) the config's sequence."""

    @reports_errors
    def command(
        config: ConfigArgument = None,
        overrides: OverridesArgument = None,
        config_file: ConfigFileOption = None,
        data: DataOption = None,
        output: OutputOption = None,
        as_json: JsonOption = False,
        log_every: LogEveryOption = None,
        debug: DebugOption = False,
    ) -> None:
        path, extra = config_path(config, config_file, overrides)
        _run(_config(path, extra, data, output, stage), as_json, log_every)

    command.__doc__ = summary + EVAL_HELP
    app.command(name)(command)


_training_command(
    "opsd",
    "opsd",
    "Rubric-conditioned on-policy self-distillation: the student answers the question alone, "
    "the stop-gradient teacher (same network, rubric in the user turn) scores the same tokens; "
    "generalised JSD loss, LoRA by default.",
)
_training_command(
    "grpo",
    "grpo",
    "GRPO with the rubric reward (TRL GRPOTrainer): 8 answers per question, group-normalised "
    "advantages, ratio clipping, KL 0.01 to the reference policy.",
)
_training_command(
    "sft", "sft", "The SFT baseline: supervised fine-tuning on the reference answers (TRL)."
)
_training_command(
    "pipeline",
    None,
    "Run the config's stages in order (default OPSD then GRPO), each starting from the last "
    "one's weights. Ablations: stages='[grpo, opsd]', stages='[grpo]', stages='[sft]'.",
)


app.command("cycle")(cycle_command)
app.command("write-sft")(write_sft_command)


@app.command("verl-prepare")
@reports_errors
def verl_prepare(
    out: Annotated[
        Path,
        typer.Argument(help="Folder for the verl bundle (data, config, launch script, README)."),
    ],
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Training config whose grpo/model/lora/data to use."),
    ] = None,
    overrides: OverridesArgument = None,
    data: DataOption = None,
    as_json: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Write a bundle to run the GRPO stage on verl (multi-node, Ray): parquet data, a config
    for verl.trainer.main_ppo with our reward module, a launch script and a how-to."""
    from papergym.train.verl_prepare import prepare_verl

    settings = load_config(config, list(overrides or []), data=data)
    quiet_libraries()  # the tiny model's save would print a tqdm bar into the file list
    written = prepare_verl(settings, out)
    if as_json:
        stdout.print_json(json.dumps({"out": str(out), "files": [str(p) for p in written]}))
        return
    for path in written:
        stdout.print(str(path))
    stdout.print(f"verl bundle written to {out}; see {out / 'README.md'}")


__all__ = ["app"]
