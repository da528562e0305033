"""Training throughput per step: OPSD beside TRL's SDFT, GRPO with the rubric reward beside a
trivial one. Every arm trains the same tiny model on the same rows, on this machine, in this run.

1. **OPSD** - ``papergym.train.opsd.OPSDTrainer`` (ours) beside its nearest TRL trainer,
   ``trl.experimental.sdft.SDFTTrainer`` (the peer), set up as close to ours as TRL allows:
   full-vocabulary logits, ``distillation_alpha`` = our ``beta`` = 0.5 (symmetric JSD), no
   importance-sampling clip, teacher = the base weights (LoRA adapter off), the same LoRA, one
   answer per question and the same number of answers per step, the same sampling (temperature
   1, top-p 1, the top-k ours gets from ``generate``), the same learning rate, constant schedule,
   AdamW, gradient clip 1, no gradient checkpointing, no prompt truncation.
2. **GRPO** - TRL's ``GRPOTrainer`` as ``papergym.train.grpo`` builds it (``grpo_trainer`` and
   ``grpo_config``), 8 answers to one question per step, rewarded by
   ``papergym.reward.trl.rubric_reward`` with the offline judge (alpha 0.7), beside the very
   same trainer rewarded by a length function that costs nothing: the "ideal reward cost" peer.

Arms alternate (ours, peer, peer, ours, ...) over ``--repeats`` blocks, seed = repeat number
(the same for both arms of a repeat); each block builds a fresh trainer (not timed) and runs
``--steps`` timed steps after one untimed warm-up step. A step's time is the wall time between
two step-end hooks, so it includes everything the trainer does per step. Its parts are timed by
wrapping ``model.generate`` (sampling), the loss call (teacher and student forward passes and the
divergence; GRPO's policy-gradient loss), ``Tensor.backward`` and the reward function; "rest" is
the step minus those: optimiser, tokenising, GRPO's old/reference log-prob passes, Trainer
bookkeeping. Tokens are completion tokens in the loss mask (each answer up to and including its
stop token), counted where the loss (OPSD) or the reward (GRPO) receives them. Ratios carry over
to other machines better than the absolute numbers.

    HF_HUB_OFFLINE=1 python benchmarks/train_throughput.py [--steps 4] [--repeats 3]
        [--hidden 128] [--layers 4] [--max-new-tokens 64] [--threads 1] [--quick]
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
import transformers
import trl
from datasets import Dataset
from rich.console import Console
from rich.table import Table
from transformers import TrainerCallback
from transformers.trainer_callback import PrinterCallback, ProgressCallback
from trl.experimental.sdft import SDFTConfig, SDFTTrainer
from trl.experimental.sdft.sdft_trainer import DemonstrationTeacherContextBuilder

from papergym.export.trl import trl_rows
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.records import Criterion, Instance, Rubric
from papergym.reward.reward import Judge, RubricReward
from papergym.reward.runtime import make_judge, set_shared_reward
from papergym.reward.trl import completion_text, rubric_reward
from papergym.settings import load_config
from papergym.settings.train import LoraSettings, OPSDSettings, TrainConfig
from papergym.train.grpo import grpo_trainer
from papergym.train.models import load_model, load_tokenizer, lora_config, with_lora
from papergym.train.opsd import OPSDTrainer, SampledBatch, encode_prompts, teacher_messages
from papergym.train.run import StageContext
from papergym.train.tiny import save_tiny_model

ROWS = 16
ANSWERS_PER_STEP = 8
WARMUP_STEPS = 1
LEARNING_RATE = 1e-4
LORA = LoraSettings(r=16, alpha=32)
SAMPLING_TOP_K = 50
"""What ``OPSDTrainer.sample`` gets: it passes no ``top_k``, so ``generate`` falls back to the
model's generation config and then to transformers' default, 50 (see the notes)."""
PARTS = ("generate", "loss", "backward", "reward")
TOPICS = ("sparse attention", "protein folding", "galaxy surveys", "auction design")

RewardFn = Callable[..., list[float | None]]


# --- data and model ------------------------------------------------------------------------------


def bench_instance(index: int, criteria: int = 8) -> Instance:
    topic = f"{TOPICS[index % len(TOPICS)]} {index}"
    specific = tuple(
        Criterion(
            id=f"{index}-c{n}",
            text=f"The plan for {topic} includes a concrete step {n} with a measurable outcome.",
            dimension="method" if n <= criteria // 2 else "experiment",
            origin="answer",
            rank=n,
        )
        for n in range(1, criteria + 1)
    )
    return Instance(
        id=Instance.make_id("papergym", "llm", topic),
        recipe="papergym",
        builder="llm",
        paper_id=topic.replace(" ", "-"),
        title=f"A study of {topic}",
        question=f"Current work on {topic} misses a key gap. Propose a research plan.",
        reference_answer=f"We would study {topic} with a careful method and ablations.",
        rubric=Rubric(specific=specific, general=GENERAL_CRITERIA),
    )


def bench_rows(count: int = ROWS) -> list[dict[str, Any]]:
    return trl_rows([bench_instance(i) for i in range(count)])


@dataclass(frozen=True)
class Setup:
    model_dir: Path
    rows: list[dict[str, Any]]
    steps: int
    max_new_tokens: int
    workdir: Path

    @property
    def total_steps(self) -> int:
        return self.steps + WARMUP_STEPS


# --- timing --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    seconds: float
    tokens: int
    parts: dict[str, float]


@dataclass
class Probe:
    """Per-step wall time, completion tokens and time inside wrapped calls, for one block."""

    steps: list[Step] = field(default_factory=list)
    _parts: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    _tokens: int = 0
    _mark: float = 0.0
    calls: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))

    def begin(self) -> None:
        self._mark = time.perf_counter()

    def end_step(self) -> None:
        now = time.perf_counter()
        self.steps.append(Step(now - self._mark, self._tokens, dict(self._parts)))
        self._parts.clear()
        self._tokens, self._mark = 0, now

    def add_tokens(self, count: int) -> None:
        self._tokens += count

    def wrap(self, part: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self._parts[part] += time.perf_counter() - started
                self.calls[part] += 1

        return timed

    def patch(
        self, owner: Any, attribute: str, part: str, function: Callable[..., Any] | None = None
    ) -> None:
        """Replace ``owner.attribute`` by a timed ``function`` (default: the attribute itself)."""
        setattr(owner, attribute, self.wrap(part, function or getattr(owner, attribute)))

    def timed_steps(self) -> list[Step]:
        return self.steps[WARMUP_STEPS:]


class StepClock(TrainerCallback):
    """Marks step boundaries of a Hugging Face Trainer on a probe."""

    def __init__(self, probe: Probe) -> None:
        self.probe = probe

    def on_train_begin(self, *args: Any, **kwargs: Any) -> None:
        self.probe.begin()

    def on_step_end(self, *args: Any, **kwargs: Any) -> None:
        self.probe.end_step()


def quiet(trainer: Any) -> None:
    """No progress bar and no printed log line per step."""
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)


@contextmanager
def timed_backward(probe: Probe) -> Iterator[None]:
    """Time every ``Tensor.backward`` (ours calls it directly, accelerate calls it for TRL)."""
    original = torch.Tensor.backward
    probe.patch(torch.Tensor, "backward", "backward")
    try:
        yield
    finally:
        torch.Tensor.backward = original  # type: ignore[method-assign]


# --- OPSD: ours and TRL's SDFT -------------------------------------------------------------------


def opsd_settings(setup: Setup) -> OPSDSettings:
    return OPSDSettings(
        steps=setup.total_steps,
        learning_rate=LEARNING_RATE,
        batch_size=ANSWERS_PER_STEP,
        micro_batch_size=ANSWERS_PER_STEP,
        max_new_tokens=setup.max_new_tokens,
        beta=0.5,
        teacher="frozen",
        save_every=10**6,
    )


def run_ours(setup: Setup, probe: Probe, seed: int) -> None:
    model = with_lora(load_model(str(setup.model_dir), "float32"), LORA)
    tokenizer = load_tokenizer(str(setup.model_dir))
    trainer = OPSDTrainer(model, tokenizer, setup.rows, opsd_settings(setup), seed=seed)
    probe.patch(model, "generate", "generate")
    loss = trainer.loss

    def counted_loss(batch: SampledBatch, part: slice) -> torch.Tensor:
        probe.add_tokens(int(batch.mask[part].sum()))
        return loss(batch, part)

    probe.patch(trainer, "loss", "loss", counted_loss)
    probe.begin()
    trainer.train(on_step=lambda _step, _values: probe.end_step())


def sdft_config(setup: Setup, seed: int = 0) -> SDFTConfig:
    return SDFTConfig(
        output_dir=str(setup.workdir / "sdft"),
        max_steps=setup.total_steps,
        learning_rate=LEARNING_RATE,
        lr_scheduler_type="constant",
        weight_decay=0.0,
        max_grad_norm=1.0,
        optim="adamw_torch",
        per_device_train_batch_size=ANSWERS_PER_STEP,
        gradient_accumulation_steps=1,
        num_generations=1,  # one answer per question, as ours
        max_completion_length=setup.max_new_tokens,
        max_prompt_length=None,  # ours never truncates the (long) teacher prompt
        temperature=1.0,
        top_p=1.0,
        top_k=SAMPLING_TOP_K,
        distillation_mode="full_logits",
        distillation_alpha=0.5,
        distillation_is_clip=None,
        teacher_model_kind="base",
        gradient_checkpointing=False,  # TRL's default is on; ours has none
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=not torch.cuda.is_available(),
        bf16=False,
        seed=seed,
        disable_tqdm=True,
    )


def run_sdft(setup: Setup, probe: Probe, seed: int) -> None:
    trainer = SDFTTrainer(
        model=load_model(str(setup.model_dir), "float32"),
        args=sdft_config(setup, seed),
        train_dataset=Dataset.from_list(setup.rows),
        processing_class=load_tokenizer(str(setup.model_dir)),
        callbacks=[StepClock(probe)],
        peft_config=lora_config(LORA),
    )
    quiet(trainer)
    probe.patch(trainer.model, "generate", "generate")
    compute_loss: Callable[..., Any] = trainer.compute_loss

    def counted_loss(model: Any, inputs: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        probe.add_tokens(int(inputs["completion_mask"].sum()))
        return compute_loss(model, inputs, *args, **kwargs)

    probe.patch(trainer, "compute_loss", "loss", counted_loss)
    trainer.train()


@dataclass(frozen=True)
class PromptCheck:
    student_tokens: float
    teacher_tokens: float
    same_teacher_ids: bool


def check_prompts(setup: Setup) -> PromptCheck:
    """Mean prompt lengths, and whether SDFT's teacher prompt has exactly our token ids (built
    with SDFT's own prompt builder, tokenised the same way)."""
    tokenizer = load_tokenizer(str(setup.model_dir))
    student = encode_prompts(tokenizer, [r["prompt"] for r in setup.rows])
    ours = encode_prompts(
        tokenizer, [teacher_messages(r, opsd_settings(setup)) for r in setup.rows]
    )
    builder = DemonstrationTeacherContextBuilder(SimpleNamespace(args=sdft_config(setup)))  # type: ignore[no-untyped-call]
    theirs = encode_prompts(
        tokenizer,
        [builder._compose_teacher_prompt(r["prompt"], r["privileged_context"]) for r in setup.rows],
    )
    return PromptCheck(
        statistics.fmean(map(len, student)), statistics.fmean(map(len, ours)), ours == theirs
    )


