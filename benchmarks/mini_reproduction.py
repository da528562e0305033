"""A miniature of SPEC §4's comparison: base, SFT, OPSD, GRPO, OPSD→GRPO, GRPO→OPSD.

The paper's training methods, on a synthetic task a tiny model can learn on two CPU cores, with
PaperGym's real trainers (``run_opsd``, ``run_grpo``, ``run_sft``, composed by ``run_pipeline``)
and its real reward (``RubricReward``, α = 0.7) around a deterministic keyword judge.

**The task.** "Plan a study of coral drift." Each of 36 topics (adjective × noun) has three
made-up items (``zomi``, ``fivo``...); its rubric's specific criteria say "The plan names ITEM",
and three general criteria ask for a baseline, a measurement, and at most 25 words ending with a
full stop. A perfect plan scores 1.0; a generic plan that names no item scores 0.3.

**The base model** is a tiny Llama (3 layers, hidden 128; tokenizer trained on the task's words,
so an item is one token), pretrained once per seed (cached on disk) on 24 *pretraining* topics
that never appear later. It learns what the real models bring: (a) with a rubric in the user turn
(exactly OPSD's teacher prompt), copy the rubric's items into the plan (items drawn at random per
example, so copying is the only way to fit); (b) without a rubric, name the items of the 12
topics it "knows", and for the 12 others write a generic plan half the time and made-up items
the other half. On the 12 *training* topics, which it has never seen, it therefore writes a
generic plan or guesses items, while given the rubric it mostly names the right ones: the
teacher is better than the student, which OPSD needs, and a sampled plan now and then names a
right item by chance, which GRPO needs.

**Training** (every method, every seed, from the same base; LoRA r 16, α 32 on every linear
layer): the 12 training topics × 4 question phrasings. OPSD's teacher is the base (adapter off)
reading the question plus the rubric; GRPO is rewarded by the rubric (8 samples per question,
T = 1, KL 0.01, constant learning rate, as OPSD); SFT imitates the reference answers,
which read like a paper's summary: they name the three items and a measurement but no baseline,
so they score 0.9, not 1.0.

**Evaluation**: greedy answers (at most 40 tokens) to the same 12 topics asked with 2 *held-out
phrasings*, never used in training (seen in pretraining with other topics), scored by the same
reward. Topics cannot be held out: which items belong to a topic is a fact to learn, not a skill
that generalises. The training phrasings are scored too (in-distribution). Two reference rows:
the untrained base, and the base reading the rubric (the teacher: roughly OPSD's ceiling).

**Budgets**: every method gets the same number of optimiser steps (``--steps``, default 200),
each on 8 sequences: 8 sampled answers to 8 questions (OPSD), 8 sampled answers to 1 question
(GRPO), 8 reference answers (SFT); a two-stage method gives each stage half. Equal steps, not
equal compute: an OPSD step also runs the teacher, a GRPO step the reference policy; the table
gives each method's wall time. Learning rates were chosen once per method on seed 0 (see
``Budget``), which is why the default seeds are 1 to 8.

**Statistics** go through ``papergym.eval``. The table's intervals are 95% percentile bootstraps
over *seeds* (``eval.stats.bootstrap_mean`` of the seeds' mean rewards), and each difference
``a − b`` is paired by seed (``eval.stats.paired_difference``), with the seeds a won, tied and
lost and an exact sign test. Seeds, not questions, because the claim is about training methods:
the 24 held-out questions are the same fixed set for every method (the topics cannot change),
and what a rerun changes is the seed (the base's pretraining, the sampling, the LoRA init).
Every method of a seed starts from the same base, so pairing cancels the base's luck. With 8 seeds a percentile interval is rough
(somewhat narrow); read it beside the win count. The table's "by question" column is the other
view, from the eval records: each question's mean over the seeds, the interval resampling the
24 questions (it ignores seed-to-seed variation, and the two phrasings of a topic are not
independent, so it is optimistic; it is the only interval a one-seed run has).

**Eval records.** The held-out answers and scores are written as ``papergym eval`` records
(``questions.jsonl``, ``answers.jsonl``, ``scores.jsonl``, and ``summary.json`` from
``eval.summary.summarise``) to ``WORK_DIR/eval``: one system per row, seed k as sample k. So
``papergym report runs/mini_reproduction/eval -o report.html`` renders them. There is no
``papergym compare`` here: it needs an LLM judge for pairwise preferences, and this CPU
miniature has only the keyword judge; a faked one would measure nothing.

**Results** (8 seeds, 1-8; seeds 1-4 and 5-8 ran as two invocations and were merged for
`--from-json`), held-out reward with 95% seed intervals: OPSD 0.604 [0.568, 0.637], OPSD→GRPO
0.601 [0.550, 0.648], GRPO→OPSD 0.551 [0.502, 0.600], GRPO 0.497 [0.477, 0.518], base 0.351
[0.336, 0.364], SFT 0.344 [0.309, 0.378]; teacher 0.876. Robust (seed interval excludes 0 and
sign test p < 0.05, 8/8 seeds): OPSD→GRPO − GRPO +0.104 [+0.065, +0.140], OPSD − GRPO +0.108,
OPSD − SFT +0.260, GRPO − SFT +0.153, OPSD − base +0.253, GRPO − base +0.145, teacher − OPSD
+0.271. Suggested (interval above 0, 6/8 seeds, sign test p 0.29): OPSD→GRPO − GRPO→OPSD +0.049
[+0.016, +0.085], OPSD − GRPO→OPSD +0.053, GRPO→OPSD − GRPO +0.055 [+0.009, +0.101]. Not
separated: OPSD→GRPO vs OPSD (−0.003 [−0.028, +0.022], 3/1/4), SFT vs base (−0.007). So the
paper's headline (OPSD→GRPO beats GRPO) holds here in every seed, OPSD→GRPO over GRPO→OPSD is
likely but not established, and GRPO after OPSD adds nothing measurable over OPSD alone in this
miniature. Seeds 1-3 reproduce the earlier notes' numbers exactly on this machine; a 3-seed run
on another machine gave another order (OPSD first, GRPO→OPSD second), so per-seed numbers depend
on the machine's floating point, and only orderings that hold over seeds count.

    python benchmarks/mini_reproduction.py [--seeds 1 2 ...] [--steps 200] [--quick] [--out r.json]
    python benchmarks/mini_reproduction.py --from-json r.json   # tables + records, no training
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch
from rich.console import Console
from rich.table import Table
from transformers import PreTrainedTokenizerBase
from transformers.utils import logging as hf_logging

from papergym import __version__
from papergym.eval.evaluate import eval_question, eval_score
from papergym.eval.records import (
    ANSWERS_FILE,
    QUESTIONS_FILE,
    SCORES_FILE,
    SUMMARY_FILE,
    Estimate,
    EvalAnswer,
    EvalQuestion,
    EvalScore,
    EvalSummary,
    EvalSystem,
)
from papergym.eval.stats import bootstrap_mean, paired_difference, sign_test
from papergym.eval.summary import Bootstrap, summarise
from papergym.export.trl import trl_row
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.records import (
    Criterion,
    GeneralCriterion,
    Instance,
    Rubric,
    Score,
    Verdict,
    content_hash,
)
from papergym.reward.reward import RubricReward
from papergym.settings.train import OPSDSettings, StageName, TrainConfig
from papergym.train.grpo import run_grpo
from papergym.train.models import load_model, load_tokenizer
from papergym.train.opsd import (
    completion_mask,
    encode_prompts,
    left_pad,
    run_opsd,
    stop_token_ids,
    teacher_messages,
)
from papergym.train.run import StageRunner, run_pipeline
from papergym.train.sft import run_sft
from papergym.train.tiny import IM_END, build_tiny_model, build_tiny_tokenizer

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WORK_DIR = ROOT / "runs" / "mini_reproduction"
ALPHA = 0.7
"""The paper's α: reward = 0.7·(items named) + 0.3·(general criteria met)."""

