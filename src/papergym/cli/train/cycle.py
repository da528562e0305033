"""``papergym train cycle CONFIG --data DATA``: iterative SimPO + NLL against a reviewer; the
rounds themselves are :func:`papergym.train.cycle.run.run_cycle`."""

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
from papergym.cli.train.options import LogEveryOption, config_path
from papergym.settings.load import flag
from papergym.settings.models import PaperGymConfig
from papergym.train.cycle.reviewers import PaperScorer
from papergym.train.progress import ProgressReport

CycleConfigArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="CONFIG",
        help="Training config (YAML), e.g. configs/cycle-tiny-cpu.yaml or "
        "configs/cycle-12b.yaml; or give it with -c.",
        show_default=False,
    ),
]
CycleOverridesArgument = Annotated[
    list[str] | None,
    typer.Argument(
        help="Config overrides as key=value: cycle.rounds=5 cycle.nll_weight=0 "
        "cycle.loss=sft cycle.watch=none.",
        show_default=False,
    ),
]
CycleConfigOption = Annotated[
    Path | None,
    typer.Option("-c", "--config", help="The training config, as CONFIG.", show_default=False),
]
CycleDataOption = Annotated[
    Path | None,
    typer.Option(
        "--data",
        help="Folder written by `papergym write prepare` (its prompts.jsonl are the "
        "inputs); sets cycle.data.",
        show_default=False,
    ),
]
CycleOutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Run folder (sets output_dir). Running again resumes at the first unfinished round.",
        show_default=False,
    ),
]


def cycle(
    config: CycleConfigArgument = None,
    overrides: CycleOverridesArgument = None,
    config_file: CycleConfigOption = None,
    data: CycleDataOption = None,
    output: CycleOutputOption = None,
    init_from: Annotated[
        Path | None,
        typer.Option(
            "--init-from",
            help="Start round 1 from a `papergym train write-sft` run folder (its "
            "write-sft/final) or a model folder instead of model.name_or_path; sets "
            "cycle.init_from, which the run folder records.",
            show_default=False,
        ),
    ] = None,
    force_reward: Annotated[
        bool,
        typer.Option(
            "--force-reward",
            help="Train even when the reward reviewer's gaming probes (on cycle.probe_papers of "
            "the data's papers) rate a probe above its paper; sets cycle.force_reward, which the "
            "run records (reward-check.json, the summary).",
        ),
    ] = False,
    as_json: JsonOption = False,
    log_every: LogEveryOption = None,
    debug: DebugOption = False,
) -> None:
    """CycleResearcher's training: per round, write `cycle.samples` papers (T = cycle.temperature)
    for a fresh `cycle.input_fraction` of the inputs, score them with the reviewer
    (cycle.reviewer) through ReviewReward, pair the best with the worst of each input (ties and
    unscored skipped, and counted), and train SimPO + α·NLL on the pairs (TRL CPOTrainer); the
    next round starts from the new weights. A second reviewer (cycle.watch) scores the same
    papers: its agreement with the reward is the reward-hacking watch. Before training, the
    reward's gaming probes run on cycle.probe_papers of the data's papers: a reward they game
    is refused (exit 2) unless --force-reward.

    Exit code 0 when every round is finished; 1 when the reviewer's endpoint failed (the round
    is not saved: run the same command again); 2 on bad input (data another command wrote, a
    run folder of another configuration or command)."""
    from papergym.settings.train import load_config

    path, extra = config_path(config, config_file, overrides)
    extra_overrides: list[Any] = list(extra)
    if data is not None:
        # absolute: `--data d` and `--data ./d` (or another working folder) name one data set,
        # and the run folder records it, so a resume must not see a different configuration
        extra_overrides.append(flag("cycle.data", str(data.resolve()), "--data"))
    if output is not None:
        extra_overrides.append(flag("output_dir", str(output), "-o"))
    if init_from is not None:  # absolute, as --data: the run folder records it
        extra_overrides.append(flag("cycle.init_from", str(init_from.resolve()), "--init-from"))
    if force_reward:
        extra_overrides.append(flag("cycle.force_reward", True, "--force-reward"))
    _run(load_config(path, extra_overrides), as_json, log_every)


