"""Whether a build runs through an LLM, and failing fast when its endpoint does not answer.

Both builds (papers and ARES) choose the same way from ``build.builder``: ``llm`` needs an LLM
configured, ``auto`` takes it when one is, ``extractive`` never does (for ARES: the offline
steps). Before the output folder is created, every role the build calls is asked once
(:meth:`~papergym.llm.client.LLMClient.ping`): an endpoint that does not answer stops the build
with one line (:class:`EndpointDown`), and nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence

from papergym.errors import PaperGymError
from papergym.llm.client import LLMClient
from papergym.llm.config import LLMConfig, llm_or
from papergym.llm.types import LLMError, Role
from papergym.records import BuilderName
from papergym.redact import redact


class EndpointDown(PaperGymError):
    """An endpoint a build needs did not answer before the build began (nothing was written);
    the message is the client's, redacted, on one line."""


def choose_builder(choice: str, llm: LLMConfig) -> BuilderName:
    """The builder ``build.builder`` = ``choice`` runs with ``llm``; ``llm`` without an LLM
    configured is the user's error."""
    return llm_or(choice, "extractive", llm, "--builder llm (build.builder) needs an LLM")


async def ensure_answering(llm: LLMClient, roles: Sequence[Role]) -> None:
    """Ask each of ``roles`` once; :class:`EndpointDown` when one does not answer."""
    try:
        await llm.ping(list(roles))
    except LLMError as error:
        raise EndpointDown(redact(str(error).strip())) from None