# --- the synthetic task ------------------------------------------------------------------------

DATA_SEED = 1234
"""Topics, items and the split are fixed; ``--seeds`` vary the model and training only."""
ADJECTIVES = ("coral", "solar", "arctic", "urban", "desert", "alpine")
NOUNS = ("drift", "bloom", "erosion", "migration", "signal", "runoff")
TRAIN_TEMPLATES = (
    "Plan a study of {topic}.",
    "Propose a research plan on {topic}.",
    "How should we study {topic}?",
    "Outline an experiment about {topic}.",
)
HELD_OUT_TEMPLATES = (
    "Design a project to investigate {topic}.",
    "What is a good plan to research {topic}?",
)
ITEMS_PER_TOPIC = 3
TRAIN_TOPICS = 12
ITEM_POOL = 36

PLAN = "Plan: use {a}, {b} and {c}, and measure the effect against a baseline."
GENERIC_PLAN = "Plan: collect data, and measure the effect against a baseline."
REFERENCE = "We apply {a}, {b} and {c} to {topic} and measure the effect; see Table 2."
"""A reference written like a paper: every item and a measurement, but no baseline (0.9)."""

GENERAL = (
    GeneralCriterion(id="general-baseline", text="The plan has a baseline."),
    GeneralCriterion(id="general-measure", text="The plan measures the effect."),
    GeneralCriterion(id="general-concise", text="The plan is short and complete."),
)
"""Checked as: the word "baseline"; the word "measure"; at most 25 words, ending with "."."""
ITEM_CRITERION = "The plan names {item}."
MAX_WORDS = 25


@dataclass(frozen=True)
class World:
    """The task's fixed facts: which topics are which, and each topic's items."""

    items: dict[str, tuple[str, ...]]
    pool: tuple[str, ...]
    train_topics: tuple[str, ...]
    known_topics: tuple[str, ...]
    """Pretraining topics whose items the base learns to name without a rubric."""
    unknown_topics: tuple[str, ...]
    """Pretraining topics for which the base learns to write a generic plan."""


def make_items(rng: random.Random, count: int) -> tuple[str, ...]:
    """Distinct made-up words (consonant-vowel-consonant-vowel), unlike any English word."""
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    words: set[str] = set()
    while len(words) < count:
        words.add("".join(rng.choice(s) for s in (consonants, vowels, consonants, vowels)))
    return tuple(sorted(words))


def make_world() -> World:
    """Topics split 12 train / 12 known / 12 unknown, each topic with 3 items from the pool."""
    rng = random.Random(DATA_SEED)
    pool = make_items(rng, ITEM_POOL)
    topics = [f"{a} {n}" for a in ADJECTIVES for n in NOUNS]
    rng.shuffle(topics)
    items = {t: tuple(rng.sample(pool, ITEMS_PER_TOPIC)) for t in topics}
    rest = topics[TRAIN_TOPICS:]
    half = len(rest) // 2
    return World(
        items,
        pool,
        tuple(topics[:TRAIN_TOPICS]),
        tuple(rest[:half]),
        tuple(rest[half:]),
    )


def plan(items: Sequence[str]) -> str:
    a, b, c = items
    return PLAN.format(a=a, b=b, c=c)


def instance(topic: str, template: str, items: Sequence[str]) -> Instance:
    """A PaperGym instance: the question, the paper-style reference and the rubric."""
    a, b, c = items
    specific = tuple(
        Criterion(
            id=f"item-{rank}",
            text=ITEM_CRITERION.format(item=item),
            dimension="method",
            origin="answer",
            rank=rank,
        )
        for rank, item in enumerate(items, start=1)
    )
    key = f"{topic}|{template}|{'-'.join(items)}"
    return Instance(
        id=Instance.make_id("papergym", "llm", key),
        recipe="papergym",
        builder="llm",
        paper_id=key,
        title=topic,
        question=template.format(topic=topic),
        reference_answer=REFERENCE.format(a=a, b=b, c=c, topic=topic),
        rubric=Rubric(specific=specific, general=GENERAL),
    )


