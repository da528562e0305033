"""The options the reward verbs share (``score``, ``check-reward``, ``serve-reward``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from papergym.cli.common import flags, resolve
from papergym.reward.settings import DEFAULT_ALPHA, DEFAULT_MAX_ANSWER_CHARS
from papergym.settings.models import PaperGymConfig

JudgeOption = Annotated[
    Literal["auto", "offline", "llm"] | None,
    typer.Option(
        "--judge",
        help="Sets reward.judge (default auto). offline: the embedding baseline (no LLM); llm: "
        "the judge role of the config's llm section ($PAPERGYM_LLM_CONFIG, $PAPERGYM_BASE_URL, "
        "...); auto: llm when configured. The LLM judge's criteria per call: "
        "reward.criteria_per_call=all|1|K.",
        show_default=False,
    ),
]
AlphaOption = Annotated[
    float | None,
    typer.Option(
        "--alpha",
        min=0.0,
        max=1.0,
        help=f"Sets reward.alpha, the weight of the specific criteria (default {DEFAULT_ALPHA:g}).",
        show_default=False,
    ),
]
MaxAnswerCharsOption = Annotated[
    int | None,
    typer.Option(
        "--max-answer-chars",
        min=0,
        help=f"Sets reward.max_answer_chars (default {DEFAULT_MAX_ANSWER_CHARS}): longer answers "
        "are cut to this many characters before judging, and their score says answer_truncated "
        "(0: no limit).",
        show_default=False,
    ),
]
ModeOption = Annotated[
    Literal["rubric", "holistic", "reference_similarity", "generic_only"] | None,
    typer.Option(
        "--mode",
        help="Sets reward.mode (default rubric). The ARES ablations: holistic (an LLM judge "
        "that sees question, reference and answer but no rubric, 0-10 points mapped to [0, 1]), "
        "reference_similarity (embedding cosine to the reference answer, clipped to [0, 1]; no "
        "LLM), generic_only (the general criteria alone; needs an LLM judge). Every score says "
        "its mode.",
        show_default=False,
    ),
]
VerdictOption = Annotated[
    Literal["binary", "graded"] | None,
    typer.Option(
        "--verdict",
        help="Sets reward.verdict (default binary): the LLM judge's 0/1 per criterion, or "
        "graded (0 not met, 1 partly, 2 fully; scored 0, 0.5, 1). The offline judge refuses "
        "graded.",
        show_default=False,
    ),
]
InstancesArgument = Annotated[
    Path,
    typer.Argument(help="A `papergym build` folder, or its instances.jsonl.", show_default=False),
]


def reward_config(
    config_file: Path | None,
    overrides: list[str] | None,
    judge: str | None,
    alpha: float | None,
    max_answer_chars: int | None,
    *,
    mode: str | None = None,
    verdict: str | None = None,
) -> PaperGymConfig:
    """The command's configuration; the reward flags are shorthands for reward.* keys."""
    given = flags(
        judge=("reward.judge", "--judge", judge),
        alpha=("reward.alpha", "--alpha", alpha),
        max_answer_chars=("reward.max_answer_chars", "--max-answer-chars", max_answer_chars),
        mode=("reward.mode", "--mode", mode),
        verdict=("reward.verdict", "--verdict", verdict),
    )
    return resolve(config_file, overrides, given)
