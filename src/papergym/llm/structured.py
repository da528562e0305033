"""Turning a model's text into a validated object, and telling the model what to send.

Models wrap JSON in reasoning blocks, code fences and prose, and sometimes return a bare list
where an object was asked for. These pure functions peel all of that off before validating, and
word the error so it can be sent back to the model in a repair prompt.

An answer is validated twice: against exactly the JSON schema sent to the server (every
property required, no extra property, types, enums, item counts), then by the pydantic model
(its own validators). The schema check comes first because a pydantic model is looser: a field
with a default accepts a missing key, and unknown keys are ignored, so ``{}`` would pass.
"""

from __future__ import annotations

import collections.abc
import json
import re
import types
from collections.abc import Iterator
from functools import cache
from importlib import resources
from itertools import chain
from string import Template
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field, RootModel, ValidationError, create_model, model_validator

from papergym.llm.types import JSONSchema, LLMOutputError, Message

ModelT = TypeVar("ModelT", bound=BaseModel)

MAX_REPORTED_ERRORS = 5
"""How many validation errors go into a message: enough to fix, few enough to read."""

MAX_CANDIDATES = 16
"""How many JSON values in one answer are tried against the schema before giving up."""


class StructuredOutputError(LLMOutputError):
    """The text holds no JSON value that validates against the schema.

    ``str(error)`` is short and human-readable, meant to be shown to the model when re-asking;
    ``text`` is the answer that failed.
    """

    def __init__(self, message: str, text: str, errors: list[str] | None = None) -> None:
        super().__init__(message, last_text=text, errors=errors)
        self.text = text


# --- peeling the answer ---------------------------------------------------------------------

