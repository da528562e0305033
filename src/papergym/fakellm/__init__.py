"""A fake OpenAI-compatible LLM server: dry runs without a GPU or a key, and fault injection.

``papergym fake-llm`` serves it from the command line; tests and benchmarks start
:class:`FakeOpenAIServer` in a background thread. Its answers follow the JSON schema a request
asks for, and with :func:`papergym.fakellm.plausible.responder` they are drawn from the prompt's
own text, so that a ``papergym build`` against it yields instances.

The names are loaded on first use, so that the ``papergym`` command line does not import
uvicorn until ``fake-llm`` runs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from papergym.fakellm.completions import (
        MODES,
        Behaviour,
        Mode,
        RawResponse,
        Responder,
        build_completion,
        error_response,
        extract_schema,
    )
    from papergym.fakellm.schema import sample_from_schema
    from papergym.fakellm.server import FakeOpenAIServer

_HOMES = {
    "MODES": "completions",
    "Behaviour": "completions",
    "Mode": "completions",
    "RawResponse": "completions",
    "Responder": "completions",
    "build_completion": "completions",
    "error_response": "completions",
    "extract_schema": "completions",
    "sample_from_schema": "schema",
    "FakeOpenAIServer": "server",
}
__all__ = [
    "MODES",
    "Behaviour",
    "FakeOpenAIServer",
    "Mode",
    "RawResponse",
    "Responder",
    "build_completion",
    "error_response",
    "extract_schema",
    "sample_from_schema",
]


def __getattr__(name: str) -> object:
    """Import the submodule that defines ``name`` on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"papergym.fakellm.{home}"), name)
