"""The sample browser's data and script, the cost table, and the chart fixes of issue 26 (the
heatmap's colour legend, win / tie / loss intervals that never overlap), without a browser."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
from pathlib import Path

from papergym.eval import records as er
from papergym.report import plots
from papergym.report.browser import browser_script, embed_json
from papergym.report.costs import cost_table, system_costs
from papergym.report.parts import EvalDir


def test_embedded_json_cannot_close_its_script_or_open_a_comment() -> None:
    hostile = {"answer": "</script><script>alert(1)</script><!-- & -->", "n": [1, None]}
    text = embed_json(hostile)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == hostile  # the escapes are JSON's own: read back unchanged


def test_the_scripts_csp_source_is_its_sha256() -> None:
    script = browser_script()
    digest = hashlib.sha256(script.text.encode("utf-8")).digest()
    assert script.csp_source == f"'sha256-{base64.b64encode(digest).decode()}'"
    # the script writes data as text only, never as markup
    assert "innerHTML" not in script.text and "eval(" not in script.text


def _summary(names: list[str]) -> er.EvalSummary:
    nothing = er.Estimate(value=None, n=0)
    systems = tuple(
        er.SystemSummary(
            system=er.EvalSystem(name=n, spec=n, kind="endpoint", model=n),
            answers=3,
            scored=3,
            unscored=0,
            reward=nothing,
            specific=nothing,
            general=nothing,
            by_dimension={},
            general_criteria={},
            by_rank={},
            words=nothing,
            length_reward=(),
        )
        for n in names
    )
    return er.EvalSummary(
        version="t",
        data="d",
        data_format="instances",
        data_id="x",
        split="test",
        questions=3,
        samples=1,
        temperature=0.0,
        max_tokens=10,
        judge="llm:j",
        alpha=0.7,
        seed=0,
        resamples=10,
        systems=systems,
    )


def _answer(system: str, index: int, **recorded: object) -> er.EvalAnswer:
    return er.EvalAnswer.model_validate(
        {"system": system, "instance_id": f"q{index}", "sample": 0, "answer": "a", "words": 1}
        | recorded
    )


def test_costs_sum_tokens_time_only_asked_answers_and_say_unpriced() -> None:
    answers = [
        _answer("a", 0, completion_tokens=10, prompt_tokens=5, latency_s=1.0, cost_usd=0.01),
        _answer("a", 1, completion_tokens=30, prompt_tokens=5, latency_s=3.0, cost_usd=0.03),
        _answer(
            "a", 2, completion_tokens=0, prompt_tokens=0, latency_s=0.0, cached=True, cost_usd=0.0
        ),
        _answer("b", 0, completion_tokens=7, prompt_tokens=1, latency_s=2.0),  # unpriced
        _answer("old", 0),  # written before tokens were recorded
    ]
    judge = [
        er.EvalJudgeUsage(
            system="a",
            answers=2,
            calls=4,
            cache_hits=0,
            prompt_tokens=100,
            completion_tokens=20,
            cost_usd=0.5,
        ),
        er.EvalJudgeUsage(
            system="a",
            answers=1,
            calls=2,
            cache_hits=1,
            prompt_tokens=50,
            completion_tokens=10,
            cost_usd=0.25,
        ),  # a resumed run's own line
    ]
    directory = EvalDir(Path("e"), _summary(["a", "b", "old"]), answers, [], {}, judge)
    a, b, old = system_costs(directory)
    assert (a.completion_tokens, a.prompt_tokens, a.cached, a.latencies) == (40, 10, 1, (1.0, 3.0))
    assert a.answer_cost == 0.04 and a.judge is not None
    assert (a.judge.calls, a.judge.prompt_tokens, a.judge.cost_usd) == (6, 150, 0.75)
    assert b.answer_cost is None and b.judge is None and old.recorded == 0
    rows = {row[0]: row for row in cost_table(directory).rows}
    assert rows["a"][4] == "2.00 / 2.00 n=2" and rows["a"][-1] == "$0.7900"
    assert rows["b"][5] == "unpriced" and rows["b"][-3] == "not recorded"
    assert rows["old"][2] == "not recorded"  # never 0 tokens, never $0


def test_a_heatmap_has_a_colour_legend_and_an_na_swatch() -> None:
    svg = plots.heatmap("rates", ["a", "b"], ["1", "2"], [[0.1, None], [0.9, 0.5]])
    steps = re.findall(r"<title>(\d\.\d)–(\d\.\d)</title>", svg)
    assert steps[0] == ("0.0", "0.1") and steps[-1] == ("0.9", "1.0") and len(steps) == 10
    assert "<title>not measured</title>" in svg and ">n/a</text>" in svg
    fills = re.findall(r'fill="(#[0-9a-f]{6})"><title>\d', svg)
    assert len(set(fills)) == 10  # ten distinct colours, pale to dark


def _intervals(svg: str) -> list[tuple[float, float, float]]:
    """The interval lines (x1, x2, y) a stacked bar chart draws: 2-pixel strokes."""
    found = re.findall(
        r'<line x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="[\d.]+" stroke="#[0-9A-Fa-f]+" '
        r'stroke-width="2"/>',
        svg,
    )
    return [(float(x1), float(x2), float(y)) for x1, y, x2 in found]


def test_win_tie_loss_intervals_are_in_lanes_of_their_own() -> None:
    # wide, overlapping intervals: before, the win and loss whiskers crossed on the bar
    segments = [
        plots.Segment("win", 0.45, 0.2, 0.7),
        plots.Segment("tie", 0.1, 0.0, 0.3),
        plots.Segment("loss", 0.45, 0.2, 0.7),
    ]
    svg = plots.stacked_bars("w/t/l", [("a", segments), ("b", segments)])
    lines = _intervals(svg)
    assert len(lines) == 6  # one interval per segment and row
    lanes = [y for _, _, y in lines]
    assert len(set(lanes)) == 6  # no two share a height, in a row or across rows
    for row in (lines[:3], lines[3:]):
        ys = sorted(y for _, _, y in row)
        assert all(b - a >= 4 for a, b in itertools.pairwise(ys))  # caps ±2 px apart
    rects = [float(y) for y in re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width', svg)]
    bar_bottom = min(rects[:3]) + 20  # the first row's bar
    assert min(y for _, _, y in lines[:3]) > bar_bottom  # under the bar, not on it
