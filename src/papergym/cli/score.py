"""``papergym score``: answers → their rubric scores (JSONL), with a summary."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from papergym.cli.common import (
    ConfigOption,
    DebugOption,
    JsonOption,
    OverridesArgument,
    print_summary,
    reports_errors,
)
from papergym.cli.groups import single_app
from papergym.cli.reward_options import (
    AlphaOption,
    InstancesArgument,
    JudgeOption,
    MaxAnswerCharsOption,
    ModeOption,
    VerdictOption,
    reward_config,
)
from papergym.eval.evaluate import judge_tracker
from papergym.jsonl import write_text_atomic
from papergym.reward.run import read_score_inputs, score_answers, score_summary, scores_path
from papergym.reward.runtime import make_reward
from papergym.settings.load import config_yaml

app = single_app()


@app.command("score")
@reports_errors
def score(
    instances: InstancesArgument,
    answers: Annotated[
        Path,
        typer.Argument(
            help="JSONL of {instance_id, answer} (and sample, for several answers per instance).",
            show_default=False,
        ),
    ],
    overrides: OverridesArgument = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Where to write the scores (JSONL; default: beside ANSWERS, as "
            "ANSWERS_NAME.scores.jsonl); the resolved configuration goes beside it as "
            "NAME.config.yaml.",
            show_default=False,
        ),
    ] = None,
    samples: Annotated[
        bool,
        typer.Option(
            "--samples",
            help="Several answers per instance (GRPO samples): lines without a sample field "
            "are numbered per instance in file order (0, 1, ...). A file whose lines all have "
            "a sample field needs no flag.",
        ),
    ] = False,
    config: ConfigOption = None,
    judge: JudgeOption = None,
    alpha: AlphaOption = None,
    max_answer_chars: MaxAnswerCharsOption = None,
    mode: ModeOption = None,
    verdict: VerdictOption = None,
    json_output: JsonOption = False,
    debug: DebugOption = False,
) -> None:
    """Score answers against their instances' rubrics; unscored answers are reported, never 0.

    Each answers line is {"instance_id": "...", "answer": "..."} (also "id"; "response" or
    "completion"). One answer per instance, or several: give each line a "sample" field (an
    integer or a string, unique per instance), or pass --samples to number them in file order;
    every score then carries its sample, and the summary counts instances, samples per instance
    and instances_all_tied (two or more scored samples, all with the same score: no learning
    signal for a GRPO group). A line that is not such an object (a null, number or
    list answer, no answer field, no id, an id or sample seen before, an unknown id) stops the
    command with one line naming file:line, exit 2, and nothing written.
    """
    out = scores_path(answers, out)
    settings = reward_config(
        config, overrides, judge, alpha, max_answer_chars, mode=mode, verdict=verdict
    )
    inputs = read_score_inputs(instances, answers, samples=samples)
    reward = make_reward(settings)
    scores = score_answers(reward, inputs, out)
    # beside the scores, not "config.yaml": -o's folder is often the working directory, where
    # the user's own config.yaml may be
    write_text_atomic(out.with_name(out.stem + ".config.yaml"), config_yaml(settings))
    summary = score_summary(scores, inputs.answers, reward.judge.name, out)
    summary = {**summary, "mode": reward.mode}
    tracker = judge_tracker(reward)
    if json_output and tracker is not None:  # the LLM judge's calls and tokens, as eval gives
        summary = {**summary, "usage": tracker.as_dict()}
    print_summary("Scores", summary, json_output)
