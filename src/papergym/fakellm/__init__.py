"""A fake OpenAI-compatible LLM server: dry runs without a GPU or a key, and fault injection.

``papergym fake-llm`` serves it from the command line; tests and benchmarks start
:class:`FakeOpenAIServer` in a background thread. Its answers follow the JSON schema a request
asks for, and with :func:`papergym.fakellm.plausible.responder` they are drawn from the prompt's
own text, so that a ``papergym build`` against it yields instances.

The names are loaded on first use, so that the ``papergym`` command line does not import
uvicorn until ``fake-llm`` runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from papergym import lazy_exports

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
    "MODES": "papergym.fakellm.completions",
    "Behaviour": "papergym.fakellm.completions",
    "Mode": "papergym.fakellm.completions",
    "RawResponse": "papergym.fakellm.completions",
    "Responder": "papergym.fakellm.completions",
    "build_completion": "papergym.fakellm.completions",
    "error_response": "papergym.fakellm.completions",
    "extract_schema": "papergym.fakellm.completions",
    "sample_from_schema": "papergym.fakellm.schema",
    "FakeOpenAIServer": "papergym.fakellm.server",
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

__getattr__ = lazy_exports(__name__, _HOMES)