# --- GRPO: rubric reward and a free one ----------------------------------------------------------


def length_reward(completions: Sequence[Any], **kwargs: Any) -> list[float | None]:
    """The cheapest reward with some spread: the answer's length in characters, capped."""
    return [min(len(completion_text(c)), 400) / 400 for c in completions]


def grpo_context(setup: Setup, name: str, seed: int) -> StageContext:
    config = TrainConfig.model_validate(
        {
            "output_dir": str(setup.workdir / name),
            "stages": ["grpo"],
            "seed": seed,
            "model": {"name_or_path": str(setup.model_dir), "dtype": "float32"},
            "lora": LORA.model_dump(),
            "grpo": {
                "steps": setup.total_steps,
                "learning_rate": LEARNING_RATE,
                "num_generations": ANSWERS_PER_STEP,
                "prompts_per_step": 1,
                "max_completion_length": setup.max_new_tokens,
                "save_every": 10**6,
            },
        }
    )
    return StageContext(
        config, "grpo", setup.workdir / name, str(setup.model_dir), {"train": setup.rows}
    )


def timed_reward(reward: RewardFn, probe: Probe) -> RewardFn:
    timed = probe.wrap("reward", reward)

    @functools.wraps(reward)
    def counted(*args: Any, completion_ids: Sequence[Sequence[int]], **kwargs: Any) -> Any:
        probe.add_tokens(sum(len(ids) for ids in completion_ids))
        return timed(*args, completion_ids=completion_ids, **kwargs)

    return counted


