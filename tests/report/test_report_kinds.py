"""``papergym report`` on train runs, review and review-eval outputs, and builds: which kind a
folder is, the scoring rules behind the review pictures, and each kind's page in headless
Chromium (no console error, its charts in the DOM, a screenshot that is not blank).

Folders are written by the writers themselves (the train metrics log, the cycle's round
numbers, review records and the review eval's rows, the build card), not hand-typed JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_report import (
    colour_counts,
    console_messages,
    png_pixels,
    run_chromium,
    write_eval_dir,
)
from typer.testing import CliRunner

from papergym.cli import app
from papergym.export.card import write_card
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.llm.types import Usage
from papergym.llm.usage import UsageTracker
from papergym.records import Drop
from papergym.report import kinds
from papergym.report.review import human_pairs, reliability, roc_points
from papergym.review.data import Prediction, RatedPaper
from papergym.review.evaluation import (
    PAPERS_FILE,
    Bootstrap,
    PaperPoint,
    ReviewEvalSummary,
    RowSet,
    paper_points,
)
from papergym.review.records import ICLR, PaperReview, decide
from papergym.train.cycle.records import Pair, Paper, Skip, round_metrics
from papergym.train.run import MetricsLog

runner = CliRunner()
HOSTILE = '<script>alert("x")</script>'


# ------------------------------------------------------------------------------------ folders


def write_train_run(path: Path, shift: float, stages: tuple[str, ...] = ("opsd", "grpo")) -> Path:
    """A run folder as ``papergym train`` lays it out: one metrics log per stage, with
    held-out evaluations (interval and watch) every fifth step."""
    for index, stage in enumerate(stages, start=1):
        log = MetricsLog(path / f"{index}-{stage}" / kinds.METRICS_FILE, stage)  # type: ignore[arg-type]
        for step in range(1, 21):
            values: dict[str, float] = {
                "loss": 1.0 / step + shift,
                "completion_length": 100.0 + step,
            }
            if stage == "grpo":
                values["reward"] = 0.3 + 0.01 * step + shift
            if step % 5 == 0:
                reward = 0.4 + 0.01 * step + shift
                values |= {
                    "eval/reward": reward,
                    "eval/reward_low": reward - 0.05,
                    "eval/reward_high": reward + 0.05,
                    "eval/watch_reward": reward - 0.1,
                    "eval/watch_reward_low": reward - 0.15,
                    "eval/watch_reward_high": reward - 0.05,
                }
            log.write(step, **values)
    return path


def write_cycle_run(path: Path, rounds: int = 3) -> Path:
    """A cycle run's finished rounds: ``round-N/metrics.json`` as ``play_round`` writes it."""
    for number in range(1, rounds + 1):
        papers = [
            Paper(
                input_id=f"i{k}",
                sample=s,
                text=f"paper {k} {s}",
                tokens=50,
                words=40 + 10 * number + s,
                score=0.2 * s + 0.1 * number,
                rating=5.0,
                watch_score=0.1 * s + 0.05 * number,
            )
            for k in range(3)
            for s in range(2)
        ]
        pairs = [
            Pair(
                input_id=f"i{k}",
                prompt="write",
                chosen=f"paper {k} 1",
                rejected=f"paper {k} 0",
                chosen_score=0.2 + 0.1 * number,
                rejected_score=0.1 * number,
            )
            for k in range(3)
        ]
        metrics = {"round": number, **round_metrics(papers, pairs, list[Skip]())}
        metrics |= {"steps": 4, "train_loss": 1.0 / number, "last_loss": 0.9 / number}
        folder = path / f"round-{number}"
        folder.mkdir(parents=True)
        write_text_atomic(folder / kinds.ROUND_METRICS_FILE, json.dumps(metrics, indent=1))
    return path


def _rated(count: int = 24) -> list[RatedPaper]:
    return [
        RatedPaper(
            paper_id=f"p{i}",
            ratings=(float(1 + i % 10), float(3 + i % 6), float(1 + (i * 7) % 10)),
            accepted=i % 3 == 0,
        )
        for i in range(count)
    ]


def _predictions(papers: list[RatedPaper]) -> dict[str, Prediction]:
    """A reviewer that tracks the mean human rating, leaving the last paper unscored."""
    found: dict[str, Prediction] = {}
    for paper in papers[:-1]:
        score = round(min(10.0, paper.mean_rating + (1.0 if paper.accepted else -0.5)), 2)
        found[paper.paper_id] = Prediction(score=score, decision=decide(score, 5.5))
    found[papers[-1].paper_id] = Prediction(score=None, decision=None)
    return found


