"""Training configuration: one YAML file per run, validated, with ``key=value`` overrides.

A config names the model, the data, the LoRA settings and one block per stage (``opsd``,
``grpo``, ``sft``); ``stages`` lists the order ``papergym train pipeline`` runs them in, so the
ablations of SPEC §4 (GRPO→OPSD, either stage alone) are one override away::

    papergym train pipeline configs/qwen3-8b.yaml --data out stages='[grpo, opsd]'

Defaults are the paper's settings (SPEC §4); ``configs/`` holds the shipped files, each of which
the tests load and validate.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from papergym.errors import BadInputError

StageName = Literal["opsd", "grpo", "sft"]
STAGES: tuple[StageName, ...] = ("opsd", "grpo", "sft")


class _Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TinyModelSettings(_Settings):
    """The in-process tiny model used when ``model.name_or_path`` is ``tiny`` (CPU demos, tests)."""

    hidden_size: int = Field(64, gt=0)
    layers: int = Field(2, gt=0)
    heads: int = Field(4, gt=0)
    vocab_size: int = Field(512, gt=16)
    seed: int = 0
    answer_tokens: int | None = 8


class ModelSettings(_Settings):
    name_or_path: str = "Qwen/Qwen3-8B"
    """A hub name, a local folder, or ``tiny`` for a model built in-process."""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    tiny: TinyModelSettings = TinyModelSettings()


class LoraSettings(_Settings):
    enabled: bool = True
    r: int = Field(64, gt=0)
    alpha: int = Field(128, gt=0)
    dropout: float = Field(0.0, ge=0.0, lt=1.0)
    target_modules: str | list[str] = "all-linear"


class DataSettings(_Settings):
    build_dir: Path | None = None
    """A ``papergym build`` output folder (or an ``instances.jsonl``); ``--data`` sets it."""
    test_fraction: float | None = Field(None, gt=0.0, lt=1.0)
    """Hold out this share of papers (by paper hash, as ``papergym export --split``)."""
    max_instances: int | None = Field(None, gt=0)
    system_prompt: str | None = None


class OPSDSettings(_Settings):
    """Rubric-conditioned on-policy self-distillation (SPEC §4, stage 1)."""

    steps: int = Field(200, gt=0)
    learning_rate: float = Field(5e-6, gt=0)
    batch_size: int = Field(8, gt=0)
    """Answers per optimiser step (the effective batch)."""
    micro_batch_size: int = Field(8, gt=0)
    """Answers per forward/backward pass; smaller saves memory, the loss is the same token mean."""
    generation_batch_size: int | None = Field(None, gt=0)
    """Answers sampled per ``generate`` call (None: the whole batch at once)."""
    max_new_tokens: int = Field(1024, gt=0)
    temperature: float = Field(1.0, gt=0)
    top_p: float = Field(1.0, gt=0, le=1.0)
    beta: float = Field(0.5, ge=0.0, le=1.0)
    """Generalised JSD interpolation: 0.5 symmetric JSD, 0 = KL(T‖S), 1 = KL(S‖T)."""
    distill_temperature: float = Field(1.0, gt=0)
    top_k: int | None = Field(None, gt=0)
    """Loss only: compare distributions on the teacher's top-k tokens (None: full vocabulary).
    Sampling always uses the full distribution (with ``temperature`` and ``top_p``)."""
    teacher: Literal["frozen", "live"] = "frozen"
    """frozen: the initial weights (LoRA adapter disabled); live: the current policy."""
    teacher_context: Literal["rubric", "reference"] = "rubric"
    teacher_template: str = "{question}\n\n{context}"
    warmup_steps: int = Field(0, ge=0)
    weight_decay: float = Field(0.0, ge=0.0)
    max_grad_norm: float = Field(1.0, gt=0)
    gradient_checkpointing: bool = False
    """Recompute the student's activations in the backward pass: less memory for long answers."""
    save_every: int = Field(50, gt=0)
    keep_checkpoints: int = Field(2, gt=0)

    @model_validator(mode="after")
    def _check(self) -> OPSDSettings:
        if self.batch_size % self.micro_batch_size:
            raise ValueError(
                f"batch_size ({self.batch_size}) must be a multiple of micro_batch_size "
                f"({self.micro_batch_size})"
            )
        if "{question}" not in self.teacher_template or "{context}" not in self.teacher_template:
            raise ValueError("teacher_template must contain {question} and {context}")
        return self


class GRPOSettings(_Settings):
    """GRPO with the rubric reward through TRL's GRPOTrainer (SPEC §4, stage 2)."""

    steps: int = Field(200, gt=0)
    learning_rate: float = Field(1e-5, gt=0)
    num_generations: int = Field(8, gt=1)
    prompts_per_step: int = Field(1, gt=0)
    """Questions per micro-batch (each answered ``num_generations`` times); an optimiser step
    judges ``prompts_per_step × gradient_accumulation_steps`` questions."""
    gradient_accumulation_steps: int = Field(1, gt=0)
    beta: float = Field(0.01, ge=0.0)
    """KL penalty to the reference policy."""
    loss_type: Literal["grpo", "dapo", "dr_grpo", "bnpo"] = "dapo"
    """dapo = token-mean over the batch, the aggregation verl uses by default."""
    epsilon: float = Field(0.2, gt=0)
    """Lower ratio clip; ``epsilon_high`` defaults to the same (symmetric clipping)."""
    epsilon_high: float | None = Field(None, gt=0)
    scale_rewards: Literal["group", "batch", "none"] = "group"
    max_completion_length: int = Field(1024, gt=0)
    temperature: float = Field(1.0, gt=0)
    save_every: int = Field(50, gt=0)
    keep_checkpoints: int = Field(2, gt=0)