def topic_instances(
    world: World, topics: Sequence[str], templates: Sequence[str]
) -> list[Instance]:
    return [instance(t, q, world.items[t]) for t in topics for q in templates]


# --- the judge ---------------------------------------------------------------------------------

ITEM_PATTERN = re.compile(r"names (\w+)\.")
WORD = re.compile(r"[a-z]+")


class KeywordJudge:
    """A deterministic judge with PaperGym's ``Judge`` protocol: each verdict is a word check.

    Exact, instant and free, so the comparison measures the trainers, not a judge's noise.
    """

    name = "keyword"

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        words = WORD.findall(answer.lower())
        specific = [self._item(c, set(words)) for c in instance.rubric.specific]
        general = [self._general(c.id, answer, words) for c in instance.rubric.general]
        return specific, general

    @staticmethod
    def _item(criterion: Criterion, words: set[str]) -> Verdict:
        match = ITEM_PATTERN.search(criterion.text)
        item = match.group(1) if match else ""
        return Verdict(criterion_id=criterion.id, passed=item in words, reason=f"names {item}?")

    @staticmethod
    def _general(criterion_id: str, answer: str, words: list[str]) -> Verdict:
        checks: dict[str, Callable[[], bool]] = {
            "general-baseline": lambda: "baseline" in words,
            "general-measure": lambda: "measure" in words,
            "general-concise": lambda: (
                0 < len(answer.split()) <= MAX_WORDS and answer.strip().endswith(".")
            ),
        }
        return Verdict(
            criterion_id=criterion_id, passed=checks[criterion_id](), reason="", kind="general"
        )


def make_reward() -> RubricReward:
    return RubricReward(KeywordJudge(), alpha=ALPHA)


# --- the base model: tokenizer, pretraining, cache ---------------------------------------------


@dataclass(frozen=True)
class BaseSettings:
    """The tiny base model and its pretraining; part of the cache key."""

    hidden_size: int = 128
    layers: int = 3
    heads: int = 8
    vocab_size: int = 640
    steps: int = 1000
    batch_size: int = 16
    learning_rate: float = 2e-3
    warmup_steps: int = 100
    rubric_examples: int = 3000


@dataclass(frozen=True)
class Example:
    """A pretraining pair: a chat prompt and the answer the base should give."""

    messages: list[dict[str, str]]
    answer: str


def teacher_prompt(inst: Instance) -> list[dict[str, str]]:
    """The question plus the rubric, exactly as OPSD's teacher sees it."""
    return teacher_messages(trl_row(inst), OPSDSettings())