def run_grpo(setup: Setup, probe: Probe, seed: int, reward: RewardFn, judge: Judge | None) -> None:
    ctx = grpo_context(setup, f"grpo-{reward.__name__}", seed)
    trainer = grpo_trainer(ctx, callbacks=[StepClock(probe)])
    quiet(trainer)
    # grpo_trainer always passes rubric_reward; swap in the timed function (checked after the run)
    trainer.reward_funcs[0] = timed_reward(reward, probe)
    trainer.reward_func_names[0] = reward.__name__
    probe.patch(trainer.model, "generate", "generate")
    probe.patch(trainer, "compute_loss", "loss")
    # a fresh reward per block: RubricReward serves a repeated answer from memory
    set_shared_reward(RubricReward(judge, alpha=0.7) if judge is not None else None)
    try:
        trainer.train()
    finally:
        set_shared_reward(None)
    if probe.calls["reward"] != len(probe.steps):
        raise RuntimeError(f"the {reward.__name__} wrapper ran {probe.calls['reward']} times")


def warm_up_judge(judge: Judge, rows: Sequence[dict[str, Any]]) -> None:
    """Load the offline judge's embedding model (and the reward loop) before anything is timed."""
    set_shared_reward(RubricReward(judge, alpha=0.7))
    try:
        row = rows[0]
        rubric_reward(
            prompts=[row["prompt"]],
            completions=["We route queries to a few key blocks and report five seeds."],
            question=[row["question"]],
            reference=[row["reference"]],
            rubric=[row["rubric"]],
        )
    finally:
        set_shared_reward(None)


