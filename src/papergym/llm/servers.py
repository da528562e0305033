"""What real OpenAI-compatible servers differ in: how they take a JSON schema, which failures
are worth retrying, and where their error bodies say what went wrong.

The table behind ``preset`` (one line in the config that sets all three for a server), the
request fields of each structured-output mode, and reading an error body. Pure data and pure
functions; the ``openai`` backend applies them.

What each server was seen to accept (read in its source where no server runs here):

* vLLM and SGLang: ``response_format`` of type ``json_schema``; vLLM also ``structured_outputs``
  (>= 0.12) and ``guided_json`` (older). Errors: ``{"object": "error", "message": ...}`` (newer
  vLLM: ``{"error": {"message": ...}}``).
* Ollama's ``/v1``: ``response_format`` ``json_schema``; it ignores a ``format`` field there
  (its native ``/api/chat`` reads ``format``). Errors: ``{"error": {"message": ...}}``.
* llama-cpp-python's server: only ``{"type": "json_object", "schema": ...}``; llama.cpp's own
  ``llama-server`` takes that and ``json_schema``. Errors: ``{"error": {"message": ...}}``.
* ``transformers serve``: ignores ``response_format`` (with a warning) and refuses unknown
  fields with 422; no constrained decoding. Errors: FastAPI's ``{"detail": ...}``.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from pydantic import BaseModel

from papergym.llm.structured import (
    guided_json_for,
    json_schema_for,
    response_format_for,
    structured_outputs_for,
)

SchemaMode = Literal[
    "json_schema", "json_object", "ollama_format", "structured_outputs", "guided_json", "none"
]
"""How a JSON schema is sent with a request (``none``: only in the prompt, validated locally)."""

StructuredOutput = Literal[
    "auto",
    "json_schema",
    "json_object",
    "ollama_format",
    "structured_outputs",
    "guided_json",
    "none",
]
"""A backend's ``structured_output`` setting: a mode, or ``auto`` (the best one the endpoint
takes, found by asking again in the next mode when one is refused)."""

AUTO_ORDER: tuple[SchemaMode, ...] = get_args(SchemaMode)
"""The modes ``auto`` tries, best first: each one enforces the schema on more servers than the
next (``json_schema`` on most), ``none`` always works."""

LEGACY_MODES = {"response_format": "json_schema"}
"""Earlier names of modes, still accepted in configurations."""

ErrorBody = Literal["auto", "openai", "vllm", "fastapi"]
"""Where a server's error body puts its message: ``{"error": {"message"}}`` (OpenAI, Ollama,
llama.cpp), ``{"object": "error", "message"}`` (vLLM, SGLang), ``{"detail"}`` (FastAPI servers
such as ``transformers serve``); ``auto`` reads any of them."""

Preset = Literal["vllm", "sglang", "ollama", "llamacpp", "openai", "transformers"]

DEFAULT_RETRY_STATUSES = (408, 409, 425, 429, 500, 502, 503, 504)

PRESETS: dict[str, dict[str, Any]] = {
    "vllm": {
        "structured_output": "json_schema",
        "retry_statuses": (408, 429, 500, 502, 503, 504),
        "error_body": "vllm",
    },
    "sglang": {
        "structured_output": "json_schema",
        "retry_statuses": (408, 429, 500, 502, 503, 504),
        "error_body": "vllm",
    },
    "ollama": {
        "structured_output": "json_schema",
        # 503: "server busy" when its queue (OLLAMA_MAX_QUEUE) is full
        "retry_statuses": (429, 500, 502, 503, 504),
        "error_body": "openai",
    },
    "llamacpp": {
        "structured_output": "json_object",
        # 503: the model is still loading
        "retry_statuses": (429, 500, 502, 503, 504),
        "error_body": "openai",
    },
    "openai": {
        "structured_output": "json_schema",
        "retry_statuses": (408, 409, 429, 500, 502, 503, 504),
        "error_body": "openai",
    },
    "transformers": {
        "structured_output": "none",
        "retry_statuses": (500, 502, 503, 504),
        "error_body": "fastapi",
    },
}
"""What each ``preset`` sets; a field given explicitly beside the preset wins."""


def schema_fields(mode: SchemaMode, schema: type[BaseModel]) -> dict[str, Any]:
    """The request fields that send ``schema`` in ``mode`` (none for ``none``)."""
    if mode == "json_schema":
        return {"response_format": response_format_for(schema)}
    if mode == "json_object":
        return {"response_format": {"type": "json_object", "schema": json_schema_for(schema)}}
    if mode == "ollama_format":
        return {"format": json_schema_for(schema)}
    if mode == "structured_outputs":
        return structured_outputs_for(schema)
    if mode == "guided_json":
        return guided_json_for(schema)
    return {}


def next_mode(mode: SchemaMode) -> SchemaMode | None:
    """The mode ``auto`` tries after ``mode`` is refused; None after ``none``."""
    index = AUTO_ORDER.index(mode)
    return AUTO_ORDER[index + 1] if index + 1 < len(AUTO_ORDER) else None


def error_message(text: str, style: ErrorBody = "auto") -> str | None:
    """The human message in an error body, read the way ``style`` says; None when there is
    none (not JSON, or another shape)."""
    try:
        body = json.loads(text)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    readers = {
        "openai": (_openai_message,),
        "vllm": (_top_message, _openai_message),
        "fastapi": (_fastapi_message,),
        "auto": (_openai_message, _top_message, _fastapi_message),
    }[style]
    for read in readers:
        message = read(body)
        if message:
            return " ".join(message.split())
    return None


def _openai_message(body: dict[str, Any]) -> str | None:
    error = body.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return error if isinstance(error, str) else None  # Ollama's native API: a bare string


def _top_message(body: dict[str, Any]) -> str | None:
    message = body.get("message")
    return message if isinstance(message, str) else None


def _fastapi_message(body: dict[str, Any]) -> str | None:
    detail = body.get("detail")
    if isinstance(detail, str):
        return detail
    if isinstance(detail, list):  # validation errors: [{"loc": [...], "msg": ...}, ...]
        parts = [
            f"{'.'.join(str(p) for p in item.get('loc', []))}: {item.get('msg', '')}"
            for item in detail
            if isinstance(item, dict)
        ]
        return "; ".join(parts) or None
    return None