def pretraining_examples(world: World, count: int, rng: random.Random) -> list[Example]:
    """``count`` rubric-in-prompt examples, then half as many answers without a rubric."""
    pretrain = world.known_topics + world.unknown_topics
    templates = TRAIN_TEMPLATES + HELD_OUT_TEMPLATES
    examples = []
    for _ in range(count):
        items = rng.sample(world.pool, ITEMS_PER_TOPIC)
        inst = instance(rng.choice(pretrain), rng.choice(templates), items)
        examples.append(Example(teacher_prompt(inst), plan(items)))
    for _ in range(count // 2):
        topic, template = rng.choice(pretrain), rng.choice(templates)
        inst = instance(topic, template, world.items[topic])
        examples.append(Example(trl_row(inst)["prompt"], plain_answer(world, topic, rng)))
    return examples


def plain_answer(world: World, topic: str, rng: random.Random) -> str:
    """What the base says without a rubric: a known topic's items; for another topic, half the
    time a generic plan and half the time made-up items (it hallucinates, as real models do).

    The guesses are what give GRPO something to reinforce: a sampled plan names a right item
    now and then. Without them every sample of an unseen topic scores the same 0.3."""
    if topic in world.known_topics:
        return plan(world.items[topic])
    if rng.random() < 0.5:
        return GENERIC_PLAN
    return plan(rng.sample(world.pool, ITEMS_PER_TOPIC))


def tokenizer_corpus(world: World) -> list[str]:
    """Every text the task can show, so its words (items included) become single tokens."""
    topics = world.train_topics + world.known_topics + world.unknown_topics
    all_instances = topic_instances(world, topics, TRAIN_TEMPLATES + HELD_OUT_TEMPLATES)
    texts = [GENERIC_PLAN]
    for inst in all_instances[:: len(TRAIN_TEMPLATES)]:
        row = trl_row(inst)
        texts += [row["privileged_context"], row["reference"], plan(world.items[inst.title])]
    texts += [i.question for i in all_instances]
    return texts * 4


def encode_example(
    tokenizer: PreTrainedTokenizerBase, example: Example, end_id: int
) -> tuple[list[int], int]:
    """Prompt + answer + end-of-turn ids, and where the answer starts (loss from there on)."""
    prompt = encode_prompts(tokenizer, [example.messages])[0]
    answer = tokenizer(example.answer, add_special_tokens=False)["input_ids"]
    return prompt + answer + [end_id], len(prompt)


def batch_tensors(
    encoded: Sequence[tuple[list[int], int]], pad_id: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded ids, attention mask and labels (-100 on prompt and padding)."""
    width = max(len(ids) for ids, _ in encoded)
    ids = torch.full((len(encoded), width), pad_id, dtype=torch.long)
    labels = torch.full((len(encoded), width), -100, dtype=torch.long)
    mask = torch.zeros((len(encoded), width), dtype=torch.long)
    for row, (seq, start) in enumerate(encoded):
        ids[row, : len(seq)] = torch.tensor(seq)
        mask[row, : len(seq)] = 1
        labels[row, start : len(seq)] = torch.tensor(seq[start:])
    return ids, mask, labels


def warmup_then_decay(warmup: int, total: int, step: int) -> float:
    """Linear warm-up, then linear decay to 0: the copy skill does not form without warm-up."""
    if step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total - step) / max(1, total - warmup))


def pretrain(world: World, settings: BaseSettings, seed: int, target: Path) -> Path:
    """Build the tokenizer and model, teach them the in-context skill, save to ``target``.

    Full-parameter AdamW with a linear decay: a few hundred steps make the copy skill reliable.
    """
    tokenizer = build_tiny_tokenizer(tokenizer_corpus(world), vocab_size=settings.vocab_size)
    model = build_tiny_model(
        tokenizer,
        hidden_size=settings.hidden_size,
        layers=settings.layers,
        heads=settings.heads,
        seed=seed,
        answer_tokens=None,  # our answers are ~20 tokens; no forced end of turn
    )
    rng = random.Random(seed)
    end_id = tokenizer.get_vocab()[IM_END]
    data = [
        encode_example(tokenizer, e, end_id)
        for e in pretraining_examples(world, settings.rubric_examples, rng)
    ]
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, partial(warmup_then_decay, settings.warmup_steps, settings.steps)
    )
    model.train()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        for _ in range(settings.steps):
            ids, mask, labels = batch_tensors(
                rng.sample(data, settings.batch_size), tokenizer.pad_token_id
            )
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
    model.train(False)
    partial_dir = target.with_name(target.name + ".partial")
    shutil.rmtree(partial_dir, ignore_errors=True)
    tokenizer.save_pretrained(partial_dir)
    model.save_pretrained(partial_dir)
    os.replace(partial_dir, target)
    return target


def base_model(world: World, settings: BaseSettings, seed: int, cache: Path) -> tuple[Path, bool]:
    """The pretrained base for ``seed``, from the cache when it holds one (True: cached)."""
    key = hashlib.sha256(
        json.dumps([asdict(settings), seed, DATA_SEED, PLAN, GENERIC_PLAN]).encode()
    ).hexdigest()[:12]
    target = cache / f"base-seed{seed}-{key}"
    if (target / "config.json").is_file():
        return target, True
    target.parent.mkdir(parents=True, exist_ok=True)
    return pretrain(world, settings, seed, target), False


# --- methods -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """Optimiser steps per method (a two-stage method splits them) and per-method settings.

    Learning rates: the best held-out reward of {5e-4, 1e-3, 2e-3} per method after 200 steps
    on seed 0's base (OPSD also tried 5e-3, GRPO 3e-3 and 1e-2: worse; GRPO diverged at 1e-2).
    Seed 0 is therefore not among the default reported seeds.
    """

    steps: int
    opsd_lr: float = 2e-3
    grpo_lr: float = 1e-3
    sft_lr: float = 5e-4
    lora_r: int = 16
    max_new_tokens: int = 40


METHODS: dict[str, tuple[StageName, ...]] = {
    "SFT": ("sft",),
    "OPSD": ("opsd",),
    "GRPO": ("grpo",),
    "OPSD→GRPO": ("opsd", "grpo"),
    "GRPO→OPSD": ("grpo", "opsd"),
}


def stage_steps(total: int, stages: int) -> int:
    return max(1, total // stages)


def method_config(
    stages: Sequence[StageName], base: Path, data: Path, out: Path, seed: int, budget: Budget
) -> TrainConfig:
    """The training config of one method: LoRA on every linear layer, 8 sequences per step."""
    steps = stage_steps(budget.steps, len(stages))
    never = 10 * budget.steps + 1  # save only the final weights
    return TrainConfig.model_validate(
        {
            "name": out.name,
            "output_dir": str(out),
            "seed": seed,
            "stages": list(stages),
            "model": {"name_or_path": str(base), "dtype": "float32"},
            "lora": {"r": budget.lora_r, "alpha": 2 * budget.lora_r},
            "data": {"build_dir": str(data)},
            "opsd": {
                "steps": steps,
                "learning_rate": budget.opsd_lr,
                "batch_size": 8,
                "micro_batch_size": 8,
                "max_new_tokens": budget.max_new_tokens,
                "save_every": never,
                "keep_checkpoints": 1,
            },
            "grpo": {
                "steps": steps,
                "learning_rate": budget.grpo_lr,
                "num_generations": 8,
                "prompts_per_step": 1,
                "max_completion_length": budget.max_new_tokens,
                "save_every": never,
                "keep_checkpoints": 1,
            },
            "sft": {
                "steps": steps,
                "learning_rate": budget.sft_lr,
                "batch_size": 8,
                "max_length": 256,
                "save_every": never,
                "keep_checkpoints": 1,
            },
        }
    )


@contextlib.contextmanager
def captured(log: Path) -> Iterator[None]:
    """Trainer chatter (progress bars, per-step dicts, warnings) into a log file, not the table."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with (
        log.open("w", encoding="utf-8") as handle,
        contextlib.redirect_stdout(handle),
        contextlib.redirect_stderr(handle),
    ):
        yield


def train_method(
    stages: Sequence[StageName], base: Path, data: Path, out: Path, seed: int, budget: Budget
) -> tuple[Path, float]:
    """Run the method's pipeline afresh; its final model folder and its training seconds."""
    shutil.rmtree(out, ignore_errors=True)
    runners: dict[StageName, StageRunner] = {
        "opsd": run_opsd,
        "grpo": partial(run_grpo, reward=make_reward()),
        "sft": run_sft,
    }
    config = method_config(stages, base, data, out, seed, budget)
    started = time.perf_counter()
    with captured(out.with_suffix(".log")):
        summary = run_pipeline(config, runners)
    return Path(summary["final_model"]), time.perf_counter() - started


# --- evaluation --------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalSet:
    """Questions to answer, and whether the model sees the rubric (the teacher's view)."""

    name: str
    instances: list[Instance]
    with_rubric: bool = False


@dataclass
class Result:
    """One model on one eval set: mean reward, its parts, and the answers' length."""

    reward: float
    specific: float
    general: float
    words: float
    examples: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    """Every answer, in the eval set's order: what the eval records are written from."""
    scores: list[dict[str, Any]] = field(default_factory=list)
    """Every answer's :class:`papergym.records.Score` (verdicts included), as JSON."""


@torch.no_grad()
def answers(
    model_dir: Path, conversations: Sequence[list[dict[str, str]]], limit: int
) -> list[str]:
    """Greedy answers, cut at the first end-of-turn token."""
    tokenizer = load_tokenizer(str(model_dir))
    model: Any = load_model(str(model_dir), "float32")
    prompts = encode_prompts(tokenizer, conversations)
    ids, mask = left_pad(prompts, tokenizer.pad_token_id)
    output = model.generate(
        input_ids=ids,
        attention_mask=mask,
        do_sample=False,
        max_new_tokens=limit,
        pad_token_id=tokenizer.pad_token_id,
    )[:, ids.shape[1] :]
    valid = completion_mask(output, stop_token_ids(model, tokenizer))
    return [
        str(tokenizer.decode(row[m.bool()].tolist(), skip_special_tokens=True)).strip()
        for row, m in zip(output, valid, strict=True)
    ]


def evaluate(model_dir: Path, eval_set: EvalSet, limit: int) -> Result:
    """Greedy answers scored by the same reward the trainers used."""
    prompt = teacher_prompt if eval_set.with_rubric else (lambda i: trl_row(i)["prompt"])
    texts = answers(model_dir, [prompt(i) for i in eval_set.instances], limit)
    return score_texts(eval_set.instances, texts)


def score_texts(instances: Sequence[Instance], texts: Sequence[str]) -> Result:
    """The answers scored by the reward the trainers used, each score kept."""
    texts = list(texts)
    scores = make_reward().score_many(list(zip(instances, texts, strict=True)))
    if not all(s.scored for s in scores):  # the keyword judge always decides
        raise RuntimeError(f"unscored answers: {[s.unscored_reason for s in scores]}")
    return Result(
        reward=statistics.fmean(s.value or 0.0 for s in scores),
        specific=statistics.fmean(s.specific or 0.0 for s in scores),
        general=statistics.fmean(s.general or 0.0 for s in scores),
        words=statistics.fmean(len(t.split()) for t in texts),
        examples=texts[:2],
        answers=texts,
        scores=[s.model_dump(mode="json") for s in scores],
    )


# --- statistics and the table ------------------------------------------------------------------

BASE, TEACHER = "base", "teacher (base + rubric)"
ROWS = (BASE, *METHODS, TEACHER)
Results = dict[str, list[dict[str, Any]]]
"""Per row of the table, one record per seed (see :func:`record`)."""

PAIRS: tuple[tuple[str, str], ...] = (
    ("OPSD→GRPO", "GRPO"),
    ("OPSD→GRPO", "GRPO→OPSD"),
    ("OPSD→GRPO", "OPSD"),
    ("OPSD", "GRPO"),
    ("OPSD", "GRPO→OPSD"),
    ("GRPO→OPSD", "GRPO"),
    ("OPSD", "SFT"),
    ("GRPO", "SFT"),
    ("OPSD", BASE),
    ("GRPO", BASE),
    ("SFT", BASE),
    (TEACHER, "OPSD"),
)
"""The differences the table reports: the paper's orderings, and each method against base."""


def held_out(results: Results, method: str) -> list[float]:
    """The method's mean held-out reward of each seed, in seed order."""
    return [float(r["held_out"]["reward"]) for r in results[method]]


def fmt(estimate: Estimate, signed: bool = False) -> str:
    """``0.596 [0.571, 0.620]``; the value alone where one seed gives no interval."""
    value = f"{estimate.value:+.3f}" if signed else f"{estimate.value:.3f}"
    if estimate.n < 2 or estimate.low is None or estimate.high is None:
        return value
    return (
        f"{value} [{estimate.low:+.3f}, {estimate.high:+.3f}]"
        if signed
        else (f"{value} [{estimate.low:.3f}, {estimate.high:.3f}]")
    )


SIGNIFICANT = 0.05


@dataclass(frozen=True)
class Difference:
    """``a − b`` paired by seed: the interval resamples seeds (eval.stats.paired_difference)."""

    a: str
    b: str
    by_seed: Estimate
    wins: int
    ties: int
    losses: int
    by_question: Estimate | None = None
    """The same difference from ``eval/summary.json``: each question's mean over the seeds,
    the interval resampling questions (how much the 24 questions, not the seeds, move it)."""

    @property
    def verdict(self) -> str:
        """``a > b`` only when the seed interval excludes 0 *and* the sign test agrees (p <
        0.05): with a handful of seeds, a bootstrap interval excludes 0 whenever every seed
        agrees (3 seeds out of 3: p 0.25), which is a hint, not a finding."""
        low, high = self.by_seed.low, self.by_seed.high
        if self.by_seed.n < 2 or low is None or high is None:
            return "one seed"
        if low <= 0 <= high:
            return "not separated"
        sign = ">" if low > 0 else "<"
        p = sign_test(self.wins, self.losses)
        if p < SIGNIFICANT:
            return f"{self.a} {sign} {self.b}"
        return f"{self.a} {sign} {self.b}? (interval only; sign test p {p:.2f})"


def differences(results: Results, summary: EvalSummary | None = None) -> list[Difference]:
    """Every pair of :data:`PAIRS` present, paired by seed (every method of a seed starts from
    the same base model, so the base's luck cancels)."""
    by_question: dict[tuple[str, str], Estimate] = {}
    for pair in summary.pairs if summary is not None else ():
        by_question[(pair.a, pair.b)] = pair.reward
        if pair.reward.value is not None:  # the other way round: negate, swap the ends
            by_question[(pair.b, pair.a)] = Estimate(
                value=-pair.reward.value,
                low=None if pair.reward.high is None else -pair.reward.high,
                high=None if pair.reward.low is None else -pair.reward.low,
                n=pair.reward.n,
                level=pair.reward.level,
            )
    out = []
    for a, b in PAIRS:
        if not (results.get(a) and results.get(b)):
            continue
        xs, ys = held_out(results, a), held_out(results, b)
        out.append(
            Difference(
                a,
                b,
                paired_difference(xs, ys),
                wins=sum(x > y for x, y in zip(xs, ys, strict=True)),
                ties=sum(x == y for x, y in zip(xs, ys, strict=True)),
                losses=sum(x < y for x, y in zip(xs, ys, strict=True)),
                by_question=by_question.get((a, b)),
            )
        )
    return out


def results_table(results: Results, seeds: int) -> Table:
    """Held-out reward and its parts, in-distribution reward, answer length, training time."""
    table = Table(
        title=f"Rubric reward on held-out phrasings (greedy; mean over {seeds} seeds "
        "[95% bootstrap interval resampling seeds])"
    )
    columns = ("method", "held-out", "specific", "general", "train phrasings", "words", "train s")
    for name in columns:
        table.add_column(name, justify="left" if name == "method" else "right")
    for method in ROWS:
        runs = results.get(method, [])
        if not runs:
            continue
        seconds = [r["seconds"] for r in runs if r["seconds"] is not None]
        table.add_row(
            method,
            fmt(bootstrap_mean(held_out(results, method))),
            fmt(bootstrap_mean([r["held_out"]["specific"] for r in runs])),
            fmt(bootstrap_mean([r["held_out"]["general"] for r in runs])),
            fmt(bootstrap_mean([r["train"]["reward"] for r in runs])),
            f"{statistics.fmean(r['held_out']['words'] for r in runs):.1f}",
            f"{statistics.fmean(seconds):.0f}" if seconds else "-",
        )
    return table


def differences_table(diffs: Sequence[Difference], seeds: int) -> Table:
    table = Table(title=f"Paired differences of held-out reward ({seeds} seeds)")
    columns = (
        "a − b",
        "by seed [95% CI]",
        "seeds a>b / = / <",
        "sign test p",
        "by question [95% CI]",
        "verdict (by seed)",
    )
    for name in columns:
        table.add_column(name, justify="left" if name in (columns[0], columns[-1]) else "right")
    for d in diffs:
        table.add_row(
            f"{d.a} − {d.b}",
            fmt(d.by_seed, signed=True),
            f"{d.wins} / {d.ties} / {d.losses}",
            f"{sign_test(d.wins, d.losses):.3f}",
            "-" if d.by_question is None else fmt(d.by_question, signed=True),
            d.verdict,
        )
    return table


def interpretation(results: Results, diffs: Sequence[Difference]) -> list[str]:
    """What the numbers show, computed, not written in advance: the ranking, whether each
    neighbour in it is separated, and the paper's orderings."""
    means = {m: statistics.fmean(held_out(results, m)) for m in METHODS if results.get(m)}
    order = sorted(means, key=lambda m: means[m], reverse=True)
    ranking = " > ".join(f"{m} {means[m]:.3f}" for m in order)
    lines = [
        f"Held-out reward, best first: {ranking}; untrained base "
        f"{statistics.fmean(held_out(results, BASE)):.3f}, its rubric-reading teacher "
        f"{statistics.fmean(held_out(results, TEACHER)):.3f}."
    ]
    if len(held_out(results, BASE)) < 2:
        lines.append("One seed: no interval over seeds, so no ordering is established by seed.")
        return lines
    for upper, lower in itertools.pairwise(order):
        xs, ys = held_out(results, upper), held_out(results, lower)
        d = Difference(
            upper,
            lower,
            paired_difference(xs, ys),
            wins=sum(x > y for x, y in zip(xs, ys, strict=True)),
            ties=sum(x == y for x, y in zip(xs, ys, strict=True)),
            losses=sum(x < y for x, y in zip(xs, ys, strict=True)),
        )
        lines.append(f"  {upper} − {lower}: {fmt(d.by_seed, signed=True)} — {d.verdict}.")
    robust = [d.verdict for d in diffs if d.verdict in (f"{d.a} > {d.b}", f"{d.a} < {d.b}")]
    hints = [d.verdict.split("?")[0] + "?" for d in diffs if "?" in d.verdict]
    unsettled = [f"{d.a} vs {d.b}" for d in diffs if d.verdict == "not separated"]
    lines.append(
        "Robust (seed interval excludes 0 and sign test p < 0.05): "
        + ("; ".join(robust) or "none")
        + "."
    )
    lines.append(
        "Suggested (seed interval excludes 0; too few seeds for the sign test): "
        + ("; ".join(hints) or "none")
        + "."
    )
    lines.append("Not separated: " + ("; ".join(unsettled) or "none") + ".")
    return lines


# --- eval records: what `papergym report` renders -----------------------------------------------


def eval_records(
    results: Results, seeds: Sequence[int], world: World, limit: int
) -> tuple[list[EvalQuestion], list[EvalAnswer], list[EvalScore], EvalSummary]:
    """The held-out answers and scores as ``papergym eval`` records: one system per row of the
    table, and each seed one *sample* of it (sample k = the k-th seed), so a question's value
    is its mean over the seeds and the summary's intervals resample questions."""
    held, _ = eval_sets(world, with_rubric=False)
    instances = held.instances
    systems = [
        EvalSystem(
            name=row,
            spec=f"benchmarks/mini_reproduction.py {row}, seeds {list(seeds)}"
            + (" (rubric in the prompt)" if row == TEACHER else ""),
            kind="model",
            model={
                BASE: "pretrained tiny base",
                TEACHER: "pretrained tiny base, rubric in the prompt",
            }.get(row, f"base + {row} LoRA"),
        )
        for row in ROWS
        if results.get(row)
    ]
    answers_out: list[EvalAnswer] = []
    scores_out: list[EvalScore] = []
    for system in systems:
        for sample, run in enumerate(results[system.name]):
            texts, dumps = run["held_out"]["answers"], run["held_out"]["scores"]
            if len(texts) != len(instances) or len(dumps) != len(instances):
                raise ValueError(
                    f"{system.name}, seed {seeds[sample]}: {len(texts)} answers for "
                    f"{len(instances)} questions (results from before per-answer records?)"
                )
            for inst, text, dump in zip(instances, texts, dumps, strict=True):
                score = Score.model_validate(dump)
                if score.instance_id != inst.id:
                    raise ValueError(f"answer for {score.instance_id}, question {inst.id}")
                answer = EvalAnswer(
                    system=system.name,
                    instance_id=inst.id,
                    sample=sample,
                    answer=text,
                    words=len(text.split()),
                )
                answers_out.append(answer)
                scores_out.append(eval_score(answer, inst, score))
    boot = Bootstrap()
    per_system, pairs = summarise(systems, scores_out, boot)
    summary = EvalSummary(
        version=__version__,
        data="benchmarks/mini_reproduction.py: the 12 training topics x 2 held-out phrasings",
        data_format="instances",
        data_id=content_hash(
            [[i.id, i.question, i.rubric.model_dump(mode="json")] for i in instances]
        ),
        split="test",
        questions=len(instances),
        instance_ids=tuple(i.id for i in instances),
        samples=len(seeds),
        temperature=0.0,
        max_tokens=limit,
        judge=KeywordJudge.name,
        alpha=ALPHA,
        seed=boot.seed,
        resamples=boot.resamples,
        level=boot.level,
        systems=per_system,
        pairs=pairs,
    )
    return [eval_question(i) for i in instances], answers_out, scores_out, summary


def write_eval(
    results: Results, seeds: Sequence[int], world: World, limit: int, folder: Path
) -> EvalSummary:
    """``answers.jsonl``, ``scores.jsonl``, ``questions.jsonl`` and ``summary.json`` in
    ``folder``, readable by ``papergym report``."""
    questions, answers_out, scores_out, summary = eval_records(results, seeds, world, limit)
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / QUESTIONS_FILE, questions)
    write_jsonl(folder / ANSWERS_FILE, answers_out)
    write_jsonl(folder / SCORES_FILE, scores_out)
    write_text_atomic(folder / SUMMARY_FILE, summary.model_dump_json(indent=1))
    return summary


