"""A small OpenAI-compatible chat-completions server for tests and benchmarks.

PaperGym's LLM layer talks to OpenAI-compatible servers (vLLM, SGLang, Ollama). Mocking the HTTP
client would hide the bugs that matter most there — connection pooling, timeouts, retries,
concurrency bounds, parsing of half-broken model output — so the tests talk to this real HTTP
server on 127.0.0.1 instead.

It is a minimal HTTP/1.1 server (keep-alive, ``Content-Length`` and chunked bodies,
``Expect: 100-continue``) on an asyncio loop in a background thread, built on the standard library
only so that importing :mod:`papergym.testing` adds no dependency. One loop serves hundreds of
concurrent connections cheaply, and injected latency is an ``asyncio.sleep`` that never blocks
other requests.

Answers are deterministic given the request: with a JSON schema (``response_format`` of type
``json_schema``, or vLLM's ``guided_json``) the content is a JSON value generated from the schema,
otherwise a short text. Faults (status errors, hangs, malformed or wrapped content, truncation,
scripted content) are injected per request from a queue of :class:`Behaviour` values, falling back
to a default behaviour; both can be changed while the server runs.

Run it standalone with ``python -m papergym.testing.openai_server --port 8000 --latency 0.2``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import http
import json
import math
import random
import signal
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import FrameType, TracebackType
from typing import Any, Literal, cast, get_args

JSONDict = dict[str, Any]

Mode = Literal["ok", "error", "hang", "malformed", "truncated", "think", "fence", "prose"]
"""What the server does with one request; see :class:`Behaviour`."""

MODES: tuple[str, ...] = get_args(Mode)


@dataclass(frozen=True)
class RawResponse:
    """An exact HTTP answer: a responder returns one to bypass the chat-completion envelope.

    ``body`` is serialised as JSON unless it is ``bytes``, which are sent verbatim (handy to test a
    client against a broken response body).
    """

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


Responder = Callable[[JSONDict], "str | JSONDict | RawResponse"]
"""Scripts the content of an answer from the request body.

