"""``papergym train opsd|grpo|sft|pipeline|verl-prepare``."""

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
from papergym.errors import BadInputError
from papergym.records import Instance
from papergym.settings.load import is_override
from papergym.train.config import StageName, TrainConfig, load_config
from papergym.train.cycle_command import cycle_command
from papergym.train.grpo_signal import TIED_WARNING
from papergym.train.progress import LogEveryOption, ProgressReport
from papergym.train.run import StageContext, StageRunner, StepHook, run_pipeline

train_app = typer.Typer(
    name="train",
    help="Train a research planner on a build: OPSD, GRPO, SFT, the two-stage pipeline, or a "
    "verl bundle for multi-node GRPO; or a paper writer by review (cycle).",
    no_args_is_help=True,
    rich_markup_mode=None,
    context_settings=HELP_SETTINGS,
    cls=HelpGroup,
)

ConfigArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="CONFIG",
        help="Training config (YAML), e.g. configs/qwen3-8b.yaml or configs/tiny-cpu.yaml; or "
        "give it with -c, as every command takes its config.",
        show_default=False,
    ),
]
ConfigFileOption = Annotated[
    Path | None,
    typer.Option(
        "-c",
        "--config",
        help="The training config, as the CONFIG argument (every command reads -c); then every "
        "positional argument is a key=value override.",
        show_default=False,
    ),
]
OverridesArgument = Annotated[
    list[str] | None,
    typer.Argument(
        help="Config overrides as key=value, dotted for nested keys, values read as YAML: "
        "opsd.steps=400 lora.r=16 stages='[grpo, opsd]' model.name_or_path=Qwen/Qwen3-1.7B.",
        show_default=False,
    ),
]
DataOption = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="Folder written by `papergym build` (or its instances.jsonl); sets data.build_dir.",
        show_default=False,
    ),
]
OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Run folder (sets output_dir). Running again resumes from the last checkpoint.",
        show_default=False,
    ),
]


def stage_runners(report: ProgressReport | None = None) -> dict[StageName, StageRunner]:
    """Each stage's trainer, imported on use (TRL is slow to import and OPSD needs none of it);
    with ``report``, each shows its steps (loss, reward, ETA) through it."""

    def hook(stage: StageName, total: int) -> StepHook | None:
        return report.phase(stage, total) if report is not None else None

    def opsd(ctx: StageContext) -> dict[str, Any]:
        from papergym.train.opsd import run_opsd

        return run_opsd(ctx, on_step=hook("opsd", ctx.config.opsd.steps))

    def grpo(ctx: StageContext) -> dict[str, Any]:
        from papergym.train.grpo import run_grpo

        return run_grpo(ctx, on_step=hook("grpo", ctx.config.grpo.steps))

    def sft(ctx: StageContext) -> dict[str, Any]:
        from papergym.train.sft import run_sft

        return run_sft(ctx, on_step=hook("sft", ctx.config.sft.steps))

    return {"opsd": opsd, "grpo": grpo, "sft": sft}


def config_path(
    positional: str | None, option: Path | None, overrides: list[str] | None
) -> tuple[Path, list[str]]:
    """The config file, given as the first argument or with ``-c`` (exactly one of them), and
    the overrides: with ``-c``, a first argument that is ``key=value`` is an override."""
    extra = list(overrides or [])
    if positional is not None and is_override(positional):
        extra.insert(0, positional)
        positional = None
    if positional is not None and option is not None:
        raise BadInputError(
            None, f"two configs: {positional} and -c {option}; give the config once"
        )
    path = option if option is not None else Path(positional) if positional else None
    if path is None:
        raise BadInputError(None, "no training config: give CONFIG or -c CONFIG")
    return path, extra


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


def quiet_libraries() -> None:
    """Our progress bar and summary say what matters; the libraries' per-file bars ("Writing
    model shards"), info logs and deprecation warnings about their own internals do not.

    Every ``papergym train`` command and ``examples/train_cpu_demo.py`` call it.
    """
    import warnings

    import datasets
    from transformers.utils import logging as hf_logging

    datasets.disable_progress_bars()  # TRL maps a stage's few rows: no bar worth showing
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    warnings.filterwarnings(
        "ignore", message="`(is_)?gradient_checkpointing(_enable|_disable)?` is deprecated"
    )


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
    for warning in learning_signal_warnings(result):
        stderr.print(warning, highlight=False, markup=False, soft_wrap=True)
    evaluated = _final_eval(config, result, held_out, as_json)
    if as_json:
        if evaluated is not None:
            result["eval"] = evaluated
        stdout.print_json(json.dumps(result, default=float))


def learning_signal_warnings(result: dict[str, Any]) -> list[str]:
    """One warning per GRPO stage whose groups mostly tied (no spread, zero advantage), with
    the likely reason when every reward was the same number."""
    warnings = []
    for stage in result["stages"]:
        share = stage.get("tied_share")
        if not isinstance(share, int | float) or share < TIED_WARNING:
            continue
        steps = stage.get("steps")
        tied = stage.get("tied_steps")
        why = ""
        constant = stage.get("constant_reward")
        if isinstance(constant, int | float):
            why = (
                f"; every answer scored {constant:.3g}"
                + (" (no rubric criterion met)" if constant == 0 else "")
                + ": the policy's answers must differ in what the reward sees"
            )
        warnings.append(
            f"{stage['stage']}: warning: {share:.0%} of the groups tied, every answer scoring the "
            f"same (in {tied} of {steps} steps all of them): their advantages are 0, so "
            f"{stage['stage']} learned {'nothing' if share >= 1 else 'little'}{why}"
        )
    return warnings


def _held_out(config: TrainConfig) -> list[Instance]:
    """The held-out instances (data.test_fraction) both evaluations use; says on stderr when
    an evaluation is asked for and there are none."""
    from papergym.train.data import load_instances

    splits = load_instances(config.data)
    held_out = splits.get("test", [])
    if not held_out and (config.eval.steps or config.eval.final):
        papers = len({item.paper_id for item in splits["train"]})
        why = (
            "data.test_fraction is not set"
            if config.data.test_fraction is None
            else f"data.test_fraction={config.data.test_fraction} held out no paper of the "
            f"{papers} in the build"
        )
        stderr.print(
            f"eval: no held-out split ({why}): no evaluation during or after training",
            highlight=False,
            soft_wrap=True,  # one line, however narrow the terminal or log
        )
    return held_out


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
    "(eval.final=false: not)."
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
    train_app.command(name)(command)


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


train_app.command("cycle")(cycle_command)


@train_app.command("verl-prepare")
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
