"""``papergym judge calibrate`` and ``judge fit`` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from papergym.cli import app

runner = CliRunner()
RATINGS = (
    "paper_id\t0\t1\tdecision\np1\t8\t6\tAccept\np2\t3\t5\tReject\np3\t6\t8\tAccept\n"
    "p4\t5\t3\tReject\n"
)


def test_reviewer_calibration_prints_a_table_and_writes_json(tmp_path: Path) -> None:
    ratings = tmp_path / "r.tsv"
    ratings.write_text(RATINGS, encoding="utf-8")
    oof = tmp_path / "oof.csv"
    oof.write_text(
        "paper_id,score,decision\np1,7,Accept\np2,4,Reject\np3,5,Reject\np4,4,Reject\n",
        encoding="utf-8",
    )
    args = ["judge", "calibrate", "--labels", str(ratings), "--reviews", str(oof)]
    table = runner.invoke(app, [*args, "-o", str(tmp_path / "out"), "calibrate.resamples=20"])
    assert table.exit_code == 0, table.output
    assert (
        "venue decision" in table.output
        and "mean rating" in table.output
        and "pearson" in table.output
    )
    written = json.loads((tmp_path / "out" / "calibration.json").read_text("utf-8"))
    assert written["kind"] == "review" and written["papers"] == 4
    as_json = runner.invoke(app, [*args, "--json", "calibrate.resamples=20"])
    assert as_json.exit_code == 0
    assert json.loads(as_json.output)["decision"]["agreement"] == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("labels", "extra", "says"),
    [
        ("r.tsv", ["--instances", "x.jsonl"], "give --reviews"),
        ("l.jsonl", ["--reviews", "x.csv"], "give --instances"),
    ],
)
def test_the_wrong_inputs_for_the_labels_exit_2(
    tmp_path: Path, labels: str, extra: list[str], says: str
) -> None:
    path = tmp_path / labels
    path.write_text("", encoding="utf-8")
    result = runner.invoke(app, ["judge", "calibrate", "--labels", str(path), *extra])
    assert result.exit_code == 2
    assert says in result.output


def test_judge_fit_is_calibrate_reward() -> None:
    from papergym.cli.calibrate_reward import calibrate_reward
    from papergym.cli.judge import app as judge_app

    fit = next(c for c in judge_app.registered_commands if c.name == "fit")
    assert fit.callback is calibrate_reward


@pytest.mark.parametrize("cache", [False, True])
def test_an_llm_judge_is_repeated_and_reordered(tmp_path: Path, cache: bool) -> None:
    from papergym.fakellm.server import FakeOpenAIServer
    from papergym.jsonl import write_jsonl
    from support.instances import rubric_instance

    instance = rubric_instance(
        "i1",
        ["The plan uses a lasso.", "The plan tests on 2020 data."],
        question="Q?",
        reference_answer="We use a lasso. We test on 2020 data.",
        title="T",
    )
    write_jsonl(tmp_path / "instances.jsonl", [instance])
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"instance_id": "i1", "answer": "We use a lasso.", "criterion_id": c,
                        "met": m}) + "\n"
            for c, m in (("i1-c1", 1), ("i1-c2", 0))
        ),
        encoding="utf-8",
    )  # fmt: skip
    with FakeOpenAIServer() as server:
        result = runner.invoke(
            app,
            ["judge", "calibrate", "--labels", str(labels), "--instances",
             str(tmp_path / "instances.jsonl"), "--judge", "llm", "--repeats", "2",
             "--orderings", "1", "--json", f"llm.default.base_url={server.base_url}",
             "llm.default.model=m", f"llm.cache={str(cache).lower()}",
             f"llm.cache_dir={tmp_path / 'cache'}", "calibrate.resamples=20"],
        )  # fmt: skip
        sent = server.request_count
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["repeats"] == 2 and report["orderings"] == 1
    assert report["overall"]["items"] + report["overall"]["unscored"] == 2
    # one answer judged 2 times in order and once reordered; the cache answers repeats
    assert sent >= (2 if cache else 3)
    assert any("cache" in note for note in report["notes"]) == cache
