"""Chat-completion answers and the faults injected into them, independent of any HTTP server.

Answers are deterministic given the request: with a JSON schema (``response_format`` of type
``json_schema``, or vLLM's ``guided_json``) the content is a JSON value generated from the schema,
otherwise a short text. A :class:`Behaviour` says how one request is answered: normally, with an
error status, not at all (a hang or a dropped connection), or with content shaped the way
half-broken models shape it (malformed, truncated, wrapped in reasoning, a fence or prose).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

from papergym.fakellm.schema import sample_from_schema

JSONDict = dict[str, Any]

Mode = Literal["ok", "error", "hang", "drop", "malformed", "truncated", "think", "fence", "prose"]
"""What the server does with one request; see :class:`Behaviour`."""

MODES: tuple[str, ...] = get_args(Mode)


@dataclass(frozen=True)
class RawResponse:
    """An exact HTTP answer: a responder returns one to bypass the chat-completion envelope.

    ``body`` is serialised as JSON unless it is ``bytes``, which are sent verbatim (handy to test a
    client against a broken response body). A ``Content-Length`` header larger than the body
    makes a body cut off mid-transfer: the bytes are sent and the connection then stays silent
    until the client gives up, as with a server that stalls or dies while answering.
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
    * ``drop`` — the connection is closed without an answer, as a crashed or restarted server
      does;
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
    def drop(cls) -> Behaviour:
        """Close the connection without answering: the client sees a disconnect."""
        return cls(mode="drop")

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
# Chat completions
# --------------------------------------------------------------------------------------------

_JSON_OBJECT_SCHEMA: JSONDict = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}


def extract_schema(request: JSONDict) -> Any | None:
    """The JSON schema the request asks the answer to follow, or ``None`` for free text.

    Reads OpenAI's ``response_format`` (``json_schema``, and ``json_object`` with its
    ``schema`` as llama.cpp sends it, else as a one-field object), Ollama's ``format`` (a
    schema), vLLM's ``structured_outputs.json`` and its older ``guided_json`` (a schema or
    its JSON text).
    """
    response_format = request.get("response_format")
    if isinstance(response_format, dict):
        kind = response_format.get("type")
        spec = response_format.get("json_schema")
        if kind == "json_schema" and isinstance(spec, dict) and "schema" in spec:
            return spec["schema"]
        if kind == "json_object":  # llama.cpp's servers take a schema beside it
            schema = response_format.get("schema")
            return schema if isinstance(schema, dict) else _JSON_OBJECT_SCHEMA
    if isinstance(request.get("format"), dict):  # Ollama's native field
        return request["format"]
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


def user_texts(request: dict[str, Any]) -> list[str]:
    """The text of each user message of a chat request, in order (a list of parts: their
    ``text`` joined by spaces); none when ``messages`` is not a list."""
    messages = request.get("messages")
    if not isinstance(messages, list):
        return []
    return [
        _joined_parts(content)
        if isinstance(content := m.get("content"), list)
        else str(content or "")
        for m in messages
        if isinstance(m, dict) and m.get("role") == "user"
    ]


def _joined_parts(parts: list[Any]) -> str:
    return " ".join(str(p.get("text", "")) for p in parts if isinstance(p, dict))


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
