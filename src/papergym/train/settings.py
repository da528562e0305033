"""The training sections of the configuration (top-level keys of a training file): model, LoRA, data and one block per stage.

Defaults are the paper's settings (SPEC §4). A field's docstring is its description (pydantic's
``use_attribute_docstrings``): ``papergym config reference`` prints it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from papergym.configbase import ConfigSection
from papergym.export.month import parse_month

StageName = Literal["opsd", "grpo", "sft"]
STAGES: tuple[StageName, ...] = ("opsd", "grpo", "sft")
DEFAULT_STAGES: tuple[StageName, ...] = ("opsd", "grpo")
"""The stages ``papergym train pipeline`` runs when ``stages`` is not set: OPSD, then GRPO."""


class TinyModelSettings(ConfigSection):
    """The in-process tiny model used when ``model.name_or_path`` is ``tiny`` (CPU demos, tests)."""

    hidden_size: int = Field(64, gt=0)
    """Width of the tiny model."""
    layers: int = Field(2, gt=0)
    """Transformer layers of the tiny model."""
    heads: int = Field(4, gt=0)
    """Attention heads of the tiny model."""
    vocab_size: int = Field(512, gt=16)
    """Vocabulary size of the tiny model's tokenizer."""
    seed: int = 0
    """Seed of the tiny model's initial weights."""
    answer_tokens: int | None = 8
    """Tokens the tiny model is pretrained to answer with (null: none)."""


class ModelSettings(ConfigSection):
    """The policy model."""

    name_or_path: str = "Qwen/Qwen3-8B"
    """A hub name, a local folder, or ``tiny`` for a model built in-process."""
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    """Weights' dtype (auto: bfloat16 on a GPU that supports it, else float32)."""
    tiny: TinyModelSettings = TinyModelSettings()
    """Shape of the in-process tiny model."""


class LoraSettings(ConfigSection):
    """LoRA adapters (PEFT)."""

    enabled: bool = True
    """Train LoRA adapters (false: full fine-tuning)."""
    r: int = Field(64, gt=0)
    """LoRA rank."""
    alpha: int = Field(128, gt=0)
    """LoRA scaling numerator (lora_alpha)."""
    dropout: float = Field(0.0, ge=0.0, lt=1.0)
    """LoRA dropout."""
    target_modules: str | list[str] = "all-linear"
    """Modules that get adapters: a PEFT name such as all-linear, or a list of module names."""


class DataSettings(ConfigSection):
    """The training data."""

    build_dir: Path | None = None
    """A ``papergym build`` output folder (or an ``instances.jsonl``), or a rubric dataset file
    that ``eval`` and ``audit`` read (generic, ResearchQA, RubricHub, ResearchPlanGen): its rows
    have no reference answer, so the sft stage and ``opsd.teacher_context: reference`` refuse
    it; ``--data`` sets it."""
    test_fraction: float | None = Field(None, gt=0.0, lt=1.0)
    """Hold out this share of papers (between 0 and 1) as a test split, chosen by a stable hash of
    the paper id: export writes test.parquet / a test split beside train, training leaves it out
    and evaluates on it, and ``papergym eval --split test`` uses the same papers (null: none).
    Each question of a foreign rubric dataset counts as its own paper."""
    split_by: Literal["hash", "date"] = "hash"
    """How the test split is chosen: hash (``test_fraction`` of papers by a stable hash) or date
    (papers dated after ``test_after`` are test, the rest train; SPEC §2)."""
    test_after: str | None = None
    """With split_by=date: the last month of the training data, YYYY-MM; papers dated later are
    the test split (the date ingestion parsed, else the month in the arXiv id)."""
    undated: Literal["refuse", "train", "test", "drop"] = "refuse"
    """With split_by=date: where a paper with no date goes; refuse stops with an error naming
    it."""
    max_instances: int | None = Field(None, gt=0)
    """Train on at most this many instances (null: all)."""
    system_prompt: str | None = None
    """A system message put before each question in verl and TRL prompts (null: none)."""

    @model_validator(mode="after")
    def _check_split(self) -> DataSettings:
        if self.test_after is not None:
            parse_month(self.test_after)  # its ValueError names the expected form
        if self.split_by == "date" and self.test_after is None:
            raise ValueError("split_by=date needs test_after (YYYY-MM)")
        if self.split_by == "date" and self.test_fraction is not None:
            raise ValueError("split_by=date and test_fraction both set; a split is one or other")
        if self.split_by == "hash" and self.test_after is not None:
            raise ValueError("test_after is set but split_by is hash; set split_by=date")
        return self


