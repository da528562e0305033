"""A rubric judge against labels, with scripted judges: agreement, kappa, self-consistency."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from papergym.calibrate.records import CALIBRATION_FILE
from papergym.calibrate.rubric import calibrate_rubric
from papergym.calibrate.settings import CalibrateSection
from papergym.jsonl import write_jsonl
from papergym.records import Instance, Verdict
from support.instances import rubric_instance

INSTANCE = rubric_instance(
    "i1",
    ["The plan uses a lasso.", "The plan tests on 2020 data.", "The plan clusters errors."],
    question="Q?",
    reference_answer="We use a lasso. We test on 2020 data. We cluster errors.",
    title="T",
)
SECTION = CalibrateSection(resamples=50, repeats=3, orderings=2, kappa_threshold=0.5)


class KeywordJudge:
    """Met when the criterion's last word is in the answer; ``flaky`` flips its verdicts on
    every other call; ``order_sensitive`` says met to the first criterion listed only."""

    name = "keyword"

    def __init__(self, *, flaky: bool = False, order_sensitive: bool = False) -> None:
        self.calls = 0
        self.flaky = flaky
        self.order_sensitive = order_sensitive

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        self.calls += 1
        verdicts = []
        for n, c in enumerate(instance.rubric.specific):
            met = c.text.rstrip(".").split()[-1] in answer
            if self.flaky and self.calls % 2 == 0:
                met = not met
            if self.order_sensitive:
                met = n == 0
            verdicts.append(Verdict(criterion_id=c.id, passed=met, reason="scripted"))
        return verdicts, []


def labels_file(tmp_path: Path) -> Path:
    rows = [
        ("We use a lasso.", "i1-c1", 1),
        ("We use a lasso.", "i1-c2", 0),
        ("We use a lasso.", "i1-c3", 0),
        ("We test on 2020 data and cluster errors.", "i1-c1", 0),
        ("We test on 2020 data and cluster errors.", "i1-c2", 1),
        ("We test on 2020 data and cluster errors.", "i1-c3", 1),
        # the labeller disagrees with the keyword rule here: "errors" appears, but not met
        ("Our errors are unknown.", "i1-c3", 0),
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text(
        "".join(
            json.dumps({"instance_id": "i1", "answer": a, "criterion_id": c, "met": m}) + "\n"
            for a, c, m in rows
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture
def instances(tmp_path: Path) -> Path:
    path = tmp_path / "instances.jsonl"
    write_jsonl(path, [INSTANCE])
    return path


def test_agreement_and_kappa_of_a_scripted_judge(tmp_path: Path, instances: Path) -> None:
    judge = KeywordJudge()
    report = calibrate_rubric(
        judge, instances, labels_file(tmp_path), SECTION, deterministic=True, out=tmp_path / "o"
    )
    # 7 labels, one disagreement (the last); judge met 4/7, labels met 3/7
    # p_e = 4/7·3/7 + 3/7·4/7 = 24/49; kappa = (6/7 − 24/49) / (1 − 24/49) = 18/25
    assert report.answers == 3
    assert report.overall.items == 7
    assert report.overall.agreement == pytest.approx(6 / 7)
    assert report.overall.kappa.value == pytest.approx(18 / 25)
    assert report.repeats == 1 and report.overall.repeat_consistency is None
    assert report.overall.order_consistency == pytest.approx(1.0)
    # c3: judge T, T(wrong) vs labels 0, 1, 0 on three answers -> kappa below 0.5
    assert report.unreliable == ["i1/i1-c3"]
    assert judge.calls == 3 * (1 + SECTION.orderings)
    written = json.loads((tmp_path / "o" / CALIBRATION_FILE).read_text("utf-8"))
    assert written["overall"]["kappa"]["value"] == pytest.approx(18 / 25)


def test_an_inconsistent_judge_is_seen_over_repeats(tmp_path: Path, instances: Path) -> None:
    report = calibrate_rubric(
        KeywordJudge(flaky=True), instances, labels_file(tmp_path), SECTION, deterministic=False
    )
    assert report.repeats == 3
    assert report.overall.repeat_consistency is not None
    assert report.overall.repeat_consistency < 1.0


def test_an_order_sensitive_judge_is_seen_over_orderings(tmp_path: Path, instances: Path) -> None:
    report = calibrate_rubric(
        KeywordJudge(order_sensitive=True),
        instances,
        labels_file(tmp_path),
        SECTION.model_copy(update={"orderings": 6}),
        deterministic=True,
    )
    assert report.overall.order_consistency is not None
    assert report.overall.order_consistency < 1.0


def test_an_unscored_verdict_is_counted_not_made_a_zero(tmp_path: Path, instances: Path) -> None:
    class Unscoring(KeywordJudge):
        async def judge(
            self, instance: Instance, answer: str
        ) -> tuple[list[Verdict], list[Verdict]]:
            specific, general = await super().judge(instance, answer)
            return [v.model_copy(update={"passed": None}) for v in specific[:1]] + specific[
                1:
            ], general

    report = calibrate_rubric(
        Unscoring(), instances, labels_file(tmp_path), SECTION, deterministic=True
    )
    assert report.overall.unscored == 2  # c1 on its two labelled answers
    assert report.overall.items == 5


@pytest.mark.slow
def test_the_offline_judge_on_the_shipped_labelled_set(tmp_path: Path) -> None:
    """The real offline judge end to end: every label judged, no repeats (deterministic), and
    criterion order changes nothing (it grades each criterion alone)."""
    from papergym.reward.offline import OfflineJudge

    fixture = Path(__file__).resolve().parents[2] / "examples" / "judge-labels"
    report = calibrate_rubric(
        OfflineJudge(),
        fixture / "instances.jsonl",
        fixture / "labels.jsonl",
        CalibrateSection(resamples=50, orderings=1),
        deterministic=True,
    )
    assert report.overall.items + report.overall.unscored == 100
    assert report.repeats == 1 and report.overall.repeat_consistency is None
    assert report.overall.order_consistency == pytest.approx(1.0)
    assert len(report.criteria) == 20
    assert {r.criterion for r in report.by_note} == {
        f"construction: {kind}"
        for kind in ("reference", "drop-half", "swap-half", "word-salad", "other-paper")
    }
