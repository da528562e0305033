"""Test helpers that stand in for the outside world (LLM servers) in tests and benchmarks.

The names are loaded lazily so that ``python -m papergym.testing.openai_server`` does not import
the module twice (once through this package, once as ``__main__``), which runpy warns about.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from papergym.testing.openai_server import (
        Behaviour,
        FakeOpenAIServer,
        RawResponse,
        Responder,
        build_completion,
        extract_schema,
        sample_from_schema,
    )

__all__ = [
    "Behaviour",
    "FakeOpenAIServer",
    "RawResponse",
    "Responder",
    "build_completion",
    "extract_schema",
    "sample_from_schema",
]


def __getattr__(name: str) -> object:
    """Import :mod:`papergym.testing.openai_server` on first use of one of its names."""
    if name in __all__:
        from papergym.testing import openai_server

        return getattr(openai_server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
