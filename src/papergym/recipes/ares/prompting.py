"""What the ARES LLM steps share: their prompts, the document excerpt, and turning bad output
into a drop.

Prompts live in ``prompts/NAME.md`` beside this module, with ``$placeholders``. A document longer
than ``ares.max_prompt_words`` is cut to that many words (and the cut said so), so one huge page
cannot exhaust a context window. Output that stays invalid after the LLM layer's repairs is the
document's drop at that step, named ``invalid_output``; an endpoint's failure (transport,
truncation, budget) is not caught here: it propagates, and the runner retries the document.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from string import Template
from typing import TypeVar

from pydantic import BaseModel

from papergym.llm.client import LLMClient
from papergym.llm.types import LLMOutputError, Message, Role
from papergym.recipes.steps import Reject, first_line

T = TypeVar("T", bound=BaseModel)


def prompt(name: str, **values: str) -> list[Message]:
    """A user message from ``prompts/NAME.md`` with ``$placeholders`` filled in."""
    folder = resources.files("papergym.recipes.ares").joinpath("prompts")
    text = folder.joinpath(f"{name}.md").read_text("utf-8")
    return [Message(role="user", content=Template(text).substitute(values))]


def excerpt(text: str, max_words: int) -> str:
    """``text`` as the prompts show it: whole, or its first ``max_words`` words and a mark."""
    words = text.split()
    if len(words) <= max_words:
        return text.strip()
    return (
        " ".join(words[:max_words]) + f"\n[... document cut: {len(words) - max_words} more words]"
    )


async def answer_or_reject(
    client: LLMClient, role: Role, messages: Sequence[Message], schema: type[T], stage: str
) -> T | Reject:
    """The model's answer for ``messages`` parsed into ``schema``, or a drop when its output
    stays invalid after repairs."""
    try:
        result = await client.call(role, messages, schema=schema, stage=stage)
    except LLMOutputError as error:
        return Reject(f"invalid_output: {first_line(error)}")
    assert result.parsed is not None
    return result.parsed