class OPSDSettings(ConfigSection):
    """Rubric-conditioned on-policy self-distillation (SPEC §4, stage 1)."""

    steps: int = Field(200, gt=0)
    """Optimiser steps."""
    learning_rate: float = Field(5e-6, gt=0)
    """Peak learning rate."""
    batch_size: int = Field(8, gt=0)
    """Answers per optimiser step (the effective batch)."""
    micro_batch_size: int = Field(8, gt=0)
    """Answers per forward/backward pass; smaller saves memory, the loss is the same."""
    generation_batch_size: int | None = Field(None, gt=0)
    """Answers sampled per ``generate`` call (None: the whole batch at once)."""
    max_new_tokens: int = Field(1024, gt=0)
    """Longest sampled answer, in tokens."""
    temperature: float = Field(1.0, gt=0)
    """Sampling temperature of the student's answers."""
    top_p: float = Field(1.0, gt=0, le=1.0)
    """Nucleus sampling of the student's answers (1: off)."""
    beta: float = Field(0.5, ge=0.0, le=1.0)
    """Generalised JSD interpolation: 0.5 symmetric JSD, 0 = KL(T‖S), 1 = KL(S‖T)."""
    distill_temperature: float = Field(1.0, gt=0)
    """Temperature of both distributions in the loss."""
    loss_reduction: Literal["token", "sequence"] = "token"
    """How the per-token JSD is averaged over a batch. token: one mean over all answer tokens of
    the batch (a long answer weighs in proportion to its length; what every earlier release
    did, and the default, so earlier run folders resume unchanged). sequence: each answer's mean
    over its positions, then the mean over answers (every answer weighs the same; the reading of
    SPEC §4's "averaged over positions and answers")."""
    top_k: int | None = Field(None, gt=0)
    """Loss only: compare distributions on the teacher's top-k tokens (None: full vocabulary).
    Sampling always uses the full distribution (with ``temperature`` and ``top_p``)."""
    teacher: Literal["frozen", "live"] = "frozen"
    """frozen: the initial weights (LoRA adapter disabled); live: the current policy."""
    teacher_context: Literal["rubric", "reference"] = "rubric"
    """What the teacher sees besides the question: the rubric or the reference answer."""
    teacher_template: str = "{question}\n\n{context}"
    """The teacher's user turn; must contain {question} and {context}."""
    warmup_steps: int = Field(0, ge=0)
    """Linear warm-up steps of the learning rate."""
    weight_decay: float = Field(0.0, ge=0.0)
    """AdamW weight decay."""
    max_grad_norm: float = Field(1.0, gt=0)
    """Gradient clipping norm."""
    gradient_checkpointing: bool = False
    """Recompute the student's activations in the backward pass: less memory for long answers."""
    save_every: int = Field(50, gt=0)
    """Steps between checkpoints."""
    keep_checkpoints: int = Field(2, gt=0)
    """Checkpoints kept (older ones deleted)."""

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