A ``str`` is the message content verbatim, a ``dict`` is serialised as JSON content, and a
:class:`RawResponse` replaces the whole HTTP answer. It is called once per request (all ``n``
choices share its content) on the server's loop thread, so it must not block.
"""


@dataclass(frozen=True)
class Behaviour:
    """How the server answers one request.

    ``mode`` is one of:

    * ``ok`` — a normal answer;
    * ``error`` — status ``status`` with an OpenAI-style error body (and ``Retry-After`` when
      ``retry_after`` is set, as rate limiters do);
    * ``hang`` — no answer until the client disconnects (or the server's ``hang_seconds`` pass);
    * ``malformed`` — content that is not valid JSON (the JSON answer cut before its closing
      bracket, ending in a comma);
    * ``truncated`` — the first half of the content with ``finish_reason: "length"``;
    * ``think`` — ``<think>…</think>`` reasoning before the content;
    * ``fence`` — the content inside a ```` ```json ```` fence;
    * ``prose`` — a sentence of prose before the content.

    ``latency`` overrides the server's latency for this request; ``responder`` overrides the
    server's responder (content-shaping modes still apply to what it returns).
    """

    mode: Mode = "ok"
    status: int = 200
    retry_after: float | None = None
    latency: float | None = None
    responder: Responder | None = None

    @classmethod
    def error(cls, status: int = 500, *, retry_after: float | None = None) -> Behaviour:
        """Answer ``status`` (429, 500, 503...) instead of a completion."""
        return cls(mode="error", status=status, retry_after=retry_after)

    @classmethod
    def rate_limited(cls, retry_after: float = 0.0) -> Behaviour:
        """Answer 429 with ``Retry-After`` (0 by default so that retrying clients stay fast)."""
        return cls.error(429, retry_after=retry_after)

    @classmethod
    def hang(cls) -> Behaviour:
        """Never answer: the client must time out."""
        return cls(mode="hang")

    @classmethod
    def respond(cls, responder: Responder) -> Behaviour:
        """Answer with the content ``responder`` scripts for this one request."""
        return cls(responder=responder)

    @classmethod
    def parse(cls, spec: Behaviour | str) -> Behaviour:
        """Read a behaviour from a short spec: a mode name (``"hang"``) or a status (``"429"``).

        Strings keep scripts short in tests and make behaviours expressible on the command line.
        """
        if isinstance(spec, Behaviour):
            return spec
        text = spec.strip().lower()
        if text.isdigit():
            status = int(text)
            return cls.rate_limited() if status == 429 else cls.error(status)
        if text == "error":
            return cls.error()
        if text in MODES:
            return cls(mode=cast(Mode, text))
        raise ValueError(f"unknown behaviour {spec!r}: expected a status code or one of {MODES}")


# --------------------------------------------------------------------------------------------
# JSON values generated from a JSON schema
# --------------------------------------------------------------------------------------------

_SOFT_DEPTH = 6
"""Below this depth only required properties and ``minItems`` items are generated, so that
recursive schemas (a tree of nodes) end."""

_HARD_DEPTH = 40
"""Past this depth generation gives up with ``null`` rather than overflow the stack."""

_WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "sparse",
    "attention",
    "baseline",
    "token",
    "layer",
    "method",
    "result",
    "dataset",
)

_FORMAT_SAMPLES = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "12:00:00",
    "duration": "P1D",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "uri": "https://example.com/item",
    "url": "https://example.com/item",
    "iri": "https://example.com/item",
    "uri-reference": "/item",
    "hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
}


class SchemaSampler:
    """Generates one JSON value that satisfies a (practical subset of a) JSON schema.

    Covers what pydantic and OpenAI-style structured outputs emit: ``$ref``/``$defs``,
    ``allOf``, ``anyOf``/``oneOf`` (first non-null branch), ``enum``/``const``, ``type`` arrays,
    objects (every property, ``required``, ``additionalProperties``, ``minProperties``), arrays
    (``items``, ``prefixItems``, ``minItems``/``maxItems``, ``uniqueItems``), strings
    (``minLength``/``maxLength``, common ``format`` values), integers and numbers (inclusive and
    exclusive bounds, ``multipleOf``) and booleans. ``pattern`` is not honoured.
    """

    def __init__(self, root: Any, rng: random.Random) -> None:
        self._root = root
        self._rng = rng

    def sample(self, schema: Any, depth: int = 0) -> Any:
        """Return a value valid against ``schema`` (resolved against the root's definitions)."""
        if depth > _HARD_DEPTH or schema is False:
            return None
        if not isinstance(schema, dict):
            return self._string({})
        schema = self._resolve(schema)
        if depth >= _SOFT_DEPTH and self._allows_null(schema):
            return None  # ends recursion through Optional fields that strict schemas require
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self._enum(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                return self._first_branch(schema[key], depth)
        return self._by_type(schema, depth)

    def _by_type(self, schema: JSONDict, depth: int) -> Any:
        kind = _type_of(schema)
        if kind == "object":
            return self._object(schema, depth)
        if kind == "array":
            return self._array(schema, depth)
        if kind == "integer":
            return self._integer(schema)
        if kind == "number":
            return self._number(schema)
        if kind == "boolean":
            return self._rng.random() < 0.5
        if kind == "null":
            return None
        return self._string(schema)

    # -- references and combinators ----------------------------------------------------------

    def _resolve(self, schema: JSONDict) -> JSONDict:
        """Inline ``$ref`` (keeping sibling keywords) and merge ``allOf`` into one schema."""
        for _ in range(_HARD_DEPTH):
            ref = schema.get("$ref")
            if not isinstance(ref, str):
                break
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**self._lookup(ref), **siblings}
        parts = schema.get("allOf")
        if isinstance(parts, list):
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in parts:
                if isinstance(part, dict):
                    merged = _merge_schemas(merged, self._resolve(part))
            schema = merged
        return schema

    def _lookup(self, ref: str) -> JSONDict:
        """Follow a local JSON pointer such as ``#/$defs/Step``; unknown refs mean 'anything'."""
        if not ref.startswith("#"):
            return {}
        node: Any = self._root
        for raw in ref[1:].split("/"):
            if not raw:
                continue
            key = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return {}
        return node if isinstance(node, dict) else {}

    def _first_branch(self, branches: list[Any], depth: int) -> Any:
        """Pick the first branch that is not ``null``: the useful value of an ``Optional``."""
        for branch in branches:
            if not (isinstance(branch, dict) and _is_null_schema(self._resolve(branch))):
                return self.sample(branch, depth)
        return None

    def _allows_null(self, schema: JSONDict) -> bool:
        declared = schema.get("type")
        if isinstance(declared, list) and "null" in declared:
            return True
        if isinstance(schema.get("enum"), list) and None in schema["enum"]:
            return True
        branches = [*(schema.get("anyOf") or []), *(schema.get("oneOf") or [])]
        return any(isinstance(b, dict) and _is_null_schema(self._resolve(b)) for b in branches)

    def _enum(self, values: Any) -> Any:
        if not isinstance(values, list) or not values:
            return None
        non_null = [v for v in values if v is not None]
        return self._rng.choice(non_null) if non_null else None

    # -- containers ----------------------------------------------------------------------------

    def _object(self, schema: JSONDict, depth: int) -> JSONDict:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = [r for r in schema.get("required") or [] if isinstance(r, str)]
        shallow = depth >= _SOFT_DEPTH
        result: JSONDict = {}
        for name, sub in properties.items():
            if not shallow or name in required:
                result[name] = self.sample(sub, depth + 1)
        extra = schema.get("additionalProperties")
        extra_schema = extra if isinstance(extra, dict) else {}
        for name in required:
            if name not in result:
                result[name] = self.sample(extra_schema, depth + 1)
        wanted = _int_or_none(schema.get("minProperties")) or 0
        if not properties and isinstance(extra, dict) and not shallow:
            wanted = max(wanted, 1)
        counter = 0
        while len(result) < wanted and extra is not False:
            counter += 1
            result.setdefault(f"key_{counter}", self.sample(extra_schema, depth + 1))
        return result

    def _array(self, schema: JSONDict, depth: int) -> list[Any]:
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        count = _item_count(schema, len(prefix), shallow=depth >= _SOFT_DEPTH)
        items = schema.get("items", {})
        unique = bool(schema.get("uniqueItems"))
        values: list[Any] = []
        seen: set[str] = set()
        for _ in range(count * 8):  # retries only matter for uniqueItems
            index = len(values)
            if index >= count or (index >= len(prefix) and items is False):
                break
            value = self.sample(prefix[index] if index < len(prefix) else items, depth + 1)
            key = json.dumps(value, sort_keys=True)
            if not (unique and key in seen):
                seen.add(key)
                values.append(value)
        return values

    # -- scalars -------------------------------------------------------------------------------

    def _string(self, schema: JSONDict) -> str:
        fmt = schema.get("format")
        if fmt == "uuid":
            text = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
        elif isinstance(fmt, str) and fmt in _FORMAT_SAMPLES:
            text = _FORMAT_SAMPLES[fmt]
        else:
            text = " ".join(self._rng.sample(_WORDS, 2))
        low = _int_or_none(schema.get("minLength")) or 0
        high = _int_or_none(schema.get("maxLength"))
        if len(text) < low:
            text += "x" * (low - len(text))
        return text if high is None else text[:high]

    def _integer(self, schema: JSONDict) -> int:
        low, high = _integer_bounds(schema)
        step = schema.get("multipleOf")
        if isinstance(step, int) and not isinstance(step, bool) and step > 0:
            first = math.ceil(low / step) * step
            if first > high:
                return first
            return first + step * self._rng.randint(0, (high - first) // step)
        return self._rng.randint(low, high) if low <= high else low

    def _number(self, schema: JSONDict) -> float | int:
        if isinstance(schema.get("multipleOf"), int):
            return self._integer(schema)
        low, high, strict_low, strict_high = _number_bounds(schema)
        step = schema.get("multipleOf")
        if isinstance(step, float) and step > 0:
            k_low = math.floor(low / step) + 1 if strict_low else math.ceil(low / step)
            k_high = math.ceil(high / step) - 1 if strict_high else math.floor(high / step)
            k = self._rng.randint(k_low, k_high) if k_low <= k_high else k_low
            return round(k * step, 10)
        value = round(self._rng.uniform(low, high), 2)
        too_low = value < low or (strict_low and value <= low)
        too_high = value > high or (strict_high and value >= high)
        return (low + high) / 2 if too_low or too_high else value


def sample_from_schema(schema: Any, seed: int = 0) -> Any:
    """Return a JSON value valid against ``schema``, the same one for the same ``seed``."""
    return SchemaSampler(schema, random.Random(seed)).sample(schema)


def _type_of(schema: JSONDict) -> str:
    """The JSON type to generate: the first non-null ``type``, else inferred from keywords."""
    declared = schema.get("type")
    if isinstance(declared, list):
        kinds = [t for t in declared if isinstance(t, str) and t != "null"]
        return kinds[0] if kinds else "null"
    if isinstance(declared, str):
        return declared
    if any(k in schema for k in ("properties", "additionalProperties", "required")):
        return "object"
    if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems")):
        return "array"
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        return "number"
    return "string"


def _is_null_schema(schema: JSONDict) -> bool:
    declared = schema.get("type")
    return (
        declared == "null"
        or declared == ["null"]
        or ("const" in schema and schema["const"] is None)
        or schema.get("enum") == [None]
    )


def _merge_schemas(base: JSONDict, extra: JSONDict) -> JSONDict:
    """Merge two ``allOf`` parts: properties and required lists are united, the rest kept."""
    merged = dict(base)
    for key, value in extra.items():
        if key == "properties" and isinstance(value, dict):
            merged["properties"] = {**(merged.get("properties") or {}), **value}
        elif key == "required" and isinstance(value, list):
            old = list(merged.get("required") or [])
            merged["required"] = old + [r for r in value if r not in old]
        else:
            merged.setdefault(key, value)
    return merged


def _number_or_none(value: Any) -> float | None:
    """``value`` as a float when it is a JSON number (booleans are not), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _int_or_none(value: Any) -> int | None:
    number = _number_or_none(value)
    return None if number is None else int(number)


def _item_count(schema: JSONDict, prefix: int, *, shallow: bool) -> int:
    """``minItems``, or 1 when it is 0 (an empty list tests little), or every tuple position
    (``prefixItems``), capped by ``maxItems``."""
    low = _int_or_none(schema.get("minItems")) or 0
    count = low if shallow else max(low, 1, prefix)
    high = _int_or_none(schema.get("maxItems"))
    return count if high is None else max(0, min(count, high))


def _bounds(schema: JSONDict) -> tuple[float | None, bool, float | None, bool]:
    """``(low, low_is_strict, high, high_is_strict)`` from draft-4 and later bound keywords."""
    low = _number_or_none(schema.get("minimum"))
    high = _number_or_none(schema.get("maximum"))
    ex_min, ex_max = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    low_strict = ex_min is True and low is not None
    high_strict = ex_max is True and high is not None
    ex_low, ex_high = _number_or_none(ex_min), _number_or_none(ex_max)
    if ex_low is not None and (low is None or ex_low >= low):
        low, low_strict = ex_low, True
    if ex_high is not None and (high is None or ex_high <= high):
        high, high_strict = ex_high, True
    return low, low_strict, high, high_strict


def _integer_bounds(schema: JSONDict) -> tuple[int, int]:
    low, low_strict, high, high_strict = _bounds(schema)
    int_low = None if low is None else math.floor(low) + 1 if low_strict else math.ceil(low)
    int_high = None if high is None else math.ceil(high) - 1 if high_strict else math.floor(high)
    return _default_range(int_low, int_high)


def _number_bounds(schema: JSONDict) -> tuple[float, float, bool, bool]:
    """``(low, high, low_is_strict, high_is_strict)`` for a ``number`` schema."""
    low, low_strict, high, high_strict = _bounds(schema)
    default_low, default_high = _default_range(low, high)
    return (
        float(default_low) if low is None else low,
        float(default_high) if high is None else high,
        low_strict,
        high_strict,
    )


def _default_range(low: float | None, high: float | None) -> tuple[int, int]:
    """Fill missing bounds so that the range spans 100 around what is given (0–100 by default)."""
    if low is None and high is None:
        return 0, 100
    if low is None:
        assert high is not None
        return math.floor(high) - 100, math.floor(high)
    if high is None:
        return math.ceil(low), math.ceil(low) + 100
    return math.ceil(low), math.floor(high)


# --------------------------------------------------------------------------------------------
# Chat completions
# --------------------------------------------------------------------------------------------

_JSON_OBJECT_SCHEMA: JSONDict = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}


def extract_schema(request: JSONDict) -> Any | None:
    """The JSON schema the request asks the answer to follow, or ``None`` for free text.

    Reads OpenAI's ``response_format`` (``json_schema``, and ``json_object`` as a one-field
    object), vLLM's ``structured_outputs.json`` and its older ``guided_json`` (a schema or
    its JSON text).
    """
    response_format = request.get("response_format")
    if isinstance(response_format, dict):
        kind = response_format.get("type")
        spec = response_format.get("json_schema")
        if kind == "json_schema" and isinstance(spec, dict) and "schema" in spec:
            return spec["schema"]
        if kind == "json_object":
            return _JSON_OBJECT_SCHEMA
    structured = request.get("structured_outputs")  # vLLM >= 0.12
    guided = structured.get("json") if isinstance(structured, dict) else request.get("guided_json")
    if isinstance(guided, str):
        with contextlib.suppress(json.JSONDecodeError):
            return json.loads(guided)
        return None
    return guided if isinstance(guided, dict | bool) else None


def build_completion(
    request: JSONDict,
    *,
    mode: Mode = "ok",
    responder: Responder | None = None,
    default_model: str = "papergym-fake",
) -> RawResponse:
    """The HTTP answer to a chat-completion ``request`` in a content-shaping ``mode``.

    Pure (apart from ``id`` and ``created``), so tests can compute the exact answer expected.
    """
    n = _choice_count(request)
    if responder is not None:
        produced = responder(request)
        if isinstance(produced, RawResponse):
            return produced
        scripted = produced if isinstance(produced, str) else json.dumps(produced)
        contents = [scripted] * n
    else:
        schema = extract_schema(request)
        contents = [_generated_content(request, schema, index) for index in range(n)]
    shaped = [_shape(content, mode) for content in contents]
    return RawResponse(200, _completion_body(request, shaped, default_model))


def _choice_count(request: JSONDict) -> int:
    n = request.get("n")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 1


def _generated_content(request: JSONDict, schema: Any | None, index: int) -> str:
    """Deterministic content: seeded by the messages, so the same prompt gives the same answer."""
    seed = _seed(request.get("messages"), index)
    if schema is not None:
        return json.dumps(sample_from_schema(schema, seed), ensure_ascii=False)
    words = _text_of_last_user_message(request.get("messages")).split()
    return "ok: " + " ".join(words[:8]) if words else "ok"


def _seed(messages: Any, index: int) -> int:
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False, default=str)
    digest = hashlib.sha256(f"{text}#{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the ``text`` parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return " ".join(p for p in parts if isinstance(p, str))
    return ""


def _text_of_last_user_message(messages: Any) -> str:
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def _count_words(text: str) -> int:
    return len(text.split())


def _shape(content: str, mode: Mode) -> tuple[str, str]:
    """``(content, finish_reason)`` after the content-shaping fault of ``mode``, if any."""
    if mode == "malformed":
        return _break_json(content), "stop"
    if mode == "truncated":
        return content[: max(1, len(content) // 2)], "length"
    if mode == "think":
        reasoning = "The user wants an answer in the requested format. Let me work it out."
        return f"<think>\n{reasoning}\n</think>\n\n{content}", "stop"
    if mode == "fence":
        return f"```json\n{content}\n```", "stop"
    if mode == "prose":
        return f"Sure! Here is the answer you asked for:\n\n{content}", "stop"
    return content, "stop"


def _break_json(content: str) -> str:
    """Invalid JSON that looks like the real answer: the closing bracket replaced by a comma."""
    stripped = content.rstrip()
    if stripped[-1:] in ("}", "]") and len(stripped) > 1:
        return stripped[:-1].rstrip() + ","
    return '{"answer": ' + json.dumps(content) + ","


def _completion_body(
    request: JSONDict, shaped: Sequence[tuple[str, str]], default_model: str
) -> JSONDict:
    prompt_tokens = sum(
        _count_words(_text_of(m.get("content")))
        for m in request.get("messages") or []
        if isinstance(m, dict)
    )
    completion_tokens = sum(_count_words(content) for content, _ in shaped)
    model = request.get("model")
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model if isinstance(model, str) and model else default_model,
        "system_fingerprint": "papergym-fake",
        "choices": [
            {
                "index": index,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
            for index, (content, finish_reason) in enumerate(shaped)
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


_ERROR_TYPES = {
    400: "invalid_request_error",
    404: "not_found_error",
    405: "invalid_request_error",
    429: "rate_limit_error",
}


def error_response(status: int, message: str, *, retry_after: float | None = None) -> RawResponse:
    """An OpenAI-style error body; ``Retry-After`` (and ``retry-after-ms``) when given."""
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["Retry-After"] = str(math.ceil(retry_after))
        headers["retry-after-ms"] = str(round(retry_after * 1000))
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    body = {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}
    return RawResponse(status, body, headers)


# --------------------------------------------------------------------------------------------
# Minimal HTTP/1.1
# --------------------------------------------------------------------------------------------

_STREAM_LIMIT = 1 << 20
"""Longest request head (and chunk-size line) accepted."""

_MAX_BODY = 64 << 20


class _HttpError(Exception):
    """A request the server cannot parse: answered with ``status`` and the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class _HttpRequest:
    method: str
    target: str
    version: str
    headers: dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0].rstrip("/") or "/"

    @property
    def keep_alive(self) -> bool:
        """HTTP/1.1 keeps connections open unless told otherwise; HTTP/1.0 only when asked."""
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" in connection
        return "close" not in connection


async def _read_request(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> _HttpRequest | None:
    """The next request on the connection, or ``None`` when the client closed it cleanly."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise _HttpError(400, "incomplete request head") from exc
    except asyncio.LimitOverrunError as exc:
        raise _HttpError(431, "request head too large") from exc
    lines = head.decode("latin-1").lstrip("\r\n").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _HttpError(400, f"bad request line {lines[0][:100]!r}")
    headers = _parse_headers(lines[1:])
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    body = await _read_body(reader, headers)
    return _HttpRequest(parts[0].upper(), parts[1], parts[2], headers, body)


def _parse_headers(lines: Iterable[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in lines:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise _HttpError(400, f"bad header line {line[:100]!r}")
        headers[name.strip().lower()] = value.strip()
    return headers


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return await _read_chunked(reader)
    length_text = headers.get("content-length", "0")
    if not length_text.isdigit():
        raise _HttpError(400, "bad Content-Length")
    length = int(length_text)
    if length > _MAX_BODY:
        raise _HttpError(413, "request body too large")
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError as exc:
        raise _HttpError(400, "incomplete request body") from exc


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    try:
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readuntil(b"\r\n")) != b"\r\n":
                    pass  # trailers are ignored
                return bytes(body)
            if len(body) + size > _MAX_BODY:
                raise _HttpError(413, "request body too large")
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
        raise _HttpError(400, "bad chunked body") from exc


async def _write_response(
    writer: asyncio.StreamWriter, response: RawResponse, *, keep_alive: bool
) -> None:
    if isinstance(response.body, bytes):
        payload = response.body
    else:
        payload = json.dumps(response.body, ensure_ascii=False).encode()
    headers = {
        "Content-Type": "application/json",
        "Content-Length": str(len(payload)),
        "Connection": "keep-alive" if keep_alive else "close",
        "x-request-id": uuid.uuid4().hex,
        **response.headers,
    }
    head = f"HTTP/1.1 {response.status} {_reason(response.status)}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    writer.write(head.encode("latin-1") + b"\r\n" + payload)
    await writer.drain()


def _reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


async def _wait_for_disconnect(reader: asyncio.StreamReader, seconds: float) -> bool:
    """Wait up to ``seconds`` for the client to go away; ``True`` when it did.

    A hung request must not stay "in flight" forever once its client timed out, or
    ``max_in_flight`` and shutdown would see ghosts. Any byte read here (a pipelined request)
    also ends the hang, since the connection is closed afterwards.
    """
    try:
        await asyncio.wait_for(reader.read(1), timeout=seconds)
    except TimeoutError:
        return False
    except ConnectionError:
        pass
    return True


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


class FakeOpenAIServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1, in a background thread.

    Use it as a context manager (or :meth:`start`/:meth:`stop`)::

        with FakeOpenAIServer(latency=0.1) as server:
            client = AsyncOpenAI(base_url=server.base_url, api_key="sk-test")
            server.fail(429, times=2)  # the next two requests are rate limited
            ...
            assert server.max_in_flight <= 8

    Endpoints: ``POST /v1/chat/completions`` (``stream: true`` is answered 400),
    ``GET /v1/models`` and ``GET /health``.

    Each chat request consumes the next behaviour of the script queue (:meth:`script`,
    :meth:`fail`, :meth:`hang`), or uses :attr:`default` when the queue is empty. ``latency``,
    ``default`` and ``responder`` are plain attributes read on every request, so they can change
    while the server runs; the queue and statistics are safe to use from any thread.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "papergym-fake",
        latency: float = 0.0,
        default: Behaviour | str = "ok",
        script: Iterable[Behaviour | str] = (),
        responder: Responder | None = None,
        hang_seconds: float = 3600.0,
        backlog: int = 4096,
    ) -> None:
        """Configure the server; nothing listens until :meth:`start` (or ``with``).

        ``port=0`` picks a free port. ``hang_seconds`` is how long a hung request waits for its
        client to give up before being answered normally. ``backlog`` is the listen queue, large
        so that bursts of hundreds of connections are not refused.
        """
        self.host = host
        self.model = model
        self.latency = latency
        self.default = Behaviour.parse(default)
        self.responder = responder
        self.hang_seconds = hang_seconds
        self._requested_port = port
        self._backlog = backlog
        self._port: int | None = None
        self._lock = threading.Lock()
        self._queue: deque[Behaviour] = deque(Behaviour.parse(b) for b in script)
        self._requests: list[JSONDict] = []
        self._headers: list[dict[str, str]] = []
        self._request_count = 0
        self._in_flight = 0
        self._max_in_flight = 0
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._connections: set[asyncio.Task[Any]] = set()

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self, timeout: float = 10.0) -> FakeOpenAIServer:
        """Bind the port and serve in a daemon thread; returns once the port accepts connections."""
        if self._thread is not None:
            raise RuntimeError("FakeOpenAIServer is already running")
        self._ready.clear()
        self._startup_error = None
        self._thread = threading.Thread(target=self._run_loop, name="FakeOpenAIServer", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            self.stop()
            raise RuntimeError("FakeOpenAIServer did not start in time")
        if self._startup_error is not None:
            error = self._startup_error
            self.stop()
            raise RuntimeError(f"FakeOpenAIServer could not start: {error}") from error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Close the listener and every open connection (hung ones too), then join the thread."""
        thread, loop, stop_event = self._thread, self._loop, self._stop_event
        if thread is None:
            return
        if loop is not None and stop_event is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                loop.call_soon_threadsafe(stop_event.set)
        thread.join(timeout)
        if thread.is_alive():
            raise RuntimeError("FakeOpenAIServer thread did not stop in time")
        self._thread = self._loop = self._stop_event = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return self._port

    @property
    def url(self) -> str:
        """The server root, e.g. ``http://127.0.0.1:PORT`` (``/health`` lives there)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What OpenAI clients take as ``base_url``: ``http://127.0.0.1:PORT/v1``."""
        return f"{self.url}/v1"

    # -- fault injection -----------------------------------------------------------------------

    def script(self, *behaviours: Behaviour | str, times: int = 1) -> FakeOpenAIServer:
        """Queue behaviours for the next requests, in order, each repeated ``times`` times.

        Strings are parsed by :meth:`Behaviour.parse`: ``server.script("429", "hang", "ok")``.
        """
        parsed = [Behaviour.parse(b) for b in behaviours]
        with self._lock:
            for behaviour in parsed:
                self._queue.extend([behaviour] * times)
        return self

    def fail(
        self, status: int = 500, *, times: int = 1, retry_after: float | None = None
    ) -> FakeOpenAIServer:
        """Answer ``status`` to the next ``times`` requests (429 always has ``Retry-After``)."""
        if status == 429 and retry_after is None:
            retry_after = 0.0
        return self.script(Behaviour.error(status, retry_after=retry_after), times=times)

    def hang(self, *, times: int = 1) -> FakeOpenAIServer:
        """Never answer the next ``times`` requests: their clients must time out."""
        return self.script(Behaviour.hang(), times=times)

    def clear_script(self) -> None:
        """Drop the queued behaviours: the following requests use :attr:`default`."""
        with self._lock:
            self._queue.clear()

    @property
    def pending(self) -> int:
        """How many queued behaviours are left."""
        with self._lock:
            return len(self._queue)

    def _next_behaviour(self) -> Behaviour:
        with self._lock:
            return self._queue.popleft() if self._queue else self.default

    # -- observability -------------------------------------------------------------------------

    @property
    def requests(self) -> list[JSONDict]:
        """A copy of the chat-completion request bodies received, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        """Chat-completion requests received (invalid ones included)."""
        with self._lock:
            return self._request_count

    @property
    def headers_seen(self) -> list[dict[str, str]]:
        """The headers (lower-cased names) of every HTTP request received, any path."""
        with self._lock:
            return list(self._headers)

    @property
    def in_flight(self) -> int:
        """Chat-completion requests received and not yet answered (or abandoned)."""
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most chat-completion requests ever processed at once: a client's real concurrency."""
        with self._lock:
            return self._max_in_flight

    def reset_stats(self) -> None:
        """Forget recorded requests and counters (the in-flight count itself stays exact)."""
        with self._lock:
            self._requests.clear()
            self._headers.clear()
            self._request_count = 0
            self._max_in_flight = self._in_flight

    def _enter_flight(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _leave_flight(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _record(self, request: _HttpRequest) -> None:
        with self._lock:
            self._headers.append(dict(request.headers))

    def _record_chat(self, body: JSONDict | None) -> None:
        with self._lock:
            self._request_count += 1
            if body is not None:
                self._requests.append(body)

    # -- the loop thread -----------------------------------------------------------------------

    def _run_loop(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:  # reported to start(); the thread must not die silently
            self._startup_error = exc
        finally:
            self._ready.set()

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop_event = asyncio.Event()
        server = await asyncio.start_server(
            self._handle_connection,
            self.host,
            self._requested_port,
            backlog=self._backlog,
            limit=_STREAM_LIMIT,
        )
        self._port = int(server.sockets[0].getsockname()[1])
        self._ready.set()
        try:
            await self._stop_event.wait()
        finally:
            server.close()
            await self._close_connections()
            await server.wait_closed()

    async def _close_connections(self) -> None:
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _handle_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Serve one connection until the client closes it (or the server stops)."""
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            await self._serve_connection(reader, writer)
        except (ConnectionError, asyncio.CancelledError):
            # Client gone, or shutdown: this is the connection's top-level task, and asyncio
            # logs a cancelled client_connected_cb as an error, so end quietly.
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        while True:
            try:
                request = await _read_request(reader, writer)
            except _HttpError as exc:
                response = error_response(exc.status, str(exc))
                await _write_response(writer, response, keep_alive=False)
                return
            if request is None:
                return
            if not await self._answer(request, reader, writer) or not request.keep_alive:
                return

    async def _answer(
        self, request: _HttpRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Answer one request; ``False`` when the connection must close (abandoned hang)."""
        self._record(request)
        is_chat = request.path == "/v1/chat/completions" and request.method == "POST"
        if is_chat:
            self._enter_flight()
        try:
            response = await (self._chat(request, reader) if is_chat else self._route(request))
            if response is None:
                return False
            await _write_response(writer, response, keep_alive=request.keep_alive)
            return True
        finally:
            if is_chat:
                self._leave_flight()

    async def _route(self, request: _HttpRequest) -> RawResponse:
        known = {
            "/v1/chat/completions": "POST",
            "/v1/models": "GET",
            "/models": "GET",
            "/health": "GET",
        }
        method = known.get(request.path)
        if method is None:
            return error_response(404, f"no route {request.path}")
        if request.method != method:
            return error_response(405, f"{request.method} is not allowed on {request.path}")
        if request.path == "/health":
            return RawResponse(200, {"status": "ok"})
        return RawResponse(200, self._models_body())

    def _models_body(self) -> JSONDict:
        entry = {"id": self.model, "object": "model", "created": 0, "owned_by": "papergym"}
        return {"object": "list", "data": [entry]}

    async def _chat(
        self, request: _HttpRequest, reader: asyncio.StreamReader
    ) -> RawResponse | None:
        """A chat completion, after the next behaviour's latency and fault; ``None`` if abandoned."""
        body, problem = _parse_chat_body(request.body)
        self._record_chat(body)
        if body is None:
            return error_response(400, problem)
        if body.get("stream"):
            return error_response(400, "stream=true is not supported by FakeOpenAIServer")
        behaviour = self._next_behaviour()
        latency = self.latency if behaviour.latency is None else behaviour.latency
        if latency > 0:
            await asyncio.sleep(latency)
        if behaviour.mode == "hang" and await _wait_for_disconnect(reader, self.hang_seconds):
            return None
        if behaviour.mode == "error":
            message = f"injected error {behaviour.status}"
            return error_response(behaviour.status, message, retry_after=behaviour.retry_after)
        try:
            return build_completion(
                body,
                mode="ok" if behaviour.mode == "hang" else behaviour.mode,
                responder=behaviour.responder or self.responder,
                default_model=self.model,
            )
        except Exception as exc:  # a broken responder must show up in the test, not reset it
            return error_response(500, f"FakeOpenAIServer responder failed: {exc!r}")


def _parse_chat_body(raw: bytes) -> tuple[JSONDict | None, str]:
    """``(body, "")`` for a usable chat request, else ``(body or None, why not)``."""
    try:
        body = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, f"request body is not JSON: {exc}"
    if not isinstance(body, dict):
        return None, "request body must be a JSON object"
    if not isinstance(body.get("messages"), list):
        return None, "'messages' must be a list"
    return body, ""


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m papergym.testing.openai_server",
        description="Serve a fake OpenAI-compatible chat-completions API for tests and benchmarks.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to each answer")
    parser.add_argument("--model", default="papergym-fake", help="model id listed by /v1/models")
    parser.add_argument(
        "--mode", default="ok", help=f"default behaviour: a status code or one of {MODES}"
    )
    parser.add_argument(
        "--script", default="", help="comma-separated behaviours for the first requests"
    )
    return parser.parse_args(argv)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until interrupted, then print what was served (useful after a benchmark)."""
    args = _parse_args(argv)
    server = FakeOpenAIServer(
        host=args.host,
        port=args.port,
        model=args.model,
        latency=args.latency,
        default=args.mode,
        script=[s for s in args.script.split(",") if s.strip()],
    )
    # A shell starts background jobs with SIGINT ignored, and benchmarks stop servers with
    # SIGTERM: both end the wait below like Ctrl-C, so the summary is always printed.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    with server, contextlib.suppress(KeyboardInterrupt):
        print(f"serving {server.base_url} (Ctrl-C to stop)", flush=True)
        threading.Event().wait()
    print(
        f"served {server.request_count} chat requests, max in flight {server.max_in_flight}",
        flush=True,
    )


if __name__ == "__main__":
    main()