# --- arms, summaries, table ----------------------------------------------------------------------


@dataclass
class Arm:
    section: str
    name: str
    run: Callable[[Setup, Probe, int], None]
    peer: str | None = None
    steps: list[Step] = field(default_factory=list)


@dataclass(frozen=True)
class Summary:
    steps: int
    median_s: float
    seconds_per_step: float
    tokens_per_step: float
    tokens_per_s: float
    shares: dict[str, float]

    @classmethod
    def of(cls, steps: Sequence[Step]) -> Summary:
        seconds = sum(s.seconds for s in steps)
        tokens = sum(s.tokens for s in steps)
        shares = {p: sum(s.parts.get(p, 0.0) for s in steps) / seconds for p in PARTS}
        shares["rest"] = 1.0 - sum(shares.values())
        return cls(
            len(steps),
            statistics.median(s.seconds for s in steps),
            seconds / len(steps),
            tokens / len(steps),
            tokens / seconds,
            shares,
        )


def check_probe(arm: Arm, probe: Probe, setup: Setup) -> None:
    """Every wrapper must have run each step, or the arm measured something else."""
    expected = ("generate", "loss", "backward", "reward") if arm.section == "GRPO" else PARTS[:3]
    missing = [part for part in expected if probe.calls[part] < setup.total_steps]
    if len(probe.steps) != setup.total_steps or missing or not all(s.tokens for s in probe.steps):
        raise RuntimeError(
            f"{arm.name}: {len(probe.steps)} steps, wrappers that did not run every step: "
            f"{missing}, tokens per step {[s.tokens for s in probe.steps]}"
        )


