"""The reference-similarity reward (ARES ablation, SPEC §6): how close an answer is to the
reference answer, with the offline judge's embedding model (:mod:`papergym.embed`).

Each text is split into sentences, each sentence embedded (MiniLM reads at most 256 word
pieces, so a whole answer would be cut), and the text's vector is the normalised mean of its
sentences' unit vectors (:func:`text_vector`). The reward is their cosine clipped to ``[0, 1]``
(:func:`~papergym.reward.ablations.similarity_value`). No LLM, no rubric: the criteria are never
read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from papergym.llm.structured import strip_reasoning
from papergym.records import Instance, RewardMode
from papergym.reward.ablations import similarity_value
from papergym.reward.rating import AnswerJudge, Rating
from papergym.text import split_sentences

Embedder = Callable[[Sequence[str]], npt.NDArray[np.float32]]


def text_vector(sentence_vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float64] | None:
    """The unit-length mean of a text's sentence vectors; ``None`` for a text without any (or
    whose vectors cancel out)."""
    if sentence_vectors.shape[0] == 0:
        return None
    mean = sentence_vectors.astype(np.float64).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else None


def reference_similarity(
    answer_vectors: npt.NDArray[np.float32], reference_vectors: npt.NDArray[np.float32]
) -> float | None:
    """The reward of an answer from its and the reference's sentence vectors: the cosine of
    their :func:`text_vector`, clipped to ``[0, 1]``; ``None`` when the reference has no text
    (0 when the answer has none)."""
    reference = text_vector(reference_vectors)
    if reference is None:
        return None
    answer = text_vector(answer_vectors)
    if answer is None:
        return 0.0
    return similarity_value(float(answer @ reference))


class ReferenceSimilarity(AnswerJudge):
    """Rates an answer by its embedding similarity to the instance's reference answer."""

    mode: RewardMode = "reference_similarity"

    def __init__(self, embedder: Embedder | None = None) -> None:
        self._embed = embedder

    @property
    def name(self) -> str:
        """``reference_similarity:<embedding model>``."""
        from papergym.embed import embedder_location

        where = "custom" if self._embed is not None else embedder_location()
        return f"reference_similarity:{where}"

    def _vectors(self, text: str) -> npt.NDArray[np.float32]:
        sentences = split_sentences(text)
        if self._embed is not None:
            return self._embed(sentences)
        from papergym.embed import embed

        return embed(sentences)

    def warm_up(self) -> None:
        """Load the embedding model now (a server does, before its first request)."""
        self._vectors("The plan trains a model.")

    def rate_sync(self, instance: Instance, answer: str) -> Rating:
        """:meth:`rate` on this thread."""
        value = reference_similarity(
            self._vectors(strip_reasoning(answer)), self._vectors(instance.reference_answer)
        )
        if value is None:
            return Rating(None, "the instance has no reference answer to compare with")
        return Rating(value, f"cosine similarity to the reference answer {value:.3f}")

    async def rate(self, instance: Instance, answer: str) -> Rating:
        """The similarity on a worker thread (embedding is CPU work)."""
        return await asyncio.to_thread(self.rate_sync, instance, answer)
