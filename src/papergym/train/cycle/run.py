"""CycleResearcher's iterative preference training (SPEC §5): ``papergym train cycle``.

Each round tells the same short story. The round takes a fresh share of the writing inputs
(``cycle.input_fraction``, a third by default, unused inputs first). The current policy writes
``cycle.samples`` papers for each at ``cycle.temperature``. The reviewer scores every paper
through ``ReviewReward``; a second, independent reviewer (``cycle.watch``) scores them too. For
each input the best-reviewed paper becomes *chosen* and the worst *rejected*; inputs whose
papers tie or could not be scored give no pair, and are counted. The policy then trains on the
pairs, SimPO plus α·NLL on the chosen text (TRL's CPO trainer, ``loss_type="simpo"``,
``cpo_alpha`` = α; or plain SFT on the chosen papers, the comparison), and the next round
starts from the new weights.

The watch is there because a policy trained against one reviewer can learn what that reviewer
likes rather than better papers (the paper warns of it): when the reward's scores rise while
the watch's agreement falls, the run is hacking its reviewer.

Layout of a run folder::

    config.yaml              the resolved configuration
    tiny-model/              the in-process model, when model.name_or_path is ``tiny``
    round-1/
        papers.jsonl         every generated paper with its scores (written once scored)
        pairs.jsonl          the preference pairs; skips.jsonl: inputs without one, and why
        final/               the weights after the round (LoRA merged)
        metrics.json         written last: a round with it is finished
    summary.json             every round's metrics and the final model

A killed run resumes at the first unfinished round; papers already generated and scored there
are kept, and its training restarts from the round's start. Asking for more ``cycle.rounds``
continues a finished run (round k samples the same inputs whatever the total); any other change
of the configuration is refused.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from papergym.errors import BadInputError
from papergym.jsonl import read_jsonl, write_jsonl, write_text_atomic
from papergym.review.reward import endpoint_failed
from papergym.train.config import TrainConfig
from papergym.train.cycle.generate import clip_prompts, generate_papers
from papergym.train.cycle.records import CycleInput, Paper, round_inputs, round_metrics
from papergym.train.cycle.reviewers import PaperScorer
from papergym.train.cycle.reward_check import CHECK_FILE, RewardCheck
from papergym.train.cycle.scoring import ReviewerUnreachable, pairs_of, score_papers
from papergym.train.cycle.training import train_round
from papergym.train.progress import PhaseFactory, PhaseHook
from papergym.train.settings import CycleSettings

PREPARE_KIND = "write-prepare"
RoundHook = Callable[[int, str], None]
"""Told ``(round, what is happening)``: the command prints it."""

__all__ = ["ReviewerUnreachable", "checked_reward", "cycle_scorers", "load_inputs", "run_cycle"]


# --- data --------------------------------------------------------------------------------------


def load_inputs(settings: CycleSettings) -> list[CycleInput]:
    """The training split of ``cycle.data`` (a ``papergym write prepare`` folder) as inputs.

    A folder another command wrote is refused in one line, before anything is written.
    """
    from papergym.write.data import load_write_data

    if settings.data is None:
        raise BadInputError(None, "no data: give --data DATA, a `papergym write prepare` folder")
    data = load_write_data(settings.data)
    rows = data.split("train")
    if not rows:
        raise BadInputError(settings.data, "holds no training prompts (every prompt is test)")
    inputs = [
        CycleInput(id=r.id, prompt=r.prompt, system=r.system or None, keys=r.keys) for r in rows
    ]
    return inputs[: settings.max_inputs] if settings.max_inputs else inputs


# --- the loop ----------------------------------------------------------------------------------


def round_dir(run_dir: Path, number: int) -> Path:
    return run_dir / f"round-{number}"


def run_cycle(
    config: TrainConfig,
    reward: PaperScorer,
    watch: PaperScorer | None,
    on_round: RoundHook | None = None,
    phase: PhaseFactory | None = None,
    reward_check: RewardCheck | None = None,
) -> dict[str, Any]:
    """Run ``cycle.rounds`` rounds (skipping finished ones); returns the run summary.
    ``reward_check`` (:func:`checked_reward`'s) is recorded in ``reward-check.json`` and the
    summary.

    ``on_round`` hears what each round is doing; ``phase`` gets the progress within it:
    papers written, papers reviewed, training steps."""
    from papergym.train.models import resolve_model_path
    from papergym.train.run import prepare_run_dir

    settings = config.cycle
    inputs = load_inputs(settings)  # bad data fails before anything is written
    by_id = {item.id: item for item in inputs}
    if len(by_id) != len(inputs):
        raise BadInputError(settings.data, "prompts.jsonl repeats an input id")
    start = _start_policy(settings)  # a bad --init-from fails before anything is written
    refuse_foreign_run_dir(config.output_dir)
    # absolute: each round records the weights it ends with, and a resume from another working
    # folder must find them
    run_dir = prepare_run_dir(_as_recorded_rounds(config)).resolve()
    write_text_atomic(run_dir / "config.yaml", yaml.safe_dump(config.resolved(), sort_keys=False))
    if reward_check is not None:
        write_text_atomic(run_dir / CHECK_FILE, reward_check.model_dump_json(indent=1) + "\n")
    current = str(start) if start is not None else resolve_model_path(config.model, run_dir)
    plan = round_inputs(list(by_id), settings.rounds, settings.input_fraction, config.seed)
    rounds: list[dict[str, Any]] = []
    with asyncio.Runner() as runner:
        shared = Rounds(config, runner, reward, watch, on_round, phase)
        for number, ids in enumerate(plan, start=1):
            folder = round_dir(run_dir, number)
            done = folder / "metrics.json"
            if done.is_file():
                metrics = json.loads(done.read_text(encoding="utf-8"))
                _tell(on_round, number, "finished earlier; skipped")
            else:
                chosen = [by_id[i] for i in ids]
                metrics = play_round(shared, number, folder, current, chosen)
            rounds.append(metrics)
            current = metrics["model"]
    summary: dict[str, Any] = {"run_dir": str(run_dir), "rounds": rounds, "final_model": current}
    if reward_check is not None:
        summary["reward_check"] = {
            "failing": reward_check.failing,
            "forced": reward_check.forced,
            "papers": reward_check.report.papers if reward_check.report else 0,
        }
    write_text_atomic(run_dir / "summary.json", json.dumps(summary, indent=1, default=float))
    return summary


RUN_ENTRIES = frozenset({"config.yaml", "summary.json", "tiny-model", CHECK_FILE})
"""What a run folder holds besides its ``round-N`` folders."""


def refuse_foreign_run_dir(
    out: Path, entries: frozenset[str] | None = None, command: str = "papergym train cycle"
) -> None:
    """Refuse a folder another command wrote (a review or build folder has a config.yaml too,
    which would otherwise be read as a run with a different configuration). ``entries``: what
    ``command``'s run folder holds (default: a cycle run's, with its ``round-N`` folders)."""
    if not out.is_dir():
        return
    foreign = sorted(entry.name for entry in out.iterdir() if not _run_entry(entry.name, entries))
    if foreign:
        shown = ", ".join(foreign[:3]) + (
            f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        )
        raise BadInputError(out, f"holds {shown}: not a `{command}` run folder; use another -o")


def _run_entry(name: str, entries: frozenset[str] | None) -> bool:
    if entries is not None:
        return name in entries
    return name in RUN_ENTRIES or (name.startswith("round-") and name[6:].isdigit())


def _as_recorded_rounds(config: TrainConfig) -> TrainConfig:
    """``config`` with the run folder's recorded ``cycle.rounds``: asking for more (or fewer)
    rounds continues a run, as round k samples the same inputs whatever the total."""
    recorded = config.output_dir / "config.yaml"
    if not recorded.is_file():
        return config
    try:
        previous = (yaml.safe_load(recorded.read_text(encoding="utf-8")) or {})["cycle"]["rounds"]
    except (KeyError, TypeError, yaml.YAMLError):
        return config  # prepare_run_dir says what is wrong with the folder
    if not isinstance(previous, int) or previous < 1:
        return config
    cycle = config.cycle.model_copy(update={"rounds": previous})
    return config.model_copy(update={"cycle": cycle})


@dataclass(frozen=True)
class Rounds:
    """What every round of a run shares: the settings, the event loop the reviewers run on,
    the reward and the watch, and the hooks the command listens with."""

    config: TrainConfig
    runner: asyncio.Runner
    reward: PaperScorer
    watch: PaperScorer | None
    on_round: RoundHook | None = None
    phase: PhaseFactory | None = None


def play_round(
    shared: Rounds, number: int, folder: Path, current: str, inputs: Sequence[CycleInput]
) -> dict[str, Any]:
    """One round: sample, review, pair, train; ``metrics.json`` is written last."""
    config, on_round, phase = shared.config, shared.on_round, shared.phase
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    full = {item.id: item.prompt for item in inputs}
    inputs = clip_prompts(current, inputs, config.cycle.max_prompt_tokens)
    clipped = sum(1 for item in inputs if item.prompt != full[item.id])
    papers = _papers(shared, number, folder, current, inputs)
    pairs, skips = pairs_of(inputs, papers)
    write_jsonl(folder / "pairs.jsonl", pairs)
    write_jsonl(folder / "skips.jsonl", skips)
    metrics: dict[str, Any] = {
        "round": number,
        "init_model": current,
        "clipped_prompts": clipped,
        **round_metrics(papers, pairs, skips),
    }
    if pairs:
        _tell(on_round, number, f"training on {len(pairs)} pairs ({config.cycle.loss})")
        training = (
            functools.partial(_training_phase, phase, f"round {number} training")
            if phase is not None
            else None
        )
        seed = config.seed * 1000 + number
        metrics.update(train_round(config, current, pairs, folder, seed, training))
        metrics["model"] = str(folder / "final")
    else:
        _tell(on_round, number, "no pair to train on; the weights stay as they were")
        metrics.update({"steps": 0, "train_loss": None, "last_loss": None, "nll_loss": None})
        metrics["model"] = current
    metrics["seconds"] = round(time.perf_counter() - started, 1)
    write_text_atomic(folder / "metrics.json", json.dumps(metrics, indent=1, default=float))
    return metrics


def _papers(
    shared: Rounds, number: int, folder: Path, current: str, inputs: Sequence[CycleInput]
) -> list[Paper]:
    """The round's papers, scored: read back when an earlier try saved them, else written by
    the policy at ``current`` and reviewed (saved only when every review reached its endpoint)."""
    config, on_round, phase = shared.config, shared.on_round, shared.phase
    papers_file = folder / "papers.jsonl"
    if papers_file.is_file():
        papers = read_jsonl(papers_file, Paper)
        _tell(on_round, number, f"{len(papers)} papers generated and scored earlier; kept")
    else:
        _tell(
            on_round,
            number,
            f"writing {config.cycle.samples} papers for each of {len(inputs)} inputs",
        )
        generated = generate_papers(
            current,
            inputs,
            config.cycle,
            seed=config.seed * 1000 + number,
            dtype=config.model.dtype,
            system_prompt=config.data.system_prompt,
            on_batch=_phase(phase, f"round {number} writing", len(inputs) * config.cycle.samples),
        )
        _tell(on_round, number, "reviewing")
        papers = score_papers(
            shared.runner,
            inputs,
            generated,
            shared.reward,
            shared.watch,
            phase,
            f"round {number} reviewing",
        )
        if failed := [p.reason for p in papers if p.reason and endpoint_failed(p.reason)]:
            raise ReviewerUnreachable(number, failed)  # not unscored: never saved as a result
        write_jsonl(papers_file, papers)
    return papers


def _training_phase(phase: PhaseFactory, name: str, total: int) -> PhaseHook:
    return phase(name, total, "step")


def _phase(phase: PhaseFactory | None, name: str, total: int) -> PhaseHook | None:
    return phase(name, total, "papers") if phase is not None else None


def _tell(hook: RoundHook | None, number: int, what: str) -> None:
    if hook is not None:
        hook(number, what)


def _start_policy(settings: CycleSettings) -> Path | None:
    """The weights round 1 starts from when ``cycle.init_from`` is set (a write-sft run)."""
    if settings.init_from is None:
        return None
    from papergym.train.cycle.start import starting_policy

    return starting_policy(settings.init_from)


def cycle_scorers(config: TrainConfig) -> tuple[PaperScorer, PaperScorer | None]:
    """The reward's reviewer and the watch's (None for ``cycle.watch=none``), each behind
    ``ReviewReward``. The data is read first: bad data (or ``cycle.init_from``) fails in one line,
    before a reviewer or a model is built."""
    from papergym.train.cycle.reviewers import build_scorer

    load_inputs(config.cycle)
    _start_policy(config.cycle)  # as is a bad --init-from
    reward = build_scorer(config.cycle.reviewer, config)
    watch = None if config.cycle.watch == "none" else build_scorer(config.cycle.watch, config)
    return reward, watch


def checked_reward(config: TrainConfig, reward: PaperScorer) -> RewardCheck:
    """The reward reviewer's gaming probes on a few of the data's papers; a failing probe
    refuses the run (bad input) unless ``cycle.force_reward`` (see
    :mod:`papergym.train.cycle.reward_check`)."""
    from papergym.train.cycle.reward_check import check_reward_reviewer, probe_papers

    return check_reward_reviewer(config.cycle, reward, probe_papers(config.cycle))
