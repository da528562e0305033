"""The per-criterion verdict helpers both LLM judges (audit leakage, reward rubric) share."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import Field, ValidationError

from papergym.audit.judge import judgement_schema as leakage_schema
from papergym.llm.structured import json_schema_for
from papergym.llm.types import LLMTransportError, SamplingParams
from papergym.llm.verdicts import (
    MAX_REASON_CHARS,
    Judgement,
    NumberedVerdict,
    failure_reason,
    in_order,
    judgement_schema,
    with_room_for,
    wrong_count_reason,
)
from papergym.reward.judge import judgement_schema as rubric_schema


class _Verdict(NumberedVerdict):
    reason: str = Field(description="Why.")
    verdict: Literal[0, 1]


class _Judgement(Judgement[_Verdict]):
    """Verdicts for a test."""


def _v(n: int, verdict: Literal[0, 1] = 1) -> _Verdict:
    return _Verdict(criterion_id=n, reason=f"r{n}", verdict=verdict)


def test_in_order_sorts_by_id_and_refuses_a_wrong_count_or_repeated_id() -> None:
    assert [v.criterion_id for v in in_order([_v(3), _v(1), _v(2)], 3) or []] == [1, 2, 3]
    assert in_order([_v(1), _v(2)], 3) is None  # one missing
    assert in_order([_v(1), _v(1), _v(2)], 3) is None  # right count, one id twice
    assert in_order([_v(1), _v(2), _v(4)], 3) is None  # an id out of range
    assert in_order([], 0) == []


def test_schema_for_k_items_demands_exactly_one_per_id_and_is_kept() -> None:
    schema = judgement_schema(_Judgement, 2)
    assert schema is judgement_schema(_Judgement, 2)
    assert schema is not judgement_schema(_Judgement, 3)
    assert schema.__name__ == "_Judgement"
    ok = {"verdicts": [{"criterion_id": n, "reason": "r", "verdict": 0} for n in (2, 1)]}
    assert len(schema.model_validate(ok).verdicts) == 2
    with pytest.raises(ValidationError):
        schema.model_validate({"verdicts": [{"criterion_id": 1, "reason": "r", "verdict": 0}] * 2})
    with pytest.raises(ValidationError):  # extra keys are refused, as the base forbids
        schema.model_validate(
            {"verdicts": [{"criterion_id": n, "reason": "r", "verdict": 0, "x": 1} for n in (1, 2)]}
        )


@pytest.mark.parametrize(
    ("schema", "fields"),
    [
        (leakage_schema, ["criterion_id", "reason", "inferable"]),
        # the rubric judge quotes the answer for a met criterion (issue 23), before its verdict
        (rubric_schema, ["criterion_id", "reason", "quote", "verdict"]),
    ],
)
def test_both_judges_ask_for_id_then_reason_then_their_own_verdict(
    schema: object, fields: list[str]
) -> None:
    """The shared base keeps each judge's wire format: the reason before the verdict."""
    sent = json_schema_for(schema(4))  # type: ignore[operator]
    item = next(iter(sent["$defs"].values()))
    assert list(item["properties"]) == fields
    assert item["additionalProperties"] is False
    assert (
        sent["properties"]["verdicts"]["minItems"]
        == 4
        == sent["properties"]["verdicts"]["maxItems"]
    )


def test_failure_reason_names_the_error_on_one_clipped_line() -> None:
    reason = failure_reason(LLMTransportError("endpoint down\n  after 3 tries " + "x" * 1000))
    assert reason.startswith("judge failed: LLMTransportError: endpoint down after 3 tries x")
    assert "\n" not in reason
    assert len(reason) == len("judge failed: LLMTransportError: ") + MAX_REASON_CHARS
    assert reason.endswith("…")
    assert wrong_count_reason(5) == "judge did not return 5 verdicts"


def test_with_room_for_raises_max_tokens_but_never_lowers_it() -> None:
    small = SamplingParams(max_tokens=100, temperature=0.3)
    raised = with_room_for(small, 10, 120)
    assert raised.max_tokens == 120 * 10 + 256 and raised.temperature == 0.3
    assert with_room_for(SamplingParams(max_tokens=50_000), 10, 120).max_tokens == 50_000