def analyse(
    results: Results, seeds: Sequence[int], world: World, limit: int, eval_dir: Path | None
) -> tuple[list[Difference], list[str]]:
    """The eval records (when ``eval_dir`` is given), the differences and their reading."""
    summary = None if eval_dir is None else write_eval(results, seeds, world, limit, eval_dir)
    diffs = differences(results, summary)
    return diffs, interpretation(results, diffs)


# --- the experiment ----------------------------------------------------------------------------


def eval_sets(world: World, with_rubric: bool) -> tuple[EvalSet, EvalSet]:
    """The training topics asked with the held-out phrasings, and with the training ones."""
    topics = world.train_topics
    return (
        EvalSet("held_out", topic_instances(world, topics, HELD_OUT_TEMPLATES), with_rubric),
        EvalSet("train", topic_instances(world, topics, TRAIN_TEMPLATES), with_rubric),
    )


def record(
    model_dir: Path, world: World, seconds: float | None, limit: int, with_rubric: bool = False
) -> dict[str, Any]:
    """One model's results on both eval sets, and how long its training took (None: untrained)."""
    held, train = eval_sets(world, with_rubric)
    return {
        "held_out": asdict(evaluate(model_dir, held, limit)),
        "train": asdict(evaluate(model_dir, train, limit)),
        "seconds": seconds,
    }


