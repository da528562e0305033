"""Make a labelled set for ``papergym judge calibrate`` whose labels come from construction,
not from a judge (see :mod:`papergym.calibrate.construct` and docs/judge.md).

Run it on an extractive build (papers the offline judge was not calibrated on)::

    papergym build ../shared/papers/did-fixed-T-cce ../shared/papers/legwork-gw-sources \\
        -o runs/labels-build --builder extractive
    python examples/make_judge_labels.py runs/labels-build --count 2 --out examples/judge-labels

It writes OUT/instances.jsonl (the instances used) and OUT/labels.jsonl (five constructed
answers per instance, one label per answer and labelled criterion); then::

    papergym judge calibrate --labels OUT/labels.jsonl --instances OUT/instances.jsonl --judge offline
"""

from __future__ import annotations

import argparse
from pathlib import Path

from papergym.calibrate.construct import labelled_set
from papergym.jsonl import write_jsonl
from papergym.records import Instance
from papergym.reward.answers import read_instances


def main() -> None:
    """Parse the arguments, make the labels, write them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", type=Path, help="A build folder or its instances.jsonl.")
    parser.add_argument("--count", type=int, default=2, help="Instances to use (first ones).")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the word shuffles.")
    parser.add_argument("--out", type=Path, required=True, help="The folder to write.")
    args = parser.parse_args()
    chosen: list[Instance] = list(read_instances(args.build).values())[: args.count]
    labels = labelled_set(chosen, seed=args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / "instances.jsonl", chosen)
    write_jsonl(args.out / "labels.jsonl", labels)
    met = sum(label.met for label in labels)
    print(f"{len(labels)} labels ({met} met) on {len(chosen)} instances -> {args.out}")


if __name__ == "__main__":
    main()
