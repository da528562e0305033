"""``papergym train write-sft CONFIG --data DATA -o OUT``: the writer's SFT on ``write prepare``'s
sft.jsonl; the training itself is :func:`papergym.train.write_sft.run_write_sft`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from papergym.cli.common import DebugOption, JsonOption, reports_errors, stderr, stdout
from papergym.cli.train.options import LogEveryOption, config_path
from papergym.settings.load import flag
from papergym.settings.models import PaperGymConfig

WriteSFTConfigArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="CONFIG",
        help="Training config (YAML): its model, lora and sft sections are used, e.g. "
        "configs/cycle-tiny-cpu.yaml or configs/cycle-12b.yaml (their sft sections); or give it with -c.",
        show_default=False,
    ),
]
WriteSFTOverridesArgument = Annotated[
    list[str] | None,
    typer.Argument(
        help="Config overrides as key=value: sft.steps=100 sft.learning_rate=2e-5 "
        "sft.max_length=16384 lora.r=16.",
        show_default=False,
    ),
]


def write_sft(
    config: WriteSFTConfigArgument = None,
    overrides: WriteSFTOverridesArgument = None,
    config_file: Annotated[
        Path | None,
        typer.Option("-c", "--config", help="The training config, as CONFIG.", show_default=False),
    ] = None,
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            help="Folder written by `papergym write prepare`: its sft.jsonl's training "
            "examples (split train) are the data; sets cycle.data.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Run folder (sets output_dir). Running again resumes from the last checkpoint; "
            "give it to `papergym train cycle --init-from`.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
    log_every: LogEveryOption = None,
    debug: DebugOption = False,
) -> None:
    """The writer's starting policy (CycleResearcher's SFT on real papers): fine-tune the config's
    model on `papergym write prepare`'s sft.jsonl, each paper's references as the prompt (as
    `train cycle` prompts its policy) and the paper as the completion (TRL SFT; LoRA per the
    lora section; steps, learning rate, batch and max_length from the sft section). The merged
    weights land in OUT/write-sft/final; start the cycle from them with
    `papergym train cycle CONFIG --data DATA --init-from OUT`.

    Exit code 0 when trained (or finished earlier); 2 on bad input (data another command wrote,
    a run folder of another configuration or command)."""
    from papergym.settings.train import load_config

    path, extra = config_path(config, config_file, overrides)
    extra_overrides: list[Any] = list(extra)
    if data is not None:  # absolute, as train cycle records it: a resume must see the same data
        extra_overrides.append(flag("cycle.data", str(data.resolve()), "--data"))
    if output is not None:
        extra_overrides.append(flag("output_dir", str(output), "-o"))
    settings = load_config(path, extra_overrides)
    _run(settings, as_json, log_every)


def _run(settings: PaperGymConfig, as_json: bool, log_every: int | None) -> None:
    """Train with the steps' progress on stderr, then print what was done (or its JSON)."""
    from papergym.train.progress import ProgressReport
    from papergym.train.run import quiet_libraries
    from papergym.train.write_sft import run_write_sft

    quiet_libraries()
    live = not as_json and stderr.is_terminal
    with ProgressReport(stderr, live=live, every=log_every) as report:
        hook = report.phase("write-sft", settings.sft.steps)
        result = run_write_sft(settings, on_step=hook)
    if as_json:
        stdout.print_json(json.dumps(result, default=float))
        return
    stage = result["stage"]
    if stage.get("skipped"):
        stdout.print("write-sft: finished earlier; skipped")
    else:
        stdout.print(
            f"write-sft: {stage['steps']} steps on {stage['examples']} papers, last loss "
            f"{stage['last_loss']}, {stage['seconds']} s",
            highlight=False,
        )
    stdout.print(f"final model: {result['final_model']}", highlight=False)


write_sft_command = reports_errors(write_sft)
