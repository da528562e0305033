"""Fixtures for the training stages: a tiny model, two instances, and a stage context by hand."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from train_samples import train_instance

from papergym.export.trl import trl_rows
from papergym.jsonl import write_jsonl
from papergym.records import Instance
from papergym.settings.train import StageName, TrainConfig
from papergym.train.run import StageContext
from papergym.train.tiny import save_tiny_model


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No hub access, and no LLM configured from the environment of whoever runs the tests."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in ("PAPERGYM_LLM_CONFIG", "PAPERGYM_BASE_URL", "PAPERGYM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny in-process model (vocab 512, hidden 64), saved once per session; read-only."""
    return save_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture
def instances() -> list[Instance]:
    return [train_instance("pa", "sparse attention"), train_instance("pb", "long context")]


@pytest.fixture
def rows(instances: list[Instance]) -> list[dict[str, Any]]:
    """The TRL rows every stage trains on, as ``papergym.train.data`` makes them."""
    return trl_rows(instances)


@pytest.fixture
def build_dir(tmp_path: Path, instances: list[Instance]) -> Path:
    """A ``papergym build`` folder holding just ``instances.jsonl``."""
    folder = tmp_path / "build"
    folder.mkdir()
    write_jsonl(folder / "instances.jsonl", instances)
    return folder


ContextFactory = Callable[..., StageContext]


@pytest.fixture
def make_context(tmp_path: Path, tiny_model: Path, rows: list[dict[str, Any]]) -> ContextFactory:
    """Builds a stage's context as ``run_pipeline`` does, under ``tmp_path/run``.

    ``make_context("grpo", grpo={"steps": 2})``: keyword arguments are config sections that
    replace the defaults (model: the tiny one in float32; LoRA: r 4, alpha 8); ``rows`` and
    ``model`` may be given to train on other data or weights.
    """

    def make(
        stage: StageName,
        *,
        rows: list[dict[str, Any]] = rows,
        model: Path = tiny_model,
        **sections: Any,
    ) -> StageContext:
        config = TrainConfig.model_validate(
            {
                "output_dir": str(tmp_path / "run"),
                "stages": [stage],
                "model": {"name_or_path": str(model), "dtype": "float32"},
                "lora": {"r": 4, "alpha": 8},
                **sections,
            }
        )
        stage_dir = tmp_path / "run" / f"1-{stage}"
        return StageContext(config, stage, stage_dir, str(model), {"train": rows})

    return make
