"""A scripted LLM for build tests and benchmarks: answers each build prompt with plausible content.

It reads which prompt it was given (by its wording) and answers from the prompt's own text, so
the build's gates see realistic input: criteria are distinct method/experiment statements,
the merge picks valid candidate numbers, and nothing numeric reaches the reference.
"""

from __future__ import annotations

import re
from typing import Any

METHOD_TERMS = [
    "a learned router that scores pairs of blocks",
    "a straight-through estimator for top-k selection",
    "an auxiliary load-balancing loss",
    "mean pooling to summarise each block",
    "dense attention inside the selected blocks only",
    "a bilinear scoring function between block summaries",
    "joint training of the router with the model",
    "a softmax over router scores in the backward pass",
    "a fixed number k of key blocks per query block",
    "block summaries computed before attention",
]
EXPERIMENT_TERMS = [
    "long-document classification as an evaluation task",
    "passage retrieval with inputs up to 32k tokens",
    "dense attention as a baseline",
    "a sliding window with global tokens as a baseline",
    "hashing-based attention as a baseline",
    "the same training budget for every method",
    "wall-clock time and peak memory measurements",
    "an ablation of the block size",
    "an ablation of the number of selected blocks",
    "an ablation of the load-balancing weight",
]


def _last_user(request: dict[str, Any]) -> str:
    messages = request.get("messages", [])
    users = [m for m in messages if m.get("role") == "user"]
    return str(users[-1]["content"]) if users else ""


def responder(request: dict[str, Any]) -> dict[str, Any]:
    """The answer to one build request."""
    text = _last_user(request)
    if "Sort what this excerpt says" in text:
        return {
            "research_field": "Machine learning, efficient transformers for long documents.",
            "research_background": "Self-attention costs time quadratic in sequence length. "
            "Fixed sparse patterns cannot follow content, and hashing methods are trained apart "
            "from the task, so an adaptive, task-trained sparsity pattern is still missing.",
            "solution": "A router scores pairs of blocks and keeps the top k key blocks per query "
            "block, trained with a straight-through estimator and a load-balancing loss.",
            "experiment": "Evaluation on long-document classification and passage retrieval "
            "against dense, sliding-window and hashing attention, with time and memory measured.",
        }
    if "Merge them into one coherent text" in text:
        notes = re.findall(r"^- (.+)$", text, flags=re.MULTILINE)
        return {"text": notes[0] if notes else "Nothing."}
    if "Write a research task" in text:
        return {
            "question": "In machine learning for long documents, transformers pay a cost "
            "quadratic in sequence length, and current sparse patterns are either fixed or "
            "trained apart from the task. How could attention sparsity adapt to content and "
            "to the training objective at near-linear cost? Propose a research plan."
        }
    if "Write a reference answer" in text:
        return {
            "reference_answer": "The method splits the sequence into blocks and learns a router "
            "that keeps a few key blocks per query block. It is trained jointly with the model "
            "through a straight-through estimator, with a load-balancing loss. The experiments "
            "compare it with dense, sliding-window and hashing attention on classification and "
            "retrieval, measuring accuracy, time and memory, with ablations."
        }
    if "Rewrite the text below so that it reports no numeric results" in text:
        return {"reference_answer": "The method learns which blocks to skip."}
    if "exactly 10 criteria" in text:
        terms = (
            EXPERIMENT_TERMS
            if '"experiment".' in text and 'only the dimension "experiment"' in text
            else None
        )
        if 'only the dimension "method"' in text:
            pairs = [(t, "method") for t in METHOD_TERMS]
        elif terms:
            pairs = [(t, "experiment") for t in terms]
        else:
            offset = 0 if "reference answer" in text.lower().split("task:")[0] else 5
            pairs = [(t, "method") for t in METHOD_TERMS[offset : offset + 5]]
            pairs += [(t, "experiment") for t in EXPERIMENT_TERMS[offset : offset + 5]]
        return {
            "criteria": [
                {"text": f"The plan uses {term}.", "dimension": dim} for term, dim in pairs
            ]
        }
    if "Select the" in text:
        count = int(re.search(r"Select the (\d+)", text).group(1))  # type: ignore[union-attr]
        listed = text.split("Candidates:", 1)[1]
        candidates = re.findall(r"^(\d+)\. ", listed, flags=re.MULTILINE)
        return {"selected": [int(c) for c in candidates[:count]]}
    if "criterion leakage" in text:
        count = int(re.search(r"Criteria \((\d+)\)", text).group(1))  # type: ignore[union-attr]
        return {
            "verdicts": [
                {
                    "criterion_id": i,
                    "reason": "The question names the problem, not this element.",
                    "inferable": False,
                }
                for i in range(1, count + 1)
            ]
        }
    return {"ok": True, "words": ["plan", "the", "experiment"], "language": "English"}
