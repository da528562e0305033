"""A new reward gets every adapter without an adapter of its own: a toy reward that
implements :class:`~papergym.reward_protocol.Reward` (and leaves some answers unscored) is
served by the generic TRL, verl and OpenRLHF functions and the HTTP server."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from papergym.adapters import openrlhf, trl, verl
from papergym.adapters.server import create_app
from papergym.reward_protocol import Reward


@dataclass(frozen=True)
class Counted:
    """The toy's result: the share of the wanted word among the answer's words."""

    value: float | None
    unscored_reason: str | None = None
    answer_truncated: bool = False

    @property
    def scored(self) -> bool:
        return self.value is not None


class WordReward:
    """Rewards answers that use the word its label names; an answer without words is unscored."""

    name = "word"

    def __init__(self) -> None:
        self.batches: list[int] = []

    async def ascore_batch(self, pairs: Sequence[tuple[str, str]]) -> list[Counted]:
        self.batches.append(len(pairs))
        results = []
        for word, answer in pairs:
            words = answer.split()
            if not words:
                results.append(Counted(None, "no words"))
            else:
                results.append(Counted(words.count(word) / len(words)))
        return results

    def input_of(self, label: Any, extra_info: Mapping[str, Any] | None) -> str:
        return str(label)

    def inputs_of_columns(self, columns: Mapping[str, Any], count: int) -> list[str]:
        return [str(w) for w in columns["word"]]

    def verl_metrics(self, item: str, result: Counted) -> dict[str, float]:
        return {"unscored": 0.0 if result.scored else 1.0}

    def openrlhf_logs(self, results: Sequence[Counted]) -> dict[str, list[float]]:
        return {"word_unscored": [0.0 if r.scored else 1.0 for r in results]}

    def trl_logs(self, results: Sequence[Counted]) -> dict[str, float]:
        return {"word/unscored": float(sum(not r.scored for r in results))}


def _is_reward(reward: Reward[str, Counted]) -> Reward[str, Counted]:
    return reward  # mypy checks the toy against the protocol here


REWARD = _is_reward(WordReward())


def test_trl_functions_take_the_columns_and_keep_unscored_as_none() -> None:
    sync = trl.reward_function(lambda: REWARD, "word_reward")
    logged: dict[str, float] = {}
    chat = [[{"role": "user", "content": "q"}, {"role": "assistant", "content": "cat cat dog"}]]
    values = sync(["p", "p"], [*chat, ""], word=["cat", "cat"], log_metric=logged.__setitem__)
    assert values == [2 / 3, None] and logged == {"word/unscored": 1.0}
    assert sync.__name__ == "word_reward"  # TRL names its metrics after the function
    run_async = trl.async_reward_function(lambda: REWARD, "word_reward_async")
    assert asyncio.run(run_async(["p"], ["dog"], word=["dog"])) == [1.0]


def test_verl_functions_give_the_fallback_and_a_fixed_key_set() -> None:
    functions = verl.VerlFunctions(lambda: REWARD, lambda: -1.0)
    one = functions.compute_score("d", "cat dog", "cat", extra_info={}, step=1)
    unscored = asyncio.run(functions.compute_score_async("d", "   ", "cat"))
    batch = functions.compute_score_batch(["d", "d"], ["cat", "dog"], ["cat", "cat"])
    assert one == {"score": 0.5, "unscored": 0.0}
    assert unscored == {"score": -1.0, "unscored": 1.0}
    assert [b["score"] for b in batch] == [1.0, 0.0]


def test_openrlhf_function_and_server_serve_any_reward() -> None:
    from fastapi.testclient import TestClient

    reward_func = openrlhf.reward_func_of(lambda: REWARD, lambda: 0.25)
    result = reward_func(["P:cat", "P:"], ["P:", "P:"], ["cat", "cat"])
    assert result["rewards"].tolist() == [1.0, 0.25]
    assert result["extra_logs"]["word_unscored"].tolist() == [0.0, 1.0]
    app = create_app(REWARD, title="word", health=lambda: {"reward": "word"}, fallback=lambda: 0.0)
    with TestClient(app) as client:
        assert client.get("/health").json() == {"status": "ok", "reward": "word"}
        body = {"query": ["P:cat dog", "P:"], "prompts": ["P:", "P:"], "labels": ["dog", "dog"]}
        got = client.post("/get_reward", json=body).json()
        assert got == {
            "rewards": [0.5, 0.0],
            "scores": [0.5, 0.0],
            "extra_logs": {"word_unscored": [0.0, 1.0]},
        }
        items = {"items": [{"ground_truth": "cat", "answer": "cat"}]}
        assert client.post("/score", json=items).json()["scores"] == [
            {"value": 1.0, "unscored_reason": None, "answer_truncated": False}
        ]