def run_seed(
    seed: int,
    world: World,
    base_settings: BaseSettings,
    budget: Budget,
    work: Path,
    console: Console,
) -> dict[str, dict[str, Any]]:
    """Pretrain (or load) the base for ``seed``, then train and evaluate every method on it."""
    started = time.perf_counter()
    base, cached = base_model(world, base_settings, seed, work / "cache")
    took = "loaded from cache" if cached else f"pretrained in {time.perf_counter() - started:.0f} s"
    limit = budget.max_new_tokens
    out = {
        BASE: record(base, world, None, limit),
        TEACHER: record(base, world, None, limit, with_rubric=True),
    }
    console.print(
        f"seed {seed}: base {took}; held-out {out[BASE]['held_out']['reward']:.3f}, "
        f"with the rubric {out[TEACHER]['held_out']['reward']:.3f}"
    )
    data = work / "data"
    for method, stages in METHODS.items():
        folder = work / f"seed{seed}" / method.replace("→", "-then-").lower()
        final, seconds = train_method(stages, base, data, folder, seed, budget)
        out[method] = record(final, world, seconds, limit)
        console.print(
            f"seed {seed}: {method:<10} held-out {out[method]['held_out']['reward']:.3f} "
            f"({seconds:.0f} s), e.g. {out[method]['held_out']['examples'][0][:72]!r}"
        )
    return out


