"""Structured output: peeling reasoning, fences and prose off an answer, validating, re-asking."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from papergym.llm.structured import (
    StructuredOutputError,
    first_json_value,
    guided_json_for,
    json_schema_for,
    parse_structured,
    repair_message,
    response_format_for,
    strip_code_fences,
    strip_reasoning,
)
from papergym.llm.types import LLMOutputError


class Score(BaseModel):
    score: int
    reason: str


class Items(BaseModel):
    items: list[int]


class Step(BaseModel):
    name: str = Field(description="What the step does.")
    title: str = "untitled"  # a property named like a schema keyword must survive
    kind: Literal["data", "model"] | None = None


class Plan(BaseModel):
    goal: str
    first: Step = Field(description="The step to start with.")
    steps: list[Step] = []
    backup: Step | None = None
    notes: dict[str, int] = {}


class Tree(BaseModel):
    label: str
    children: list[Tree] = []
    parent: Tree | None = Field(default=None, description="Where it hangs.")


# --- strip_reasoning -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<think>let me see {"score": 0}</think>\n{"score": 1}', '{"score": 1}'),
        ("<THINK>upper</Think>answer", "answer"),
        ("<thinking>a</thinking> b <reasoning>c</reasoning> d", "b  d"),
        ("<think>outer <think>inner</think> still outer</think>after", "after"),
        ("<think>still thinking when it stopped", ""),
        ("answer first <think>then an unclosed thought", "answer first"),
        ("reasoning whose tag was in the prompt</think>\n\nthe answer", "the answer"),
        ("no reasoning at all", "no reasoning at all"),
        ("< think >spaced</ think >ok", "ok"),
    ],
)
def test_strip_reasoning(text: str, expected: str) -> None:
    assert strip_reasoning(text) == expected


# --- strip_code_fences ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('```json\n{"a": 1}\n```', '{"a": 1}'),
        ("```\n[1, 2]\n```", "[1, 2]"),
        ('Here you go:\n```JSON\n{"a": 1}\n```\nHope it helps.', '{"a": 1}'),
        ('```json {"a": 1}```', '{"a": 1}'),
        ('```{"a": 1}```', '{"a": 1}'),
        ('```json\n{"a": 1}', '{"a": 1}'),  # never closed
        ('{"a": 1}', '{"a": 1}'),  # no fence: unchanged
        ('```json\n{"code": "```py\\nx\\n```"}\n```', '{"code": "```py\\nx\\n```"}'),
    ],
)
def test_strip_code_fences(text: str, expected: str) -> None:
    assert strip_code_fences(text) == expected


# --- first_json_value ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('Sure! {"a": 1} Let me know.', '{"a": 1}'),
        ('{"s": "a } brace and a { brace"} tail', '{"s": "a } brace and a { brace"}'),
        ('x {"s": "an \\"escaped\\" quote }"} y', '{"s": "an \\"escaped\\" quote }"}'),
        ('{"s": "a backslash at the end \\\\"} y', '{"s": "a backslash at the end \\\\"}'),
        ('list: [1, [2, 3], {"b": [4]}] done', '[1, [2, 3], {"b": [4]}]'),
        ('[see below] then {"a": 1}', '{"a": 1}'),  # balanced but not JSON: skipped
        ('a { lonely brace, then {"a": 1}', '{"a": 1}'),  # never closed: passed over
        ('{"a": [1, 2}', None),  # mismatched brackets
        ("no json here", None),
        ("", None),
    ],
)
def test_first_json_value(text: str, expected: str | None) -> None:
    assert first_json_value(text) == expected


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    data=st.dictionaries(st.text(), _json, max_size=5),
    before=st.text(alphabet=st.characters(blacklist_characters="{["), max_size=30),
    after=st.text(max_size=30),
    indent=st.sampled_from([None, 2]),
)
def test_first_json_value_round_trips(
    data: dict[str, Any], before: str, after: str, indent: int | None
) -> None:
    found = first_json_value(before + json.dumps(data, indent=indent) + after)
    assert found is not None
    assert json.loads(found) == data


# --- parse_structured ----------------------------------------------------------------------


def test_parse_plain_object() -> None:
    assert parse_structured('{"score": 3, "reason": "ok"}', Score) == Score(score=3, reason="ok")


def test_parse_through_reasoning_fences_and_prose() -> None:
    text = (
        '<think>Maybe {"score": 0, "reason": "draft"}? No.</think>\n'
        "Here is my verdict:\n"
        '```json\n{"score": 4, "reason": "uses a } brace"}\n```\n'
        "Thanks!"
    )
    assert parse_structured(text, Score) == Score(score=4, reason="uses a } brace")


def test_parse_skips_a_json_value_that_does_not_fit() -> None:
    text = 'Example: {"x": 1}. Answer: {"score": 2, "reason": "r"}'
    assert parse_structured(text, Score).score == 2


def test_bare_list_is_wrapped_into_the_only_list_field() -> None:
    assert parse_structured("[1, 2, 3]", Items) == Items(items=[1, 2, 3])
    assert parse_structured("```json\n[4]\n```", Items) == Items(items=[4])


def test_bare_list_is_not_wrapped_without_a_single_list_field() -> None:
    with pytest.raises(StructuredOutputError, match="top level"):
        parse_structured("[1, 2]", Score)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"score": 1, "reason": "r",}', "not valid JSON"),
        ('{"score": 1, "reason": "cut', "cut off"),
        ("I cannot answer that.", "no JSON object or array"),
        ("<think>never finished", "empty"),
        ("", "empty"),
    ],
)
def test_unusable_answers(text: str, message: str) -> None:
    with pytest.raises(StructuredOutputError, match=message) as caught:
        parse_structured(text, Score)
    assert caught.value.text == text
    assert isinstance(caught.value, LLMOutputError)
    assert caught.value.last_text == text


def test_pieces_of_a_cut_off_object_are_not_the_answer() -> None:
    with pytest.raises(StructuredOutputError, match="cut off"):
        parse_structured('{"items": [1, 2], "more": ', Items)


def test_schema_violation_names_the_field() -> None:
    with pytest.raises(StructuredOutputError) as caught:
        parse_structured('{"score": "high"}', Score)
    message = str(caught.value)
    assert "score: Input should be of type integer" in message
    assert '"high"' in message
    assert "reason: Field required" in message
    assert "2 errors" in message
    assert len(caught.value.errors) == 2


def test_nested_error_locations() -> None:
    text = '{"goal": "g", "first": {"name": "a"}, "steps": [{"name": "b"}, {"kind": "x"}]}'
    with pytest.raises(StructuredOutputError) as caught:
        parse_structured(text, Plan)
    assert "steps[1].name: Field required" in caught.value.errors
    assert "steps[1].kind" in str(caught.value)


def test_many_errors_are_summarised() -> None:
    text = json.dumps({"items": [str(i) + "x" for i in range(9)]})
    with pytest.raises(StructuredOutputError) as caught:
        parse_structured(text, Items)
    assert "and 4 more" in str(caught.value)
    assert len(caught.value.errors) == 9


# --- schemas and the repair prompt ---------------------------------------------------------


def _objects(node: Any) -> list[dict[str, Any]]:
    """Every schema node with properties, anywhere in the schema."""
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            found.append(node)
        for value in node.values():
            found += _objects(value)
    elif isinstance(node, list):
        for value in node:
            found += _objects(value)
    return found


def test_strict_schema_closes_every_object_and_requires_every_property() -> None:
    schema = json_schema_for(Plan)
    objects = _objects(schema)
    assert len(objects) >= 3  # Plan, Step in $defs, Step inlined for ``first``
    for node in objects:
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
    text = json.dumps(schema)
    assert '"default"' not in text
    assert schema["properties"]["first"]["description"] == "The step to start with."
    assert "$ref" not in schema["properties"]["first"]  # no keywords beside a $ref
    assert "title" in schema["$defs"]["Step"]["properties"]  # a property, not a keyword
    assert "title" not in schema  # the keyword itself is dropped
    assert schema["properties"]["notes"]["additionalProperties"] == {"type": "integer"}
    nullable = schema["properties"]["backup"]["anyOf"]
    assert {"type": "null"} in nullable


def test_strict_schema_handles_recursive_models() -> None:
    schema = json_schema_for(Tree)
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    for node in _objects(schema):
        assert node["additionalProperties"] is False


def test_strict_schema_is_a_fresh_copy() -> None:
    json_schema_for(Score)["properties"].clear()
    assert json_schema_for(Score)["properties"]


def test_valid_objects_validate_against_their_strict_schema_shape() -> None:
    plan = Plan(goal="g", first=Step(name="a"))
    dumped = plan.model_dump(mode="json")
    assert set(dumped) == set(json_schema_for(Plan)["required"])
    assert parse_structured(json.dumps(dumped), Plan) == plan


def test_response_format_and_guided_json() -> None:
    response_format = response_format_for(Plan)
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Plan"
    assert response_format["json_schema"]["strict"] is True
    assert response_format["json_schema"]["schema"] == json_schema_for(Plan)
    assert guided_json_for(Plan) == {"guided_json": json_schema_for(Plan)}


def test_response_format_name_is_sanitised() -> None:
    Named = type("Odd Name[int]", (BaseModel,), {"__annotations__": {"x": int}})
    assert response_format_for(Named)["json_schema"]["name"] == "Odd_Name_int_"


def test_repair_message() -> None:
    with pytest.raises(StructuredOutputError) as caught:
        parse_structured('{"score": "high", "reason": "r"}', Score)
    message = repair_message(caught.value, Score)
    assert message.role == "user"
    assert "score: Input should be of type integer" in message.content
    assert "JSON" in message.content
    compact = json.dumps(json_schema_for(Score), separators=(",", ":"))
    assert compact in message.content
    assert "$" not in message.content.replace("$defs", "").replace("$ref", "")