class SFTSettings(_Settings):
    """The SFT baseline: supervised fine-tuning on the reference answers."""

    steps: int = Field(200, gt=0)
    learning_rate: float = Field(1e-5, gt=0)
    batch_size: int = Field(8, gt=0)
    max_length: int = Field(4096, gt=0)
    save_every: int = Field(50, gt=0)
    keep_checkpoints: int = Field(2, gt=0)


class RewardSettings(_Settings):
    judge: Literal["offline", "llm"] = "offline"
    """offline: the bundled embedding judge; llm: the judge role of the LLM config."""
    alpha: float = Field(0.7, ge=0.0, le=1.0)
    llm_config: Path | None = None


class TrainConfig(_Settings):
    name: str = "papergym"
    output_dir: Path = Path("runs/papergym")
    seed: int = 0
    stages: list[StageName] = ["opsd", "grpo"]
    model: ModelSettings = ModelSettings()
    lora: LoraSettings = LoraSettings()
    data: DataSettings = DataSettings()
    reward: RewardSettings = RewardSettings()
    opsd: OPSDSettings = OPSDSettings()
    grpo: GRPOSettings = GRPOSettings()
    sft: SFTSettings = SFTSettings()

    # a field validator, not a model one: its errors carry the key (``stages``), so an override
    # that set it is named
    @field_validator("stages")
    @classmethod
    def _check_stages(cls, stages: list[StageName]) -> list[StageName]:
        if not stages:
            raise ValueError("stages must name at least one stage")
        if len(set(stages)) != len(stages):
            raise ValueError(f"stages must not repeat a stage: {stages}")
        return stages

    def resolved(self) -> dict[str, Any]:
        """The config as plain YAML-able data (paths as strings)."""
        return self.model_dump(mode="json")


def parse_override(text: str) -> tuple[list[str], Any]:
    """``a.b.c=value`` → (["a", "b", "c"], value parsed as YAML: numbers, lists, null...)."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise BadInputError(None, f"override {text!r} is not key=value")
    value = yaml.safe_load(raw) if raw.strip() else ""
    return [part for part in key.strip().split(".")], value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """A copy of ``data`` with each ``key=value`` applied (dotted keys reach nested blocks)."""
    result: dict[str, Any] = yaml.safe_load(yaml.safe_dump(data)) or {}
    for text in overrides:
        path, value = parse_override(text)
        node = result
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise BadInputError(None, f"override {text!r}: {part} is not a section")
            node = child
        node[path[-1]] = value
    return result


def load_config(
    path: Path | None, overrides: list[str] | None = None, *, data: Path | None = None
) -> TrainConfig:
    """Read ``path`` (YAML), apply ``overrides`` and ``--data``, and validate.

    Errors name the file and the offending key in one line.
    """
    raw = read_config_file(path) if path is not None else {}
    raw = apply_overrides(raw, overrides or [])
    if data is not None:
        raw.setdefault("data", {})["build_dir"] = str(data)
    try:
        return TrainConfig.model_validate(raw)
    except ValidationError as error:
        raise _config_error(error.errors()[0], path, overrides or []) from None


def _config_error(first: ErrorDetails, path: Path | None, overrides: list[str]) -> BadInputError:
    """One line for the first validation error, blaming what set the key: an override or the file.

    An unknown key gets the closest valid one (``opsd.stepz`` → did you mean ``opsd.steps``?).
    """
    loc = [str(part) for part in first["loc"]]
    where = ".".join(loc) or "config"
    reason = first["msg"]
    if first["type"] == "extra_forbidden":
        reason = f"unknown key{_suggestion(loc)}"
    # the last override that set the failing key (or a section holding it, or, for an unknown
    # key, the unknown key itself) is to blame; one setting a key inside a failing section
    # (batch_size against micro_batch_size) is named beside the file
    unknown = first["type"] == "extra_forbidden"
    for text in reversed(overrides):
        key = _key(text)
        if loc[: len(key)] == key or (unknown and key[: len(loc)] == loc):
            return BadInputError(None, f"override {text!r}: {where}: {reason}")
    related = [text for text in overrides if loc and _key(text)[: len(loc)] == loc]
    if related:
        reason += f" (with override {', '.join(repr(text) for text in related)})"
    return BadInputError(path, f"{where}: {reason}")


def _key(override: str) -> list[str]:
    return override.partition("=")[0].strip().split(".")


def _suggestion(loc: list[str]) -> str:
    """`` (did you mean a.b?)`` for the valid key nearest ``loc``'s last part, or its section's keys."""
    model: type[BaseModel] = TrainConfig
    for part in loc[:-1]:
        field = model.model_fields.get(part)
        annotation = field.annotation if field is not None else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return ""
        model = annotation
    valid = list(model.model_fields)
    prefix = ".".join([*loc[:-1], ""])
    close = difflib.get_close_matches(loc[-1], valid, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {prefix}{close[0]}?)"
    return f" (valid keys{' in ' + prefix[:-1] if prefix else ''}: {', '.join(valid)})"


def read_config_file(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A config file as data, with ``extends: other.yaml`` (relative to it) merged underneath."""
    if not path.is_file():
        raise BadInputError(path, "config file not found")
    if path.resolve() in seen:
        raise BadInputError(path, "config extends itself (a cycle of `extends`)")
    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise BadInputError(path, f"not valid YAML ({_first_line(error)})") from None
    if loaded is not None and not isinstance(loaded, dict):
        raise BadInputError(path, "a training config must be a YAML mapping")
    data: dict[str, Any] = loaded or {}
    parent = data.pop("extends", None)
    if parent is None:
        return data
    base = read_config_file(path.parent / str(parent), (*seen, path.resolve()))
    return _deep_merge(base, data)


def _deep_merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
