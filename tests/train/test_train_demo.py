"""The CPU demo in examples/ runs as a test: OPSD then GRPO on a tiny model from an offline
build — finite losses, LoRA weights that moved, the reward called, checkpoints on disk."""

from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path
from types import ModuleType

import pytest
from safetensors.torch import load_file

from papergym.reward import runtime

DEMO = Path(__file__).resolve().parents[2] / "examples" / "train_cpu_demo.py"


def load_demo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_cpu_demo", DEMO)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def metrics(path: Path) -> list[dict[str, float]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_cpu_demo_runs_opsd_then_grpo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # every warning shown, as in a plain `python examples/train_cpu_demo.py` (pytest's own
    # filters would hide the libraries' deprecations that the demo must silence as the CLI does)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            summary = load_demo().run_demo(tmp_path, opsd_steps=2, grpo_steps=2)
        finally:
            runtime.set_shared_reward(None)
    assert not [w for w in caught if "gradient_checkpointing" in str(w.message)]
    run = tmp_path / "run"
    assert [s["stage"] for s in summary["stages"]] == ["opsd", "grpo"]
    # GRPO started from the OPSD weights, and the last stage's model is what the run returns
    assert summary["stages"][1]["init_model"] == str(run / "1-opsd" / "final")
    assert summary["final_model"] == str(run / "2-grpo" / "final")
    assert (run / "2-grpo" / "final" / "model.safetensors").is_file()

    opsd = metrics(run / "1-opsd" / "metrics.jsonl")
    assert [m["step"] for m in opsd] == [1, 2]
    assert all(0.0 < m["loss"] < 0.6932 for m in opsd)  # finite, under the JSD's ln 2 bound
    adapter = load_file(
        str(run / "1-opsd" / "checkpoints" / "checkpoint-2" / "adapter_model.safetensors")
    )
    lora_b = [t for name, t in adapter.items() if "lora_B" in name]
    assert lora_b and any(t.abs().sum() > 0 for t in lora_b)  # B starts at zero: it moved

    grpo = metrics(run / "2-grpo" / "metrics.jsonl")
    rewards = [m["reward"] for m in grpo if "reward" in m]
    assert rewards and all(0.0 <= r <= 1.0 for r in rewards)  # the rubric reward was called
    assert any((run / "2-grpo" / "checkpoints").glob("checkpoint-*"))