def write_data(world: World, work: Path) -> Path:
    """The training instances as a ``papergym build`` output, which ``run_pipeline`` reads."""
    folder = work / "data"
    folder.mkdir(parents=True, exist_ok=True)
    train = topic_instances(world, world.train_topics, TRAIN_TEMPLATES)
    write_jsonl(folder / "instances.jsonl", train)
    return folder


def load_average() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


DEFAULT_SEEDS = (1, 2, 3, 4, 5, 6, 7, 8)
"""Not 0: the learning rates were chosen on seed 0."""
DEFAULT_STEPS, QUICK_STEPS = 200, 2
QUICK_BASE = BaseSettings(steps=20, warmup_steps=2, rubric_examples=64)
QUICK_MAX_NEW_TOKENS = 8
"""--quick is a smoke run (``.ci/run`` runs it, so the benchmark cannot rot): every method and
the whole analysis, on a base that has learnt next to nothing; its numbers mean nothing."""


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, nargs="+", help="default 1 .. 8 (--quick: 1)")
    parser.add_argument(
        "--steps", type=int, help=f"optimiser steps per method (default {DEFAULT_STEPS})"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run (numbers mean nothing): one seed, {QUICK_STEPS} steps per method, "
        f"{QUICK_BASE.steps} pretraining steps, answers of {QUICK_MAX_NEW_TOKENS} tokens, in a "
        "temporary WORK_DIR unless --work-dir is given",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="also write the results as JSON here (rewritten after every seed)",
    )
    parser.add_argument(
        "--from-json",
        type=Path,
        metavar="RESULTS",
        help="train nothing: print the tables of a results JSON written by --out (a partial "
        "one too) and write its eval records",
    )
    parser.add_argument(
        "--eval-dir",
        type=Path,
        help="where the held-out answers and scores go as `papergym eval` records, for "
        "`papergym report` (default WORK_DIR/eval)",
    )
    parser.add_argument(
        "--work-dir",
        type=Path,
        help="models, logs and the pretrained-base cache (default runs/mini_reproduction; "
        "--quick: a temporary folder)",
    )
    return parser.parse_args(argv)


