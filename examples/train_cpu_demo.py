"""CPU demo of the whole training recipe, in a couple of minutes, with nothing to download.

1. ``papergym build`` the example paper with the offline builder (no LLM).
2. Build a tiny model and tokenizer in-process (``model.name_or_path: tiny``).
3. OPSD: the student answers from the question alone, the stop-gradient teacher (the same
   network with its LoRA adapter off) reads the rubric too; generalised JSD on the same tokens.
4. GRPO from the OPSD weights, rewarded by the rubric through the offline judge.

Run it::

    python examples/train_cpu_demo.py --out runs/demo

The model is far too small to learn anything about research planning; the demo shows every
moving part (data, both trainers, reward, checkpoints, resume, the run folder) working on a
laptop. For the real thing use ``configs/qwen3-8b.yaml`` on a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_PAPERS = ROOT / "examples" / "papers"
TINY_CONFIG = ROOT / "configs" / "tiny-cpu.yaml"


def build_dataset(out: Path) -> Path:
    """The offline build of the example paper (re-used when it already exists)."""
    from papergym.cli import app

    if not (out / "instances.jsonl").is_file():
        app(["build", str(EXAMPLE_PAPERS), "-o", str(out)], standalone_mode=False)
    return out


def run_demo(out: Path, *, opsd_steps: int = 4, grpo_steps: int = 2) -> dict[str, Any]:
    """Build, then OPSD → GRPO on the tiny model; returns the run summary."""
    from papergym.settings.train import load_config
    from papergym.train.run import quiet_libraries, run_pipeline
    from papergym.train.stages import stage_runners

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is local
    quiet_libraries()  # as `papergym train` does: no library bars, info logs or deprecations
    data = build_dataset(out / "build")
    config = load_config(
        TINY_CONFIG,
        [
            f"output_dir={out / 'run'}",
            "stages=[opsd, grpo]",
            f"opsd.steps={opsd_steps}",
            f"opsd.save_every={max(1, opsd_steps // 2)}",
            f"grpo.steps={grpo_steps}",
            f"grpo.save_every={max(1, grpo_steps // 2)}",
        ],
        data=data,
    )
    return run_pipeline(config, stage_runners())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/demo"), help="demo folder")
    parser.add_argument("--opsd-steps", type=int, default=4)
    parser.add_argument("--grpo-steps", type=int, default=2)
    args = parser.parse_args()
    summary = run_demo(args.out, opsd_steps=args.opsd_steps, grpo_steps=args.grpo_steps)
    print(json.dumps(summary, indent=1, default=float))
    print(
        f"metrics: {args.out / 'run' / '1-opsd' / 'metrics.jsonl'}, "
        f"{args.out / 'run' / '2-grpo' / 'metrics.jsonl'}"
    )


if __name__ == "__main__":
    main()