def write_review_eval(path: Path) -> Path:
    papers = _rated()
    predictions = _predictions(papers)
    rows = RowSet(
        system=HOSTILE,
        description="predictions of reviews.jsonl",
        predictions=predictions,
        scale=ICLR,
        threshold=5.5,
        boot=Bootstrap(resamples=30, level=0.95, seed=0),
        constant=(5.0, "the mean human rating of the training papers"),
    ).rows(papers)
    summary = ReviewEvalSummary(
        version="0.1.0",
        ratings="ratings.csv",
        papers_dir="papers/",
        papers=len(papers),
        accepted=sum(p.accepted for p in papers),
        human_ratings=sum(len(p.ratings) for p in papers),
        venue=ICLR.name,
        threshold=5.5,
        source="reviews/reviews.jsonl",
        extra_predictions=0,
        resamples=30,
        level=0.95,
        seed=0,
        rows=rows,
    )
    path.mkdir(parents=True)
    write_jsonl(path / PAPERS_FILE, paper_points(papers, predictions))
    write_text_atomic(path / kinds.REVIEW_EVAL_FILE, summary.model_dump_json(indent=1))
    return path


def write_reviews(path: Path) -> Path:
    path.mkdir(parents=True)
    reviews = [
        PaperReview(
            paper_id=f"p{i}",
            source=f"p{i}.tex",
            reviewer_model=HOSTILE if i == 0 else "qwen-7b",
            baseline=False,
            score=None if i == 5 else 3.0 + i % 5,
            decision=None if i == 5 else decide(3.0 + i % 5, 5.5),
            threshold=5.5,
        )
        for i in range(8)
    ]
    write_jsonl(path / kinds.REVIEWS_FILE, reviews)
    return path


def write_build(path: Path) -> Path:
    """A paper build's card and instances, by the card writer, with LLM usage by step."""
    from export.export_samples import instance, weighted_instance

    instances = [instance(f"p{i}", domain=("Biology" if i % 2 else HOSTILE)) for i in range(3)]
    instances.append(weighted_instance())  # signed weights: two pitfalls
    drops = [
        Drop(source="a.pdf", step="ingest", reason="not a paper"),
        Drop(source="b.pdf", step="ingest", reason="not a paper"),
        Drop(source="c.pdf", step="rubric", reason="too few criteria"),
    ]
    tracker = UsageTracker()
    for stage, calls in (("draft", 4), ("rubric", 8)):
        for _ in range(calls):
            usage = Usage(prompt_tokens=900, completion_tokens=300)
            tracker.record(stage=stage, role="builder", model="m", usage=usage, cached=False)
    path.mkdir(parents=True)
    write_jsonl(path / "instances.jsonl", instances)
    write_card(
        path,
        instances,
        drops,
        config={},
        usage=tracker.as_dict(),
        builder_note=None,
        leakage=None,
    )
    return path


# ------------------------------------------------------------------------------- scoring rules


def test_roc_points_move_tied_scores_together_and_span_the_square() -> None:
    curve = roc_points([0.9, 0.8, 0.8, 0.1], [True, True, False, False])
    assert curve == [(0.0, 0.0), (0.0, 0.5), (0.5, 1.0), (1.0, 1.0)]
    assert roc_points([0.1, 0.2], [True, True]) == []  # no negative: no curve


def test_reliability_bins_and_human_pairs() -> None:
    pairs = [(1.0, 2.0), (1.5, 4.0), (9.0, 8.0)]
    assert reliability(pairs, 1.0, 10.0, 3) == [(1.25, 3.0), (9.0, 8.0)]
    paper = PaperPoint(
        paper_id="a", ratings=(2.0, 4.0, 6.0), accepted=True, score=None, decision=None
    )
    assert human_pairs([paper]) == [(2.0, 5.0), (4.0, 4.0), (6.0, 3.0)]


def test_paper_points_keep_unscored_and_missing_papers_as_none() -> None:
    papers = _rated(3)
    points = paper_points(papers, {"p0": Prediction(score=6.0, decision="accept")})
    assert [p.score for p in points] == [6.0, None, None]
    assert points[0].ratings == papers[0].ratings and points[0].accepted


