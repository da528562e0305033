"""The writer's starting policy (SPEC §5): supervised fine-tuning on ``papergym write prepare``'s
``sft.jsonl`` (``papergym train write-sft``), which ``papergym train cycle`` can start from
(``cycle.init_from``).

CycleResearcher trains its writer by SFT on real papers before the rounds of review; this is that
step. It is the SFT stage of :mod:`papergym.train.sft` (TRL ``SFTTrainer``, LoRA, the ``sft``
section's schedule), fed the writing data instead of a build: each training example's prompt is
the chat the cycle's policy is given (the writing instructions as the system message, the
paper's references as the user message, as :func:`papergym.train.cycle.generate.messages_of`
builds them), its completion the paper itself. Held-out (``test``) examples are not trained on.

Layout of a run folder::

    config.yaml          the resolved configuration (its identity decides a resume)
    tiny-model/          the in-process model, when model.name_or_path is ``tiny``
    write-sft/           the stage: metrics.jsonl, checkpoints/, final/ (LoRA merged), summary.json
    summary.json         the stage's summary and the final model; written last

A rerun resumes from the last checkpoint; a finished stage is skipped.
"""

from __future__ import annotations

import json
import time
from typing import Any

from papergym.errors import BadInputError
from papergym.jsonl import write_text_atomic
from papergym.train.config import TrainConfig
from papergym.train.cycle.start import WRITE_SFT_DIR
from papergym.train.run import StageContext, StepHook

STAGE_DIR = WRITE_SFT_DIR
RUN_ENTRIES = frozenset({"config.yaml", "summary.json", "tiny-model", STAGE_DIR})
"""Everything a write-sft run folder holds."""


def write_sft_rows(config: TrainConfig) -> list[dict[str, Any]]:
    """The training examples of ``cycle.data`` as SFT rows: ``prompt`` (chat messages, as the
    cycle prompts its policy) and ``reference`` (the paper). Bad data fails in one line."""
    from papergym.train.cycle.generate import messages_of
    from papergym.train.cycle.records import CycleInput
    from papergym.write.data import SFT_FILE, load_write_data

    folder = config.cycle.data
    if folder is None:
        raise BadInputError(None, "no data: give --data DATA, a `papergym write prepare` folder")
    examples = [e for e in load_write_data(folder).examples if e.split == "train"]
    if not examples:
        raise BadInputError(
            folder / SFT_FILE, "holds no training example (none, or every one is test)"
        )
    return [
        {
            "prompt": messages_of(
                CycleInput(id=e.id, prompt=e.prompt, system=e.system or None, keys=e.keys),
                config.data.system_prompt,
            ),
            "reference": e.completion,
        }
        for e in examples
    ]


def run_write_sft(config: TrainConfig, on_step: StepHook | None = None) -> dict[str, Any]:
    """Train (or resume, or skip when finished) the writer's SFT; returns the run summary."""
    from papergym.train.cycle.run import refuse_foreign_run_dir
    from papergym.train.models import resolve_model_path
    from papergym.train.run import prepare_run_dir
    from papergym.train.sft import run_sft

    rows = write_sft_rows(config)  # bad data fails before anything is written
    refuse_foreign_run_dir(config.output_dir, RUN_ENTRIES, "papergym train write-sft")
    run_dir = prepare_run_dir(config).resolve()
    init_model = resolve_model_path(config.model, run_dir)
    ctx = StageContext(config, "sft", run_dir / STAGE_DIR, init_model, {"train": rows})
    stage_summary = ctx.stage_dir / "summary.json"
    if stage_summary.is_file():
        summary = json.loads(stage_summary.read_text(encoding="utf-8"))
        summary["skipped"] = True
    else:
        started = time.perf_counter()
        summary = {"stage": STAGE_DIR, "init_model": init_model, **run_sft(ctx, on_step)}
        summary["examples"] = len(rows)
        summary["final_model"] = str(ctx.final_dir)
        summary["seconds"] = round(time.perf_counter() - started, 1)
        write_text_atomic(stage_summary, json.dumps(summary, indent=1, default=float))
    result = {"run_dir": str(run_dir), "stage": summary, "final_model": str(ctx.final_dir)}
    write_text_atomic(run_dir / "summary.json", json.dumps(result, indent=1, default=float))
    return result