def measure(arms: Sequence[Arm], setup: Setup, repeats: int, console: Console) -> None:
    """``repeats`` blocks per arm; within each section the order flips every repeat."""
    sections: dict[str, list[Arm]] = defaultdict(list)
    for arm in arms:
        sections[arm.section].append(arm)
    for repeat in range(repeats):
        for members in sections.values():
            for arm in members if repeat % 2 == 0 else reversed(members):
                probe = Probe()
                started = time.perf_counter()
                with timed_backward(probe):
                    arm.run(setup, probe, repeat)
                check_probe(arm, probe, setup)
                arm.steps.extend(probe.timed_steps())
                console.print(
                    f"  repeat {repeat + 1}/{repeats} {arm.section} {arm.name}: "
                    f"{len(probe.steps)} steps in {time.perf_counter() - started:.1f}s "
                    "(set-up included)",
                    highlight=False,
                )


def _share(value: float, applies: bool = True) -> str:
    return f"{value:.0%}" if applies else "-"


def _ratio(value: float, reference: float | None) -> str:
    return f"{value / reference:.2f}x" if reference else ""


def table_of(arms: Sequence[Arm], summaries: dict[str, Summary]) -> Table:
    table = Table(title="Training throughput per step (same tiny model, rows, machine and run)")
    columns = (
        "stage", "trainer", "steps", "s/step (median)", "tokens/step", "tokens/s",
        "generate", "loss fwd", "backward", "reward", "rest", "tokens/s vs peer",
        "s/step vs peer",
    )  # fmt: skip
    for column in columns:
        table.add_column(column, justify="left" if column in ("stage", "trainer") else "right")
    previous = None
    for arm in arms:
        if previous is not None and arm.section != previous:
            table.add_section()
        previous = arm.section
        mine = summaries[arm.name]
        peer = summaries[arm.peer] if arm.peer else None
        table.add_row(
            arm.section,
            arm.name,
            f"{mine.steps}",
            f"{mine.median_s:.2f}",
            f"{mine.tokens_per_step:.0f}",
            f"{mine.tokens_per_s:.0f}",
            _share(mine.shares["generate"]),
            _share(mine.shares["loss"]),
            _share(mine.shares["backward"]),
            _share(mine.shares["reward"], arm.section == "GRPO"),
            _share(mine.shares["rest"]),
            _ratio(mine.tokens_per_s, peer.tokens_per_s if peer else None),
            _ratio(mine.median_s, peer.median_s if peer else None),
        )
    return table


def notes_of(summaries: dict[str, Summary], prompts: PromptCheck) -> list[str]:
    lines = [
        "tokens = completion tokens in the loss mask (each answer up to and including its stop "
        "token); tokens/s = all timed tokens / all timed seconds. 'vs peer' = this row / the "
        "next row: for tokens/s higher is better, for s/step lower.",
        "generate = inside model.generate; loss fwd = inside the loss call (OPSD: the teacher's "
        "and the student's forward passes and the divergence; GRPO: the policy forward and the "
        "clipped objective); backward = inside Tensor.backward; reward = inside the reward "
        "function; rest = optimiser, gradient clipping, tokenising, GRPO's old/reference "
        "log-prob passes, Trainer bookkeeping and logging.",
        f"OPSD: prompts average {prompts.student_tokens:.0f} tokens for the student and "
        f"{prompts.teacher_tokens:.0f} for the teacher (question + rubric in the user turn, "
        "'{question}\\n\\n{rubric}' in both trainers; identical token ids: "
        f"{'yes' if prompts.same_teacher_ids else 'NO'}). Both minimise the symmetric JSD "
        "(beta = alpha = 0.5) over the full vocabulary against the base weights (LoRA off), "
        "no IS clip. What differs: ours averages over all valid tokens of the batch, SDFT per "
        "answer and then over answers (short answers weigh more); ours passes position ids "
        "counted from the first real token, SDFT none, so its left-padded rows are scored at "
        "shifted positions (generate itself counts from the mask); SDFT runs inside the Hugging "
        "Face Trainer (accelerate, a log record every step), ours is a plain loop. Sampling is "
        "the same in both: temperature 1, top-p 1, top-k 50 (ours passes no top_k, so it gets "
        "transformers' default; SDFT is set to match).",
        "GRPO: both rows are the GRPOTrainer papergym.train.grpo.grpo_trainer builds (dapo loss, "
        "beta 0.01, and the gradient checkpointing TRL turns on by default, which grpo_config "
        "leaves on), 8 answers to one question per step; only the reward function differs, so "
        "the gap between the rows is the rubric judge's cost.",
    ]
    rubric, length = summaries.get(RUBRIC), summaries.get(LENGTH)
    if rubric and length:
        per_step = rubric.shares["reward"] * rubric.seconds_per_step
        lines.append(
            f"rubric reward (offline judge, alpha 0.7): {per_step:.2f} s per step, about "
            f"{1000 * per_step / ANSWERS_PER_STEP:.0f} ms per answer, "
            f"{rubric.shares['reward']:.0%} of a GRPO step here; the length reward takes "
            f"{length.shares['reward']:.1%}."
        )
    return lines