# ------------------------------------------------------------------------------------- kinds


def test_each_folder_kind_is_told_by_its_marker(tmp_path: Path) -> None:
    assert kinds.folder_kind(write_train_run(tmp_path / "run", 0.0)) == "train"
    assert kinds.folder_kind(tmp_path / "run" / "2-grpo") == "train"  # one stage alone
    assert kinds.folder_kind(write_cycle_run(tmp_path / "cycle")) == "train"
    assert kinds.folder_kind(write_reviews(tmp_path / "reviews")) == "review"
    assert kinds.folder_kind(write_review_eval(tmp_path / "review-eval")) == "review-eval"
    assert kinds.folder_kind(write_eval_dir(tmp_path / "eval")) == "eval"


def test_marker_names_are_the_writers(tmp_path: Path) -> None:
    # kinds.py does not import the review modules (seconds to import): its names must match
    from papergym.review.eval_run import SUMMARY_FILE
    from papergym.review.run import REVIEWS_FILE

    assert (kinds.REVIEWS_FILE, kinds.REVIEW_EVAL_FILE) == (REVIEWS_FILE, SUMMARY_FILE)


def test_a_folder_of_no_kind_is_one_line_and_nothing_is_written(tmp_path: Path) -> None:
    run = write_train_run(tmp_path / "run", 0.0)
    stray = tmp_path / "stray"
    (stray / "sub").mkdir(parents=True)
    out = tmp_path / "out" / "page.html"
    result = runner.invoke(app, ["report", str(run), str(stray), "-o", str(out)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(stray) in lines[0] and "a train run" in lines[0]
    assert not (tmp_path / "out").exists()


def test_a_broken_metrics_line_names_its_file(tmp_path: Path) -> None:
    run = write_train_run(tmp_path / "run", 0.0, stages=("sft",))
    with (run / "1-sft" / kinds.METRICS_FILE).open("a") as handle:
        handle.write("{not json\n")
    result = runner.invoke(app, ["report", str(run), "-o", str(tmp_path / "page.html")])
    assert result.exit_code == 2
    assert "1-sft/metrics.jsonl: line 21 is not JSON" in " ".join(result.output.split())
    assert not (tmp_path / "page.html").exists()


# ------------------------------------------------------------------------------------- pages


def _report(tmp_path: Path, *folders: Path) -> str:
    out = tmp_path / "page.html"
    result = runner.invoke(app, ["report", *map(str, folders), "-o", str(out)])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    tags = re.findall(r"<[a-zA-Z][^>]*>", html)  # real tags: escaped text is not markup
    assert not [t for t in tags if re.match(r"<(script|link|iframe|img|object|embed)\b", t)]
    assert not [t for t in tags if re.search(r"\b(src|href|xlink:href)\s*=", t)]
    return html


def charts(html: str) -> list[str]:
    return re.findall(r'class="plot chart-([a-z-]+)"', html)


def test_train_runs_are_overlaid_with_bands(tmp_path: Path) -> None:
    a = write_train_run(tmp_path / "run-a", 0.0)
    b = write_train_run(tmp_path / "run-b", 0.1)
    html = _report(tmp_path, a, b)
    assert charts(html) == [
        "train-loss",
        "train-reward",
        "train-eval-reward",
        "train-watch",
        "train-length",
    ]
    assert html.count("<section") == 1  # the runs share one section
    loss = html.split("chart-train-loss")[1].split("</svg>")[0]
    assert loss.count("<polyline") == 4  # two stages of each run
    assert ">run-a</text>" in loss and ">run-b</text>" in loss  # one legend line per run
    assert html.split("chart-train-eval-reward")[1].split("</svg>")[0].count('class="band"') == 4
    assert re.search(r"0\.600 \[0\.550, 0\.650\]", html)  # the last eval/reward, interval


def test_a_cycle_run_is_drawn_over_rounds(tmp_path: Path) -> None:
    html = _report(tmp_path, write_cycle_run(tmp_path / "cycle"))
    assert charts(html) == ["train-loss", "train-reward", "train-watch", "train-words"]
    assert ">round</text>" in html


def test_review_eval_draws_roc_reliability_scatter_and_every_baseline(tmp_path: Path) -> None:
    html = _report(tmp_path, write_review_eval(tmp_path / "review-eval"))
    assert charts(html) == [
        "review-roc",
        "review-reliability",
        "review-scatter",
        "review-auc",
        "review-spearman",
        "review-mae",
    ]
    auc = html.split("chart-review-auc")[1].split("</svg>")[0]
    for baseline in ("constant", "always-reject", "single human"):
        assert f">{baseline}</text>" in auc
    assert "1 unscored paper(s) are not drawn" in html
    assert HOSTILE not in html and "&lt;script&gt;" in html


def test_review_and_build_pages(tmp_path: Path) -> None:
    html = _report(tmp_path, write_reviews(tmp_path / "reviews"), write_build(tmp_path / "b"))
    assert charts(html) == [
        "review-scores",
        "review-decisions",
        "build-drops",
        "build-weights",
        "build-dimensions",
        "build-domains",
        "build-calls",
        "build-tokens",
    ]
    assert ">ingest · not a paper</text>" in html
    weights = html.split("chart-build-weights")[1].split("</svg>")[0]
    assert ">-2</text>" in weights and ">-0.5</text>" in weights and ">3</text>" in weights
    calls = html.split("chart-build-calls")[1].split("</svg>")[0]
    assert ">rubric</text>" in calls and ">2</text>" in calls  # 8 calls / 4 kept instances
    assert HOSTILE not in html
    assert "personas" in html  # a paper build records none, and says so


# ------------------------------------------------------------------------------ in Chromium


KIND_FOLDERS = {
    "train": lambda root: [write_train_run(root / "a", 0.0), write_cycle_run(root / "c")],
    "review-eval": lambda root: [write_review_eval(root / "e"), write_reviews(root / "r")],
    "build": lambda root: [write_build(root / "b")],
}


@pytest.mark.parametrize("kind", sorted(KIND_FOLDERS))  # a browser launch each: 2-4 s
def test_each_kind_in_headless_chromium(kind: str, tmp_path: Path) -> None:
    html = _report(tmp_path, *KIND_FOLDERS[kind](tmp_path))
    expected = charts(html)
    shot = tmp_path / "page.png"
    dom = run_chromium(
        tmp_path / "page.html",
        "--dump-dom",
        "--force-device-scale-factor=0.5",
        "--window-size=1280,1600",
        f"--screenshot={shot}",
    )
    assert dom.returncode == 0 and shot.is_file(), dom.stderr[-2000:]
    assert console_messages(dom.stderr) == []
    assert charts(dom.stdout) == expected and expected  # the browser parsed every chart
    assert "<script" not in dom.stdout.lower()
    colours = colour_counts(png_pixels(shot.read_bytes()))
    assert len(colours) > 20, colours.most_common(5)  # a blank page has one colour
    assert colours[(0x00, 0x72, 0xB2)] > 20  # the first series' ink is drawn


@pytest.mark.slow
def test_a_real_paper_build_is_reported(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples" / "papers"
    build = tmp_path / "build"
    result = runner.invoke(app, ["build", str(examples), "-o", str(build)])
    assert result.exit_code == 0, result.output
    html = _report(tmp_path, build)
    assert {"build-weights", "build-dimensions", "build-domains"} <= set(charts(html))
    assert ">computer science</text>" in html.split("chart-build-domains")[1].split("</svg>")[0]


@pytest.mark.slow
def test_a_real_ares_build_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "recipes" / "ares"))
    from runner_support import scripted_server, write_corpus

    corpus = write_corpus(tmp_path / "c.jsonl", 4)  # one document too short: a prefilter drop
    out = tmp_path / "ares"
    with scripted_server() as server:
        args = ["build", str(corpus), "--recipe", "ares", "-o", str(out), "--no-cache"]
        args += ["--base-url", server.base_url, "--model", "m", "ares.shard_size=2"]
        assert runner.invoke(app, args).exit_code == 0
    html = _report(tmp_path, out)
    assert "ARES build" in html
    assert charts(html) == [
        "build-drops",
        "build-weights",
        "build-dimensions",
        "build-domains",
        "build-personas",
        "build-calls",
        "build-tokens",
    ]
    assert ">prefilter · min_words</text>" in html


def test_the_page_is_titled_by_the_kinds_it_shows() -> None:
    from papergym.report.render import report_title

    assert report_title(["train", "train", "build"]) == "PaperGym report: training, build"
    assert (
        report_title(["review-eval", "review"]) == "PaperGym report: reviewer evaluation, reviews"
    )
    assert report_title([]) == "PaperGym report"