class GRPOSettings(ConfigSection):
    """GRPO with the rubric reward through TRL's GRPOTrainer (SPEC §4, stage 2)."""

    steps: int = Field(200, gt=0)
    """Optimiser steps."""
    learning_rate: float = Field(1e-5, gt=0)
    """Peak learning rate."""
    num_generations: int = Field(8, gt=1)
    """Answers sampled per question (the group)."""
    prompts_per_step: int = Field(1, gt=0)
    """Questions per micro-batch (each answered ``num_generations`` times); an optimiser step
    judges ``prompts_per_step × gradient_accumulation_steps`` questions."""
    gradient_accumulation_steps: int = Field(1, gt=0)
    """Micro-batches per optimiser step."""
    beta: float = Field(0.01, ge=0.0)
    """KL penalty to the reference policy."""
    loss_type: Literal["grpo", "dapo", "dr_grpo", "bnpo"] = "dapo"
    """How TRL aggregates the per-token losses: dapo = token-mean over the batch, the
    aggregation verl uses by default; grpo = each answer's mean, then the mean over answers;
    dr_grpo = the sum over tokens divided by max_completion_length; bnpo = token-mean over the
    local micro-batch."""
    importance_sampling_level: Literal["token", "sequence"] = "token"
    """TRL's importance ratio π_θ/π_old. token: one ratio per token (GRPO as published; the
    default, and what earlier releases did). sequence: one ratio per answer, exp of the mean
    per-token log-ratio over its tokens (GSPO), clipped once per answer. GSPO pairs it with
    loss_type grpo; with dapo, dr_grpo or bnpo each answer's term is summed over its tokens, so
    long answers weigh more (TRL warns)."""
    epsilon: float = Field(0.2, gt=0)
    """Lower ratio clip; ``epsilon_high`` defaults to the same (symmetric clipping)."""
    epsilon_high: float | None = Field(None, gt=0)
    """Upper ratio clip (null: epsilon)."""
    scale_rewards: Literal["group", "batch", "none"] = "group"
    """How advantages are scaled: by the group's standard deviation, the batch's, or not."""
    max_completion_length: int = Field(1024, gt=0)
    """Longest sampled answer, in tokens."""
    temperature: float = Field(1.0, gt=0)
    """Sampling temperature."""
    save_every: int = Field(50, gt=0)
    """Steps between checkpoints."""
    keep_checkpoints: int = Field(2, gt=0)
    """Checkpoints kept (older ones deleted)."""


class SFTSettings(ConfigSection):
    """The SFT baseline: supervised fine-tuning on the reference answers; also the schedule of
    ``papergym train write-sft`` (the writer's SFT on real papers)."""

    steps: int = Field(200, gt=0)
    """Optimiser steps."""
    learning_rate: float = Field(1e-5, gt=0)
    """Peak learning rate."""
    batch_size: int = Field(8, gt=0)
    """Examples per optimiser step."""
    max_length: int = Field(4096, gt=0)
    """Longest example (question + reference), in tokens."""
    save_every: int = Field(50, gt=0)
    """Steps between checkpoints."""
    keep_checkpoints: int = Field(2, gt=0)
    """Checkpoints kept (older ones deleted)."""


class WatchSettings(ConfigSection):
    """A second judge of the held-out evaluation during OPSD, GRPO and SFT (``eval.steps``):
    it scores the same greedy answers as the training reward, and the run warns when the
    training reward keeps rising while this judge keeps falling (reward hacking).

    The watch is the ``reward`` section with the keys below replaced; ``judge: none`` is off.
    """

    judge: Literal["none", "offline", "llm"] = "none"
    """none: no watch; offline: the embedding judge (set ``calibration`` for other settings);
    llm: the LLM judge role of ``llm_config`` (else of ``llm``)."""
    patience: int = Field(3, ge=1)
    """Consecutive evaluations in which the training reward rises while the watch falls before
    the run warns."""
    min_change: float = Field(0.0, ge=0.0)
    """A rise or fall counts only when the mean score moves by more than this."""
    alpha: float | None = Field(None, ge=0.0, le=1.0)
    """The watch's weight of the specific criteria (null: ``reward.alpha``)."""
    calibration: Path | None = None
    """Offline watch: a calibration file in place of the bundled one (null: ``reward``'s)."""
    llm_config: Path | None = None
    """LLM watch: an LLM YAML file for the watch alone (null: ``reward.llm_config``)."""
    criteria_shown: int = Field(5, ge=1)
    """Criteria named in a divergence warning, largest gap first."""


ReviewerKind = Literal["llm", "offline", "structure"]