# --- main ----------------------------------------------------------------------------------------

OURS, SDFT = "ours (OPSDTrainer)", "TRL SDFTTrainer"
RUBRIC, LENGTH = "GRPO + rubric reward", "GRPO + length reward"


def make_arms(judge: Judge) -> list[Arm]:
    def rubric(setup: Setup, probe: Probe, seed: int) -> None:
        run_grpo(setup, probe, seed, rubric_reward, judge)

    def length(setup: Setup, probe: Probe, seed: int) -> None:
        run_grpo(setup, probe, seed, length_reward, None)

    return [
        Arm("OPSD", OURS, run_ours, peer=SDFT),
        Arm("OPSD", SDFT, run_sdft),
        Arm("GRPO", RUBRIC, rubric, peer=LENGTH),
        Arm("GRPO", LENGTH, length),
    ]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=4, help="timed steps per block (default 4)")
    parser.add_argument("--repeats", type=int, default=3, help="blocks per arm (default 3)")
    parser.add_argument("--hidden", type=int, default=128, help="tiny model hidden size")
    parser.add_argument("--layers", type=int, default=4, help="tiny model layers")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="answer length cap")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch CPU threads (default 1: tiny matrices gain little from more, and on a shared "
        "machine several threads stall each other far more than one does)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 1 step, 1 repeat, a 2-layer model of hidden 64, 16 new tokens",
    )
    args = parser.parse_args()
    if args.quick:
        args.steps, args.repeats, args.hidden, args.layers, args.max_new_tokens = 1, 1, 64, 2, 16
    return args


def offline_judge() -> Judge:
    """The offline judge, built as the commands build it (``make_judge`` takes a configuration)."""
    return make_judge(load_config(None, ["reward.judge=offline"]))


def main() -> int:
    args = parse_args()
    torch.set_num_threads(args.threads)
    transformers.logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    console = Console(width=170)
    console.print(
        f"{os.cpu_count()} cores, torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"transformers {transformers.__version__}, trl {trl.__version__}; tiny Llama hidden "
        f"{args.hidden} x {args.layers} layers, LoRA r={LORA.r} alpha={LORA.alpha}, "
        f"{ANSWERS_PER_STEP} answers/step, max {args.max_new_tokens} new tokens, "
        f"{args.steps} timed steps (+{WARMUP_STEPS} warm-up) x {args.repeats} repeats per arm",
        highlight=False,
    )
    with tempfile.TemporaryDirectory(prefix="papergym-train-bench-") as tmp:
        model_dir = save_tiny_model(
            Path(tmp) / "model", hidden_size=args.hidden, layers=args.layers, answer_tokens=None
        )
        setup = Setup(model_dir, bench_rows(), args.steps, args.max_new_tokens, Path(tmp))
        judge = offline_judge()
        warm_up_judge(judge, setup.rows)
        prompts = check_prompts(setup)
        arms = make_arms(judge)
        measure(arms, setup, args.repeats, console)
    summaries = {arm.name: Summary.of(arm.steps) for arm in arms}
    console.print(table_of(arms, summaries))
    for line in notes_of(summaries, prompts):
        console.print(f"- {line}", highlight=False)
    return 0 if prompts.same_teacher_ids else 1


if __name__ == "__main__":
    sys.exit(main())
