"""The ``reward`` section (the rubric reward on every path) and the ``serve`` section (the
reward over HTTP)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from papergym.configbase import ConfigSection
from papergym.reward.cache import DEFAULT_CACHE_SIZE

DEFAULT_ALPHA = 0.7
"""The weight of the specific criteria in ``α·specific + (1−α)·general`` (``reward.alpha``)."""

DEFAULT_MAX_ANSWER_CHARS = 16_000
"""Longest answer judged, in characters (not tokens or words: no tokenizer needed, the same for
every language and judge). About 4,000 tokens of English at ~4 characters a token: twice the
paper's 2,048-token completion budget (``configs/qwen3-8b.yaml``), so real plans are not cut,
while a 1 MB answer costs the offline judge seconds instead of minutes and stays well inside an
LLM judge's context. Raise it (``max_answer_chars``) for longer completion budgets."""


class RewardSection(ConfigSection):
    """The rubric reward, for every path: TRL, verl, OpenRLHF, the server, score, check-reward."""

    judge: Literal["auto", "offline", "llm"] = "auto"
    """offline: the embedding baseline (no LLM); llm: the judge role of ``llm``; auto: llm when
    an LLM is configured (--judge)."""
    alpha: float = Field(DEFAULT_ALPHA, ge=0.0, le=1.0)
    """Weight of the specific criteria: α·specific + (1−α)·general (--alpha)."""
    criteria_per_call: Literal["all"] | int = "all"
    """LLM judge: the criteria of a pass judged in one call (all), one per call (1), or k per
    call (an integer k ≥ 2)."""
    advisory_reference: bool = False
    """LLM judge: present the reference as one possible approach, not the bar to match."""
    general_reference: bool = False
    """LLM judge: show the reference answer in the general pass too."""
    max_answer_chars: int = Field(DEFAULT_MAX_ANSWER_CHARS, ge=0)
    """Longer answers are cut to this many characters before judging and flagged
    answer_truncated (0: no limit) (--max-answer-chars)."""
    cache_size: int = Field(DEFAULT_CACHE_SIZE, ge=0)
    """Scores kept in memory, least recently used dropped first (0: no cache)."""
    unscored: float = 0.0
    """The reward verl and OpenRLHF get for an answer the judge could not score (TRL gets None;
    an unscored flag is logged either way)."""
    calibration: Path | None = None
    """Offline judge: a calibration file (threshold and weights) in place of the bundled one."""
    normalisation: Literal["positive", "absolute"] = "positive"
    """Weighted rubrics: divide the specific part by the sum of positive weights (HealthBench)
    or of absolute weights (RaR); each answer's part is then clipped to [0, 1] (a pitfall can
    push it below 0). Rubrics whose weights are all 1 score the same either way."""
    mode: Literal["rubric", "holistic", "reference_similarity", "generic_only"] = "rubric"
    """rubric: the rubric reward; the ARES ablations (SPEC §6): holistic (an LLM judge that sees
    question, reference and answer, no rubric, and gives 0-10 points, mapped to points/10),
    reference_similarity (the embedding cosine of answer and reference, clipped to [0, 1]; no
    LLM), generic_only (the general criteria alone; needs an LLM judge) (--mode)."""
    verdict: Literal["binary", "graded"] = "binary"
    """LLM judge: binary (met 1 / not met 0) or graded (not met 0, partly 1, fully 2 per
    criterion, scored as 0, 0.5, 1 under either normalisation). The offline judge refuses
    graded (--verdict)."""
    llm_config: Path | None = None
    """An LLM YAML file for the judge alone (null: the ``llm`` section); the command's
    llm.cache=false and llm.cache_dir apply to it too."""

    # before the union is tried, so a bad value is one message at this key, not one per member
    @field_validator("criteria_per_call", mode="before")
    @classmethod
    def _check_per_call(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if value == "all" or (
            isinstance(value, int) and not isinstance(value, bool) and value >= 1
        ):
            return value
        raise ValueError(f"must be 'all' or a whole number of at least 1, not {value!r}")


class ServeSection(ConfigSection):
    """``papergym serve-reward``: the reward over HTTP."""

    host: str = "127.0.0.1"
    """Address to listen on (0.0.0.0: every interface) (--host)."""
    port: int = Field(8765, ge=0, le=65535)
    """Port to listen on (0: any free port); not 8000, vLLM's default (--port)."""
    max_body_mb: float = Field(32.0, gt=0)
    """Largest request body in MiB; a larger one is refused (413) unread (--max-body-mb)."""
    token_env: str | None = None
    """Name of the variable holding the bearer token every request but /health must send
    (--token-env)."""
    docs: bool = False
    """Serve the API docs at /docs, /redoc, /openapi.json (--docs)."""
    reward: Literal["rubric", "review"] = "rubric"
    """rubric: the rubric reward (labels carry the rubric); review: the review reward, the mean
    simulated review rating of the answer on [0, 1], no label needed (--reward)."""