class CycleSettings(ConfigSection):
    """CycleResearcher's iterative preference training (``papergym train cycle``, SPEC §5):
    per round, sample papers, score them with the reviewer, train SimPO + NLL on best vs worst.

    Defaults are the paper's published settings where it gives them (3 samples, T = 0.4, a
    third of the inputs per round, SimPO plus an NLL term); β, γ, α, the learning rate and the
    schedule are not published: the defaults for those are ours (see configs/cycle-12b.yaml).
    """

    data: Path | None = None
    """A ``papergym write prepare`` output folder (its prompts.jsonl; ``train write-sft`` reads
    its sft.jsonl); ``--data`` sets it."""
    max_inputs: int | None = Field(None, gt=0)
    """Use at most this many inputs of the data (null: all)."""
    init_from: Path | None = None
    """Start round 1 from these weights instead of ``model.name_or_path``: a ``papergym train
    write-sft`` run folder (its write-sft/final, the writer's SFT policy) or a model folder
    (null: the base model); ``--init-from`` sets it, and the run folder records it."""
    rounds: int = Field(3, gt=0)
    """Rounds of sample → review → train, each starting from the last round's weights."""
    input_fraction: float = Field(1 / 3, gt=0.0, le=1.0)
    """Share of the inputs each round samples, fresh ones (unused in earlier rounds) first."""
    samples: int = Field(3, ge=2)
    """Papers generated per input; the best-reviewed is chosen, the worst rejected."""
    temperature: float = Field(0.4, gt=0.0)
    """Sampling temperature of the generated papers."""
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    """Nucleus sampling of the generated papers (1: off)."""
    max_new_tokens: int = Field(4096, gt=0)
    """Longest generated paper, in tokens."""
    max_prompt_tokens: int | None = Field(None, gt=0)
    """Cut longer prompts (the reference lists) to this many tokens at the end, counted in the
    round's metrics (null: never; small models with short contexts need it)."""
    generation_batch_size: int = Field(4, gt=0)
    """Inputs per ``generate`` call (each sampled ``samples`` times)."""
    reviewer: ReviewerKind = "llm"
    """Reviewer whose mean rating is the reward: llm (the review section's LLM reviewer, role
    reviewer), offline (the fitted baseline) or structure (a rule check of the paper's form)."""
    probe_papers: int = Field(3, ge=0)
    """Before training, the reward's gaming probes (a word list, words appended, the paper
    twice, its sentences shuffled) run on this many of the data's reference papers; a probe
    rating above its paper refuses the run (0: no check)."""
    force_reward: bool = False
    """Train even when the reward's probes fail (--force-reward); the run records it in
    reward-check.json and its summary."""
    watch: ReviewerKind | Literal["none"] = "offline"
    """A second, independent reviewer scoring the same papers: its agreement with the reward's
    reviewer is the reward-hacking watch (none: off). Must differ from ``reviewer``."""
    loss: Literal["simpo", "sft"] = "simpo"
    """simpo: SimPO (+ NLL by ``nll_weight``) on chosen vs rejected (TRL CPOTrainer); sft:
    supervised fine-tuning on the chosen papers only (the comparison baseline)."""
    beta: float = Field(2.0, gt=0.0)
    """SimPO β: scale of the length-normalised log-likelihood difference (ours; not published)."""
    gamma: float = Field(1.0, ge=0.0)
    """SimPO target margin γ, in β-scaled units (TRL simpo_gamma; ours; not published)."""
    nll_weight: float = Field(1.0, ge=0.0)
    """α: weight of the NLL term on the chosen papers (TRL cpo_alpha; 0 = SimPO alone)."""
    learning_rate: float = Field(5e-7, gt=0.0)
    """Learning rate, constant within a round (ours; not published)."""
    epochs: float = Field(1.0, gt=0.0)
    """Passes over a round's pairs (ignored when ``steps`` is set)."""
    steps: int | None = Field(None, gt=0)
    """Optimiser steps per round (null: ``epochs`` passes); equal-step comparisons set it."""
    batch_size: int = Field(1, gt=0)
    """Pairs per forward/backward pass."""
    gradient_accumulation_steps: int = Field(8, gt=0)
    """Passes per optimiser step (pairs per step = batch_size × this)."""
    max_length: int = Field(16384, gt=0)
    """Longest prompt + paper in training, in tokens (longer papers are cut)."""
    warmup_ratio: float = Field(0.1, ge=0.0, lt=1.0)
    """Linear warm-up share of each round's steps (ours; not published)."""
    gradient_checkpointing: bool = False
    """Recompute activations in the backward pass: less memory for long papers."""

    @model_validator(mode="after")
    def _check(self) -> CycleSettings:
        if self.watch == self.reviewer:
            raise ValueError(
                f"watch ({self.watch}) must differ from reviewer: the watch is a second, "
                "independent reviewer (none: off)"
            )
        return self