def _run(settings: PaperGymConfig, as_json: bool, log_every: int | None) -> None:
    """Run the rounds with their progress on stderr, then print the summary (or its JSON)."""
    from papergym.train.cycle.run import (
        ReviewerUnreachable,
        checked_reward,
        cycle_scorers,
        run_cycle,
    )
    from papergym.train.run import quiet_libraries

    reward, watch = cycle_scorers(settings)
    check = checked_reward(settings, reward)
    if check.forced and not as_json:
        stderr.print(
            f"warning: the reward's probes fail ({', '.join(check.failing)}); training anyway "
            "(--force-reward, recorded in reward-check.json)",
            highlight=False,
        )
    quiet_libraries()
    live = not as_json and stderr.is_terminal
    try:
        with ProgressReport(stderr, live=live, every=log_every) as report:

            def announce(number: int, what: str) -> None:
                if not as_json:
                    report.say(f"round {number}: {what}")

            summary = run_cycle(
                settings,
                reward,
                watch,
                on_round=announce,
                phase=report.phase,
                reward_check=check,
            )
    except ReviewerUnreachable as failure:
        exit_unfinished(
            failure.reasons,
            "paper(s) not reviewed because the reviewer's endpoint failed; finished rounds are "
            "kept: run the same command again",
        )
    if as_json:
        stdout.print_json(json.dumps(summary, default=float))
        return
    _print_summary(summary, settings, (reward, watch))


def _print_summary(
    summary: dict[str, Any], settings: PaperGymConfig, scorers: tuple[PaperScorer | None, ...]
) -> None:
    """The rounds' table, why watch columns are empty, the LLM reviewers' usage, the model."""
    stdout.print(summary_table(summary, settings))
    for note in watch_notes(summary, settings):
        stdout.print(note, highlight=False, markup=False, soft_wrap=True)
    papers = sum(r["papers"] for r in summary["rounds"])
    for scorer in scorers:
        client = getattr(getattr(scorer, "reviewer", None), "llm", None)
        if client is not None and client.tracker.rows:  # the LLM reviewer's calls and cost
            from papergym.llm.report import usage_table

            stdout.print(usage_table(client.tracker, per=("paper", max(1, papers))))
    stdout.print(f"final model: {summary['final_model']}")


def watch_notes(summary: dict[str, Any], settings: PaperGymConfig) -> list[str]:
    """Why a round's watch columns are empty (``-``), one line per round that has one."""
    if settings.cycle.watch == "none":
        return ["watch: none (cycle.watch=none): the watch columns stay empty"]
    notes = []
    for m in summary["rounds"]:
        reasons = [
            f"{column} -: {why}"
            for column, value, why in (
                ("watch ρ", m.get("watch_spearman"), m.get("watch_spearman_why")),
                ("watch agrees", m.get("watch_pair_agreement"), m.get("watch_agreement_why")),
            )
            if value is None and why
        ]
        if reasons:
            notes.append(f"round {m['round']}: " + "; ".join(reasons))
    if notes and settings.cycle.watch == "structure" and _all_watch_scores_zero(summary):
        tiny = " (the in-process tiny model writes byte soup)"
        notes.append(
            "the structure watch found no section heading and no citation in any paper: the "
            f"policy does not write papers yet{tiny if settings.model.name_or_path == 'tiny' else ''}"
        )
    return notes


def _all_watch_scores_zero(summary: dict[str, Any]) -> bool:
    return all(m.get("watch_mean_score") in (0, None) for m in summary["rounds"])


def _reviewer_label(name: str) -> str:
    """A reviewer's name in the table: the offline reviewer is a baseline, and says so."""
    return "offline baseline" if name == "offline" else name


def summary_table(summary: dict[str, Any], settings: PaperGymConfig) -> Table:
    """One row per round: pairs, skips, scores, margin, length, the watch, the loss."""
    table = Table(
        title=f"Training by review {summary['run_dir']} (reward: "
        f"{_reviewer_label(settings.cycle.reviewer)}, watch: "
        f"{_reviewer_label(settings.cycle.watch)}, loss: {settings.cycle.loss})"
    )
    columns = (
        "round", "papers", "unscored", "pairs", "skips tie/unsc.", "chosen", "rejected",
        "margin", "words", "watch ρ", "watch agrees", "loss", "seconds",
    )  # fmt: skip
    for column in columns:
        table.add_column(column)
    for m in summary["rounds"]:
        table.add_row(
            str(m["round"]),
            str(m["papers"]),
            str(m["unscored_papers"]),
            str(m["pairs"]),
            f"{m['skipped_tie']} / {m['skipped_unscored']}",
            _fmt(m["chosen_score"]),
            _fmt(m["rejected_score"]),
            _fmt(m["margin"]),
            _fmt(m["words"]),
            _fmt(m["watch_spearman"]),
            _fmt(m["watch_pair_agreement"]),
            _fmt(m.get("train_loss")),
            _fmt(m.get("seconds")),
        )
    return table


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


cycle_command = reports_errors(cycle)