def show(
    results: Results,
    seeds: Sequence[int],
    world: World,
    limit: int,
    eval_dir: Path | None,
    console: Console,
) -> tuple[list[Difference], list[str]]:
    """Print the tables and their reading; write the eval records to ``eval_dir``."""
    diffs, lines = analyse(results, seeds, world, limit, eval_dir)
    console.print(results_table(results, len(seeds)))
    console.print(differences_table(diffs, len(seeds)))
    for line in lines:
        console.print(line)
    if eval_dir is not None:
        console.print(
            f"Eval records in {eval_dir}: `papergym report {eval_dir} -o report.html` renders them."
        )
    return diffs, lines


def from_json(path: Path, eval_dir: Path | None, console: Console) -> int:
    """Tables and eval records of a saved results file, without training anything."""
    payload = json.loads(path.read_text(encoding="utf-8"))
    seeds, results = payload["seeds"], payload["results"]
    if not payload.get("complete", True):
        console.print(f"{path}: a partial run, {len(seeds)} seed(s) finished: {seeds}")
    limit = payload.get("budget", {}).get("max_new_tokens", Budget(steps=0).max_new_tokens)
    show(results, seeds, make_world(), limit, eval_dir, console)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.work_dir is None and args.quick:  # never over a real run's models and records
        with tempfile.TemporaryDirectory(prefix="mini-reproduction-quick-") as tmp:
            args.work_dir = Path(tmp)
            return run(args)
    args.work_dir = args.work_dir or DEFAULT_WORK_DIR
    return run(args)


def run(args: argparse.Namespace) -> int:
    console = Console(width=160)
    eval_dir = args.eval_dir or args.work_dir / "eval"
    if args.from_json is not None:
        return from_json(args.from_json, eval_dir, console)
    seeds = args.seeds or list(DEFAULT_SEEDS[:1] if args.quick else DEFAULT_SEEDS)
    steps = args.steps or (QUICK_STEPS if args.quick else DEFAULT_STEPS)
    base_settings = QUICK_BASE if args.quick else BaseSettings()
    budget = Budget(steps=steps)
    if args.quick:
        budget = Budget(steps=steps, max_new_tokens=QUICK_MAX_NEW_TOKENS)
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    world = make_world()
    write_data(world, args.work_dir)
    console.print(
        f"{len(world.train_topics)} topics x {len(TRAIN_TEMPLATES)} phrasings to train on, "
        f"x {len(HELD_OUT_TEMPLATES)} held-out phrasings to evaluate; seeds {seeds}; "
        f"{steps} optimiser steps x 8 sequences per method; alpha {ALPHA}; "
        f"{torch.get_num_threads()} torch threads; load average {load_average()}"
    )
    started = time.perf_counter()
    per_seed: dict[int, dict[str, dict[str, Any]]] = {}
    for seed in seeds:
        per_seed[seed] = run_seed(seed, world, base_settings, budget, args.work_dir, console)
        if args.out is not None:  # after every seed: a run cut short keeps the seeds it finished
            done = list(per_seed)
            partial_results = {m: [per_seed[s][m] for s in done] for m in ROWS}
            args.out.write_text(
                json.dumps(
                    {"seeds": done, "complete": False, "results": partial_results},
                    ensure_ascii=False,
                ),
                encoding="utf-8",
            )
    total = time.perf_counter() - started
    results: Results = {m: [per_seed[s][m] for s in seeds] for m in ROWS}
    diffs, lines = show(results, seeds, world, budget.max_new_tokens, eval_dir, console)
    console.print(f"Total wall time {total:.0f} s; load average at the end {load_average()}.")
    if args.out is not None:
        payload = {
            "seeds": seeds,
            "complete": True,
            "steps_per_method": steps,
            "sequences_per_step": 8,
            "alpha": ALPHA,
            "evaluation": "greedy, max_new_tokens=" + str(budget.max_new_tokens),
            "base": asdict(base_settings),
            "budget": asdict(budget),
            "wall_seconds": total,
            "results": results,
            "differences": [
                {
                    "a": d.a,
                    "b": d.b,
                    "by_seed": d.by_seed.model_dump(),
                    "wins": d.wins,
                    "ties": d.ties,
                    "losses": d.losses,
                    "by_question": d.by_question and d.by_question.model_dump(),
                }
                for d in diffs
            ],
            "interpretation": lines,
        }
        args.out.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
