"""Running ARES steps against the scripted loopback server (:class:`AresScript`)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from papergym.embed import embed
from papergym.fakellm import FakeOpenAIServer, Responder
from papergym.llm.client import LLMClient
from papergym.llm.config import BackendConfig, LLMConfig
from papergym.recipes.ares.build import AresJob
from papergym.recipes.ares.documents import Document
from papergym.recipes.ares.pipeline import ares_steps
from papergym.recipes.ares.record import AresDraft
from papergym.recipes.ares.scripted import AresScript
from papergym.recipes.steps import Reject, StepFolder, run_steps


@dataclass
class Outcome:
    draft: AresDraft
    reject: Reject | None

    @property
    def kept(self) -> bool:
        return self.reject is None

    @property
    def drop(self) -> tuple[str, str]:
        assert self.reject is not None and self.reject.step is not None
        return self.reject.step, self.reject.reason


def run_documents(
    documents: Sequence[Document],
    folder: Path,
    *,
    faults: Sequence[str] = (),
    config: AresJob | None = None,
    offline: bool = False,
    responder: Responder | None = None,
) -> tuple[list[Outcome], int]:
    """Each document through the ARES steps (its outputs saved under ``folder/<id>``), and the
    number of chat requests the server answered."""
    config = config or AresJob()
    script = responder or AresScript(frozenset(faults))
    with FakeOpenAIServer(responder=script) as server:
        llm_config = LLMConfig(
            default=BackendConfig(model="m", base_url=server.base_url, retry_base_delay=0.01)
        )

        async def go() -> list[Outcome]:
            client = None if offline else LLMClient(llm_config)
            try:
                steps = ares_steps(config.ares, config.audit, client, embed)
                outcomes = []
                for doc in documents:
                    draft, reject = await run_steps(
                        AresDraft.start(doc), steps, StepFolder(folder / doc.id)
                    )
                    outcomes.append(Outcome(draft, reject))
                return outcomes
            finally:
                if client is not None:
                    await client.aclose()

        outcomes = asyncio.run(go())
        return outcomes, server.request_count