_REASONING_TAG = re.compile(r"<\s*(/?)\s*(?:think|thinking|reasoning)\s*>", re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """The answer without ``<think>``/``<thinking>``/``<reasoning>`` blocks, stripped.

    Blocks may nest. An opening tag that is never closed means the model was still thinking
    when it stopped, so everything after it is dropped (a text that starts that way is empty).
    A closing tag with no opening one means the chat template opened the block in the prompt,
    so everything before it is reasoning and is dropped too.
    """
    kept: list[str] = []
    depth = 0
    position = 0
    for tag in _REASONING_TAG.finditer(text):
        closing = bool(tag.group(1))
        if depth == 0:
            kept.append(text[position : tag.start()])
        if not closing:
            depth += 1
        elif depth > 0:
            depth -= 1
        else:
            kept = []  # an orphan closing tag: all before it was reasoning
        position = tag.end()
    if depth == 0:
        kept.append(text[position:])
    return "".join(kept).strip()


def split_reasoning(text: str) -> tuple[str, int]:
    """``text`` without its reasoning blocks (as :func:`strip_reasoning`), and how many
    characters of reasoning went; a text without a reasoning tag comes back unchanged."""
    if not _REASONING_TAG.search(text):
        return text, 0
    answer = strip_reasoning(text)
    return answer, len(text.strip()) - len(answer)


_FENCE = re.compile(
    r"```[ \t]*(?:[A-Za-z][\w+.-]*[ \t]*(?:\r?\n|(?=[\[{]))|\r?\n)?"  # opening, language
    r"(.*?)"
    r"(?:^[ \t]*```|```[ \t]*$|\Z)",  # closing: at a line's start or end, so not inside a string
    re.DOTALL | re.MULTILINE,
)


def strip_code_fences(text: str) -> str:
    """The body of the first fenced code block (any language tag), or ``text`` when none.

    The closing fence must start or end a line, so backticks inside a JSON string do not end
    the block; one that is never closed runs to the end of the text (models forget it).
    """
    match = _FENCE.search(text)
    return match.group(1).strip() if match else text


_OPENER = re.compile(r"[\[{]")
_SPECIAL = re.compile(r'[\[\]{}"]')
_IN_STRING = re.compile(r'["\\]')
_CLOSER = {"{": "}", "[": "]"}


def _balanced_end(text: str, start: int) -> int | None:
    """The end of the bracketed value opened at ``start``, skipping over JSON strings."""
    expected = [_CLOSER[text[start]]]
    position = start + 1
    while True:
        match = _SPECIAL.search(text, position)
        if match is None:
            return None
        char = match.group()
        position = match.end()
        if char == '"':  # skip the string, honouring backslash escapes
            while True:
                inner = _IN_STRING.search(text, position)
                if inner is None:
                    return None
                position = inner.end() + (1 if inner.group() == "\\" else 0)
                if inner.group() == '"':
                    break
        elif char in _CLOSER:
            expected.append(_CLOSER[char])
        elif char != expected.pop():
            return None
        elif not expected:
            return position


def _balanced_spans(text: str) -> Iterator[tuple[int, int]]:
    """Every balanced ``{…}``/``[…]`` span as (start, end), by start (nested ones too)."""
    position = 0
    while (match := _OPENER.search(text, position)) is not None:
        end = _balanced_end(text, match.start())
        if end is not None:
            yield match.start(), end
        position = match.start() + 1


def _json_values(text: str) -> Iterator[tuple[str, Any]]:
    """The JSON objects and arrays in ``text``, in order, each with its parsed value.

    The search never looks inside a balanced span, valid or not: pieces of a broken object are
    not the answer. A bracket that never closes is passed over (it may be prose).
    """
    done = 0
    for start, end in _balanced_spans(text):
        if start < done:
            continue
        done = end
        try:
            value = json.loads(text[start:end])
        except ValueError:
            continue
        yield text[start:end], value


def first_json_value(text: str) -> str | None:
    """The first JSON object or array in ``text`` (prose around it ignored), or None."""
    return next((span for span, _ in _json_values(text)), None)


# --- validating ------------------------------------------------------------------------------


def _is_collection(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _is_collection(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return any(_is_collection(arg) for arg in get_args(annotation) if arg is not type(None))
    return (origin or annotation) in (
        list,
        tuple,
        set,
        frozenset,
        collections.abc.Sequence,
        collections.abc.MutableSequence,
        collections.abc.Set,
    )


def _list_field_name(schema: type[BaseModel]) -> str | None:
    """The key to wrap a bare list under: the schema's only list field, if it has exactly one."""
    if issubclass(schema, RootModel):
        return None
    names = [
        field.alias or name
        for name, field in schema.model_fields.items()
        if _is_collection(field.annotation)
    ]
    return names[0] if len(names) == 1 else None


def _location(loc: tuple[int | str, ...]) -> str:
    parts = [f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc]
    return "".join(parts).lstrip(".") or "(top level)"


def _brief(value: Any, limit: int = 60) -> str:
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _validation_lines(error: ValidationError) -> list[str]:
    lines = []
    for item in error.errors(include_url=False):
        line = f"{_location(item['loc'])}: {item['msg']}"
        if item["type"] != "missing":
            line += f" (got {_brief(item['input'])})"
        lines.append(line)
    return lines


def _schema_lines(value: Any, schema: type[BaseModel]) -> list[str]:
    """What in ``value`` breaks the JSON schema sent for ``schema`` (empty when it conforms)."""
    lines = []
    named: set[tuple[str, tuple[int | str, ...]]] = set()
    for error in _validator(schema).iter_errors(value):
        where = tuple(error.absolute_path)
        kind, expected, got = error.validator, error.validator_value, error.instance
        # Missing and extra fields are named where they belong, once per object.
        if kind in ("required", "additionalProperties") and isinstance(got, dict):
            if (str(kind), where) in named:
                continue
            named.add((str(kind), where))
            if kind == "required":
                missing = [name for name in expected if name not in got]
                lines += [f"{_location((*where, name))}: Field required" for name in missing]
            else:
                allowed = error.schema.get("properties", {}) if expected is False else {}
                extra = [name for name in got if name not in allowed]
                lines += [
                    f"{_location((*where, name))}: Extra field not permitted" for name in extra
                ]
            continue
        lines.append(
            f"{_location(where)}: {_schema_message(str(kind), expected, got, error.message)}"
        )
    return lines


def _schema_message(kind: str, expected: Any, got: Any, fallback: str) -> str:
    """A JSON-schema error worded for a model to fix, with a short view of what it sent."""
    if kind == "type":
        wanted = " or ".join(expected) if isinstance(expected, list) else str(expected)
        return f"Input should be of type {wanted} (got {_brief(got)})"
    if kind == "enum":
        return f"Input should be one of {_brief(expected)} (got {_brief(got)})"
    if kind == "const":
        return f"Input should be {_brief(expected)} (got {_brief(got)})"
    if kind in ("minItems", "maxItems") and isinstance(got, list):
        bound = "at least" if kind == "minItems" else "at most"
        return f"List should have {bound} {expected} item(s), not {len(got)}"
    if kind in ("anyOf", "oneOf"):
        return f"Input matches none of the allowed forms (got {_brief(got)})"
    return fallback if len(fallback) <= 200 else fallback[:199] + "…"


def _error(summary: str, lines: list[str], text: str) -> StructuredOutputError:
    shown = [f"- {line}" for line in lines[:MAX_REPORTED_ERRORS]]
    if len(lines) > MAX_REPORTED_ERRORS:
        shown.append(f"- … and {len(lines) - MAX_REPORTED_ERRORS} more")
    return StructuredOutputError("\n".join([summary, *shown]), text, errors=lines or [summary])


def _whole(text: str) -> Iterator[tuple[str, Any]]:
    """``text`` itself, when all of it is one JSON value."""
    try:
        value = json.loads(text)
    except ValueError:
        return
    yield text, value


def _candidates(answer: str) -> Iterator[tuple[str, Any]]:
    """Parsed JSON values worth validating: the whole answer, the fenced body, then any inside."""
    unfenced = strip_code_fences(answer)
    seen: set[str] = set()
    for span, value in chain(
        _whole(answer), _whole(unfenced), _json_values(unfenced), _json_values(answer)
    ):
        if span.strip() not in seen:
            seen.add(span.strip())
            yield span, value


def _broken_start(unfenced: str) -> str | None:
    """The answer when it opens like JSON but is not one complete, valid value at its start."""
    if unfenced[:1] not in ("{", "["):
        return None
    end = _balanced_end(unfenced, 0)
    if end is None:
        return unfenced
    try:
        json.loads(unfenced[:end])
    except ValueError:
        return unfenced[:end]
    return None


def _no_json_error(answer: str, text: str) -> StructuredOutputError:
    unfenced = strip_code_fences(answer)
    broken = _broken_start(unfenced)
    if broken is None:
        span = next(_balanced_spans(unfenced), None)
        broken = unfenced[span[0] : span[1]] if span else None
    if broken is not None:
        try:
            json.loads(broken)
        except json.JSONDecodeError as error:
            where = f"line {error.lineno} column {error.colno}"
            cut = " (it looks cut off)" if _balanced_end(broken, 0) is None else ""
            return _error(f"The answer is not valid JSON{cut}: {error.msg} at {where}.", [], text)
    return _error("The answer contains no JSON object or array.", [], text)


def parse_structured(text: str, schema: type[ModelT]) -> ModelT:
    """The first JSON value in ``text`` that validates as ``schema``.

    Reasoning blocks, code fences and prose are ignored; a bare list is wrapped when the schema
    has exactly one list field. Raises :class:`StructuredOutputError`, worded for a repair prompt.
    """
    answer = strip_reasoning(text)
    if not answer:
        raise _error("The answer is empty (nothing after the reasoning).", [], text)
    unfenced = strip_code_fences(answer)
    if unfenced[:1] in ("{", "[") and _balanced_end(unfenced, 0) is None:
        raise _no_json_error(answer, text)  # cut off: values inside it are only pieces
    wrap_key = _list_field_name(schema)
    first_failure: list[str] | None = None
    for tried, (_, value) in enumerate(_candidates(answer)):
        if tried == MAX_CANDIDATES:
            break
        if isinstance(value, list) and wrap_key is not None:
            value = {wrap_key: value}
        problems = _schema_lines(value, schema)
        if problems:
            first_failure = first_failure or problems
            continue
        try:
            return schema.model_validate(value)
        except ValidationError as failure:
            first_failure = first_failure or _validation_lines(failure)
    if first_failure is None:
        raise _no_json_error(answer, text)
    lines = first_failure
    count = f"{len(lines)} error{'s' if len(lines) != 1 else ''}"
    raise _error(f"The JSON does not match the {schema.__name__} schema ({count}):", lines, text)


# --- telling the model what to send ---------------------------------------------------------

_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_ONES = ("items", "additionalProperties", "not", "contains", "if", "then", "else")
_DROPPED = ("title", "default")


def _resolve(root: JSONSchema, ref: str) -> JSONSchema | None:
    node: Any = root
    for part in ref.removeprefix("#/").split("/"):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, dict) else None


def _strict(node: Any, root: JSONSchema, inlining: frozenset[str]) -> Any:
    """One schema node made strict: closed objects, every property required, no defaults.

    ``{"$ref": …, "description": …}`` is inlined, since strict mode refuses keywords beside a
    ``$ref`` (unless the ref is recursive, where the extra keywords are dropped instead).
    """
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and len(node) > 1:
        target = _resolve(root, ref)
        if target is None or ref in inlining:
            return {"$ref": ref}
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        return _strict({**target, **siblings}, root, inlining | {ref})
    out: JSONSchema = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _strict(sub, root, inlining) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_strict(sub, root, inlining) for sub in value]
        elif key in _SCHEMA_ONES:
            out[key] = _strict(value, root, inlining)
        else:
            out[key] = json.loads(json.dumps(value))  # a deep copy of plain JSON
    if isinstance(out.get("properties"), dict):
        out["additionalProperties"] = False
        out["required"] = list(out["properties"])
    return out


@cache
def _strict_schema_text(schema: type[BaseModel]) -> str:
    raw = schema.model_json_schema()
    return json.dumps(_strict(raw, raw, frozenset()), ensure_ascii=False)


@cache
def _validator(schema: type[BaseModel]) -> Draft202012Validator:
    """A validator for exactly the schema :func:`json_schema_for` sends (pydantic's dialect)."""
    return Draft202012Validator(json.loads(_strict_schema_text(schema)))


def json_schema_for(schema: type[BaseModel]) -> JSONSchema:
    """``schema``'s JSON schema in the strict form OpenAI-style ``response_format`` accepts.

    Objects with properties get ``additionalProperties: false`` and list every property as
    required (optional fields stay nullable); titles and defaults are dropped. Free-form
    ``dict`` fields stay open: strict mode cannot express them.
    """
    result: JSONSchema = json.loads(_strict_schema_text(schema))
    return result


def response_format_for(schema: type[BaseModel]) -> JSONSchema:
    """The OpenAI-style ``response_format`` asking for JSON that matches ``schema``."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "output"
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": json_schema_for(schema), "strict": True},
    }


def guided_json_for(schema: type[BaseModel]) -> JSONSchema:
    """The extra request body that makes vLLM before 0.12 decode JSON matching ``schema``."""
    return {"guided_json": json_schema_for(schema)}


def structured_outputs_for(schema: type[BaseModel]) -> JSONSchema:
    """The extra request body for vLLM 0.12 and later, which replaced ``guided_json``."""
    return {"structured_outputs": {"json": json_schema_for(schema)}}


def _repair_template() -> Template:
    path = resources.files("papergym.llm").joinpath("prompts", "repair.md")
    return Template(path.read_text(encoding="utf-8"))


def repair_message(error: StructuredOutputError, schema: type[BaseModel]) -> Message:
    """The user message that re-asks after an invalid answer: what was wrong, what to send."""
    compact = json.dumps(json_schema_for(schema), ensure_ascii=False, separators=(",", ":"))
    content = _repair_template().substitute(error=str(error), schema=compact)
    return Message(role="user", content=content.strip())


def exactly_one_per_id(base: type[ModelT], count: int, field: str = "verdicts") -> type[ModelT]:
    """``base`` whose list ``field`` must hold exactly one item per ``criterion_id`` 1..count.

    Judges ask for one verdict per numbered criterion. Putting the count in the schema lets
    structured decoding enforce it, and a model that ignores it gets a precise repair message.
    The returned class keeps ``base``'s name, so the JSON schema (and the cache key) are stable.
    """
    annotation = base.model_fields[field].annotation

    def check(model: ModelT) -> ModelT:
        ids = sorted(item.criterion_id for item in getattr(model, field))
        if ids != list(range(1, count + 1)):
            raise ValueError(
                f"expected exactly one verdict for each criterion_id 1..{count}, got ids {ids}"
            )
        return model

    constrained = Annotated[annotation, Field(min_length=count, max_length=count)]  # type: ignore[valid-type]
    return create_model(  # type: ignore[call-overload, no-any-return]
        base.__name__,
        __base__=base,
        __validators__={"one_per_id": model_validator(mode="after")(check)},
        **{field: (constrained, ...)},
    )
