"""``papergym serve-reward``: the rubric reward as an HTTP service.

- ``POST /get_reward`` — OpenRLHF's remote reward model protocol: ``{"query": [...],
  "prompts": [...], "labels": [...]}`` → ``{"rewards", "scores", "extra_logs"}``;
- ``POST /score`` — ``{"items": [{"ground_truth": ..., "answer": "..."}]}`` → every score with its
  verdicts (``value`` is null when unscored);
- ``GET /health`` — liveness and the judge in use.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from papergym.records import Score
from papergym.reward.openrlhf import response_of, rewards_payload
from papergym.reward.reward import RubricReward
from papergym.reward.verl import instance_from_ground_truth


class RewardRequest(BaseModel):
    query: list[str]
    prompts: list[str]
    labels: list[Any]


class ScoreItem(BaseModel):
    ground_truth: Any
    answer: str
    extra_info: dict[str, Any] | None = None


class ScoreRequest(BaseModel):
    items: list[ScoreItem]


def create_app(reward: RubricReward) -> Any:
    """A FastAPI app serving ``reward`` (all scoring happens on the server's own event loop)."""
    from fastapi import FastAPI, HTTPException

    app = FastAPI(title="PaperGym rubric reward")

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok", "judge": reward.judge.name}

    @app.post("/get_reward")
    async def get_reward(request: RewardRequest) -> dict[str, Any]:
        if not len(request.query) == len(request.prompts) == len(request.labels):
            raise HTTPException(422, "query, prompts and labels must have the same length")
        pairs = [
            (_instance(label, None), response_of(query, prompt))
            for query, prompt, label in zip(
                request.query, request.prompts, request.labels, strict=True
            )
        ]
        return rewards_payload(await reward.ascore_many(pairs))

    @app.post("/score")
    async def score(request: ScoreRequest) -> dict[str, list[dict[str, Any]]]:
        pairs = [
            (_instance(item.ground_truth, item.extra_info), item.answer) for item in request.items
        ]
        scores: list[Score] = await reward.ascore_many(pairs)
        return {"scores": [s.model_dump(mode="json") for s in scores]}

    def _instance(ground_truth: Any, extra_info: dict[str, Any] | None) -> Any:
        try:
            return instance_from_ground_truth(ground_truth, extra_info)
        except Exception as error:  # a bad label is the client's error: 422 with the reason
            raise HTTPException(
                422, f"invalid ground truth: {str(error).splitlines()[0]}"
            ) from None

    return app
