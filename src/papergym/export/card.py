"""The dataset card: what a built dataset is, how it was made, and what it cost (SPEC §2 step 10).

``card.md`` is for people; ``card.json`` holds the same numbers for scripts and comparisons.
The numbers come from pure functions (:func:`card_stats`, :func:`usage_stats`) so they can be
tested without files. Output is deterministic (no timestamps), so re-exporting an unchanged
build rewrites identical cards.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from statistics import mean
from typing import Any

from papergym import __version__
from papergym.export.common import counts
from papergym.export.leakage_card import action_lines, action_stats, comparison_lines
from papergym.export.mix_card import mix_lines
from papergym.records import BuildFailure, Drop, Instance
from papergym.redact import redact_data

DIMENSIONS: tuple[str, ...] = ("method", "experiment")
"""The dimensions a paper's criteria take; others (``general``, a document's) are counted only
where they occur, so a paper build's card reads as before they existed."""
LEAKAGE_METHODS: tuple[str, ...] = ("judge", "overlap")

RECIPE_TEXT: dict[str, str] = {
    "papergym": "research-plan tasks. The question is written from the paper's research "
    "goal and background only; the reference answer and the rubric come from its method and experiments, "
    "so the criteria cannot be read off the question.",
    "innov": "the Innov benchmark. The question comes from the paper's goal and background; the "
    "reference answer and the criteria come from its method only.",
    "design": "the Design benchmark. The question states the method as given and asks for a "
    "validation experiment without hinting at baselines, datasets, metrics or outcomes; the "
    "reference answer and the criteria come from the experiments only.",
    "ares": "question-answering tasks from plain documents (ARES). A question answerable "
    "without the document, a reference answer grounded in it, and a weighted rubric: positive "
    "weights for what a good answer contains, negative weights for pitfalls (mistakes such as "
    "invented facts), each verified for leakage, faithfulness, coverage and diversity.",
}
BUILDER_TEXT: dict[str, str] = {
    "llm": "written by language models following the PaperGym pipeline: per-section extraction, "
    "per-stage merge, a question from research goal and background, a reference answer from method and "
    "experiments, and two candidate rubrics merged by selection and ranked.",
    "extractive": "**a baseline, not a written dataset.** The extractive builder uses no language "
    "model: the question, the reference answer and every criterion are sentences *selected* "
    "from the paper (with numeric results stripped), not written. Use it to check a pipeline or "
    "a trainer end to end; do not report training results on it as PaperGym results.",
}
# Reference figures from the PaperGym paper, printed beside ours for comparison (SPEC §2, §8).
PAPER_METHOD_SHARE = 0.638
PAPER_LEAKAGE = 0.0373


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 6) if whole else None


def _distribution(values: Sequence[int]) -> dict[str, Any]:
    if not values:
        return {"mean": None, "min": None, "max": None, "histogram": {}}
    histogram = {
        str(k): v
        for k, v in sorted(counts(str(x) for x in values).items(), key=lambda kv: int(kv[0]))
    }
    return {
        "mean": round(mean(values), 6),
        "min": min(values),
        "max": max(values),
        "histogram": histogram,
    }


def _leakage_from_verdicts(instances: Iterable[Instance]) -> dict[str, dict[str, Any]]:
    """Per method: criteria judged, leaked, unscored, and rate = leaked / scored (one pass:
    a build's instances are read from their file, not held)."""
    tally: dict[str, Counter[str]] = {}
    for verdict in (v for i in instances for c in i.rubric.specific for v in c.leakage):
        row = tally.setdefault(verdict.method, Counter())
        row["criteria"] += 1
        row["leaked"] += verdict.leaked is True
        row["unscored"] += verdict.leaked is None
    return {
        method: {
            "criteria": tally[method]["criteria"],
            "leaked": tally[method]["leaked"],
            "unscored": tally[method]["unscored"],
            "rate": _share(
                tally[method]["leaked"], tally[method]["criteria"] - tally[method]["unscored"]
            ),
        }
        for method in LEAKAGE_METHODS
        if method in tally
    }


def _drop_stats(drops: Sequence[Drop]) -> dict[str, Any]:
    steps = counts(d.step for d in drops)
    return {
        "total": len(drops),
        "papers": len({d.paper_id or d.source for d in drops}),
        "by_step": steps,
        "by_reason": {step: counts(d.reason for d in drops if d.step == step) for step in steps},
    }


def _dimensions(used: Iterable[str]) -> tuple[str, ...]:
    """The paper dimensions, then any other dimension the criteria use (``general``)."""
    return DIMENSIONS + tuple(sorted(set(used) - set(DIMENSIONS)))


def _source_kinds(instances: Sequence[Instance]) -> dict[str, dict[str, int]]:
    """``{"source_kinds": {kind: instances}}`` when any instance comes from a document, else
    nothing: a paper build's card keeps exactly the keys it had before documents existed."""
    if all(i.source_kind == "paper" for i in instances):
        return {}
    return {"source_kinds": counts(i.source_kind for i in instances)}


def _with_action(
    stats: dict[str, Any],
    instances: Sequence[Instance],
    drops: Sequence[Drop],
    config: Mapping[str, Any],
) -> dict[str, Any]:
    """``stats`` with ``leakage_action`` (before/after the build's action) when the build
    recorded an action or a rubric shows one; a card of an earlier build keeps its keys."""
    recorded = "leakage_action" in config or any(
        i.rubric.leaked_out or any(c.replaces for c in i.rubric.specific) for i in instances
    )
    acted = action_stats(instances, drops) if recorded else None
    return stats if acted is None else {**stats, "leakage_action": acted}


def _licences(instances: Sequence[Instance]) -> dict[str, dict[str, int]]:
    """Papers per licence as arXiv states it (fetched papers carry one), most common first;
    absent when no instance's paper states a licence, so cards of other builds are unchanged."""
    if not any(i.licence for i in instances):
        return {}
    by_paper = {i.paper_id: i.licence or "not stated" for i in instances}
    return {"licences": counts(by_paper.values())}


def card_stats(instances: Sequence[Instance], drops: Sequence[Drop]) -> dict[str, Any]:
    """Every number the card shows about the instances and the drops (no usage, no config).

    ``papers`` counts distinct sources (papers or documents: ``paper_id`` is either's content id);
    ``source_kinds`` appears when documents are among them.
    """
    # Passes over the instances, never a list of them or of their criteria: a build's
    # instances are read again from instances.jsonl on each pass.
    found: Counter[str] = Counter(c.dimension for i in instances for c in i.rubric.specific)
    by_dimension = {d: found[d] for d in _dimensions(found)}
    specific = found.total()
    return {
        "papers": len({i.paper_id for i in instances}),
        **_source_kinds(instances),
        **_licences(instances),
        "instances": len(instances),
        "recipes": counts(i.recipe for i in instances),
        "builders": counts(i.builder for i in instances),
        "domains": counts(i.domain.strip() or "unknown" for i in instances),
        "drops": _drop_stats(drops),
        "criteria": {
            "specific": specific,
            "by_dimension": by_dimension,
            "dimension_share": {d: _share(n, specific) for d, n in by_dimension.items()},
            "by_origin": counts(c.origin for i in instances for c in i.rubric.specific),
            "per_instance": _distribution([len(i.rubric.specific) for i in instances]),
            "general_per_instance": _distribution([len(i.rubric.general) for i in instances]),
            "instances_with_note": sum(1 for i in instances if i.rubric.note),
        },
        "leakage": _leakage_from_verdicts(instances),
        "words": {
            "question_mean": round(mean(len(i.question.split()) for i in instances), 2)
            if instances
            else None,
            "reference_mean": round(mean(len(i.reference_answer.split()) for i in instances), 2)
            if instances
            else None,
        },
        "instances_with_warnings": sum(1 for i in instances if i.warnings),
    }


def _int(row: Mapping[str, Any], key: str) -> int:
    value = row.get(key)
    return int(value) if isinstance(value, int | float) else 0


def usage_stats(rows: Sequence[Mapping[str, Any]], instances: int) -> dict[str, Any]:
    """Totals and per-instance figures from ``UsageTracker.as_dict()`` rows.

    As in :class:`~papergym.llm.usage.UsageTracker`, the cost sums the priced rows; unpriced
    models are listed, and the cost is ``None`` only when nothing was priced.
    """
    costs = [row.get("cost_usd") for row in rows]
    priced = [float(c) for c in costs if isinstance(c, int | float)]
    totals = {
        "calls": sum(_int(r, "calls") for r in rows),
        "cache_hits": sum(_int(r, "cache_hits") for r in rows),
        "tokens_in": sum(_int(r, "prompt_tokens") for r in rows),
        "tokens_out": sum(_int(r, "completion_tokens") for r in rows),
        "cost_usd": sum(priced) if priced else (None if rows else 0.0),
    }
    per: dict[str, Any] | None = None
    if instances:
        per = {k: (None if v is None else round(v / instances, 6)) for k, v in totals.items()}
    return {
        **totals,
        "unpriced_models": sorted(
            {str(r.get("model", "")) for r in rows if r.get("cost_usd") is None}
        ),
        "per_instance": per,
        "by_stage": {
            stage: {
                "calls": sum(_int(r, "calls") for r in rows if r.get("stage") == stage),
                "tokens_in": sum(_int(r, "prompt_tokens") for r in rows if r.get("stage") == stage),
                "tokens_out": sum(
                    _int(r, "completion_tokens") for r in rows if r.get("stage") == stage
                ),
            }
            for stage in sorted({str(r.get("stage", "")) for r in rows})
        },
    }


# --- rendering ----------------------------------------------------------------------------------


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def _cost(value: float | None, unpriced: Sequence[str]) -> str:
    if value is None:
        return "unpriced"
    text = f"${value:,.4f}"
    return f"{text} + unpriced ({', '.join(unpriced)})" if unpriced else text


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [
        "| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows
    ]
    return [*lines, ""]


def _flatten(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            items += _flatten(value, f"{name}.")
        else:
            items.append((name, value))
    return items


def _audit_value(name: str, value: Any) -> str:
    if isinstance(value, float) and "rate" in name.rsplit(".", 1)[-1]:
        return _pct(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else str(value)


PAPER_INTRO = (
    "Rubric-graded reinforcement-learning tasks for research planning, built from papers. Each "
    "instance is a question asking for a research plan, a reference answer, and a rubric: "
    "specific binary criteria (ranked, each tagged method or experiment) plus a fixed set of "
    "general criteria graded in their own pass. A judge model grades a plan against each "
    "criterion; the reward mixes the two passes (α = 0.7 in the paper)."
)
DOCUMENT_INTRO = (
    "Rubric-graded reinforcement-learning tasks for question answering, built from plain "
    "documents. Each instance is a self-contained question, a reference answer grounded in its "
    "document, and a rubric of weighted binary criteria: positive weights for what a good "
    "answer contains, negative weights for pitfalls (mistakes the answer must not make). A "
    "judge model grades an answer against each criterion; the reward is the weighted sum, "
    "normalised (by default by the sum of positive weights) and clipped to [0, 1]."
)


def _has(stats: Mapping[str, Any], kind: str) -> bool:
    """Whether instances of ``kind`` are in the card; one without ``source_kinds`` is papers only
    (including an empty build, whose card reads as it always did)."""
    kinds: Mapping[str, int] | None = stats.get("source_kinds")
    return kind == "paper" if kinds is None else kinds.get(kind, 0) > 0


def _source_noun(stats: Mapping[str, Any]) -> str:
    """What the sources are called: papers, documents, or sources when both."""
    papers, documents = _has(stats, "paper"), _has(stats, "document")
    return "source" if papers and documents else "document" if documents else "paper"


def _what_section(stats: dict[str, Any]) -> list[str]:
    intro = [PAPER_INTRO] if _has(stats, "paper") else []
    if _has(stats, "document"):
        intro.append(DOCUMENT_INTRO)
    lines = ["# PaperGym dataset card", ""]
    lines += [line for text in intro for line in (text, "")]
    extractive = stats["builders"].get("extractive", 0)
    if extractive:
        lines += [
            f"> **Baseline:** {extractive} of {stats['instances']} instances come from the "
            "extractive builder: their text is sentences selected from the papers, not written.",
            "",
        ]
    lines += ["## Recipe", ""]
    for recipe, n in stats["recipes"].items():
        lines.append(f"- `{recipe}` ({_n(n, 'instance')}): {RECIPE_TEXT.get(recipe, '')}")
    return [*lines, ""]


DOCUMENT_BUILDER_TEXT = (
    "written by language models in the ARES steps: a heuristic prefilter, a suitability "
    "classifier, domain and persona, one call co-generating question, reference answer and "
    "weighted rubric, then QA and rubric verification."
)


def _builder_text(stats: dict[str, Any], builder: str) -> str:
    """What a builder did; an LLM build from documents only followed the ARES steps."""
    if builder == "llm" and _has(stats, "document"):
        if not _has(stats, "paper"):
            return DOCUMENT_BUILDER_TEXT
        return f"{BUILDER_TEXT['llm']} Instances from documents: {DOCUMENT_BUILDER_TEXT}"
    return BUILDER_TEXT.get(builder, "")


def _builder_section(stats: dict[str, Any], builder_note: str | None) -> list[str]:
    lines = ["## Builder", ""]
    for builder, n in stats["builders"].items():
        lines.append(f"- `{builder}` ({_n(n, 'instance')}): {_builder_text(stats, builder)}")
    if builder_note:
        lines += ["", builder_note]
    return [*lines, ""]


def _split_lines(split_rule: Mapping[str, Any] | None) -> list[str]:
    """The split rule in a sentence and each split's date range, under the counts table."""
    if not split_rule:
        return []
    lines = ["### Splits", "", f"Rule: {split_rule['rule']}.", ""]
    if split_rule.get("dropped_undated"):
        lines += [f"Undated instances dropped: {split_rule['dropped_undated']}.", ""]
    ranges = split_rule.get("date_ranges") or {}
    rows = [
        (name, r.get("first") or "-", r.get("last") or "-", r.get("undated", 0))
        for name, r in ranges.items()
    ]
    return lines + _table(("split", "first month", "last month", "undated"), rows)


def _counts_section(
    stats: dict[str, Any],
    splits: Mapping[str, int] | None,
    split_rule: Mapping[str, Any] | None = None,
) -> list[str]:
    drops = stats["drops"]
    noun = _source_noun(stats)
    rows: list[tuple[str, object]] = [
        (f"{noun}s", stats["papers"]),
        ("instances", stats["instances"]),
        ("drops", f"{drops['total']} ({drops['papers']} {noun}s)"),
        ("instances with warnings", stats["instances_with_warnings"]),
        ("mean question words", stats["words"]["question_mean"]),
        ("mean reference-answer words", stats["words"]["reference_mean"]),
    ]
    if splits:
        by = f" (by {noun})"
        rows.append(("splits", ", ".join(f"{k} {v}" for k, v in splits.items()) + by))
    lines = ["## Counts", "", *_table(("what", "count"), rows), *_split_lines(split_rule)]
    domains = list(stats["domains"].items())
    lines += ["### Domains", "", *_table(("domain", "instances"), domains[:20])]
    if len(domains) > 20:
        lines += [f"({len(domains) - 20} more in card.json)", ""]
    if stats.get("licences"):
        licences = list(stats["licences"].items())
        lines += ["### Licences", "", *_table(("licence", f"{noun}s"), licences)]
    if drops["total"]:
        drop_rows = [
            (step, reason, n)
            for step, reasons in drops["by_reason"].items()
            for reason, n in reasons.items()
        ]
        lines += [
            "### Drops by step and reason",
            "",
            *_table(("step", "reason", "count"), drop_rows),
        ]
    return lines


def _failures_section(failures: Sequence[BuildFailure], noun: str = "paper") -> list[str]:
    """Sources (``noun``: papers, documents) the last build run left unfinished because the
    endpoint failed (not dropped)."""
    if not failures:
        return []
    rows = Counter((f.step, f.reason) for f in failures).most_common()
    return [
        "### Not finished: the LLM endpoint failed",
        "",
        f"{_n(len(failures), noun)} could not be built in the last run because the LLM endpoint "
        f"failed (not because of the {noun}). They are not dropped: running the same build "
        "command again retries them. Listed in `failed.jsonl`.",
        "",
        *_table(
            ("step", "reason", f"{noun}s"),
            ((step, reason, n) for (step, reason), n in rows),
        ),
    ]


def _rubric_section(stats: dict[str, Any]) -> list[str]:
    criteria = stats["criteria"]
    share = criteria["dimension_share"]
    per = criteria["per_instance"]
    lines = ["## Rubrics", "", f"{criteria['specific']} specific criteria.", ""]
    lines += _table(
        ("dimension", "criteria", "share"),
        [(d, n, _pct(share[d])) for d, n in criteria["by_dimension"].items()],
    )
    if _has(stats, "paper"):
        lines += [
            f"The PaperGym paper reports {PAPER_METHOD_SHARE * 100:.1f}% method / "
            f"{(1 - PAPER_METHOD_SHARE) * 100:.1f}% experiment for its 20k-instance set.",
            "",
        ]
    lines += [
        f"Specific criteria per instance: mean {per['mean']}, min {per['min']}, max {per['max']}.",
        "",
        *_table(("criteria", "instances"), per["histogram"].items()),
        *_table(("origin", "criteria"), criteria["by_origin"].items()),
        f"General criteria per instance: mean {criteria['general_per_instance']['mean']}. "
        f"Instances with a rubric note (fewer criteria than asked): {criteria['instances_with_note']}.",
        "",
    ]
    return lines


def _ours_overlap(stats: dict[str, Any]) -> dict[str, Any] | None:
    """The build's own overlap-screen rate as a comparison row (None when it did not run)."""
    overlap = stats["leakage"].get("overlap")
    if not overlap:
        return None
    scored = overlap["criteria"] - overlap["unscored"]
    return {"dataset": "this dataset (published)", "method": "overlap", "scored": scored,
            **{k: overlap[k] for k in ("criteria", "leaked", "unscored", "rate")}}  # fmt: skip


def _leakage_section(
    stats: dict[str, Any],
    leakage: Mapping[str, Any] | None,
    action: str | None = None,
    comparison: Sequence[dict[str, Any]] = (),
) -> list[str]:
    lines = [
        "## Leakage",
        "",
        "A criterion leaks when it can be inferred from the question alone. The PaperGym paper "
        f"reports {PAPER_LEAKAGE * 100:.2f}% for its 20k-instance set (judge).",
        "",
    ]
    verdicts = stats["leakage"]
    if verdicts:
        lines += _table(
            ("method", "criteria", "leaked", "unscored", "rate"),
            [
                (m, v["criteria"], v["leaked"], v["unscored"], _pct(v["rate"]))
                for m, v in verdicts.items()
            ],
        )
    else:
        lines += ["No leakage verdicts are stored on the criteria.", ""]
    lines += action_lines(stats.get("leakage_action"), action)
    ours = _ours_overlap(stats) if comparison else None
    lines += comparison_lines(stats.get("leakage_action"), [*comparison, *([ours] if ours else [])])
    if leakage:
        lines += ["Leakage audit:", ""]
        lines += _table(
            ("measure", "value"), ((k, _audit_value(k, v)) for k, v in _flatten(leakage))
        )
    return lines


def _usage_section(usage: dict[str, Any] | None) -> list[str]:
    lines = ["## LLM cost", ""]
    if usage is None:
        return [*lines, "No usage was recorded for this build.", ""]
    per = usage["per_instance"] or {}
    unpriced = usage["unpriced_models"]
    rows = [
        ("calls", f"{usage['calls']:,}", per.get("calls", "")),
        ("cache hits", f"{usage['cache_hits']:,}", per.get("cache_hits", "")),
        ("tokens in", f"{usage['tokens_in']:,}", per.get("tokens_in", "")),
        ("tokens out", f"{usage['tokens_out']:,}", per.get("tokens_out", "")),
        (
            "cost",
            _cost(usage["cost_usd"], unpriced),
            _cost(per.get("cost_usd"), unpriced) if per else "",
        ),
    ]
    return [*lines, *_table(("what", "total", "per instance"), rows)]


def _snippets(root: str) -> dict[str, list[str]]:
    """Loading instructions per format; ``root`` is ``""`` or ``"export/<format>/"``."""
    r = {
        name: root.replace("<format>", name)
        for name in ("verl", "trl", "hf", "parquet", "verifiers")
    }
    return {**_trainer_snippets(r), **_reader_snippets(r)}


def _trainer_snippets(r: dict[str, str]) -> dict[str, list[str]]:
    """verl and TRL: training on the export (``r``: each format's folder prefix)."""
    return {
        "verl": [
            "### verl",
            "",
            "`train.parquet` / `test.parquet`: `data_source`, chat `prompt`, `ability`, "
            "`reward_model.ground_truth` (JSON: question, reference_answer, rubric) and `extra_info` "
            "(the same, plus ids; `rubric` as a JSON string).",
            "",
            "```bash",
            "python -m verl.trainer.main_ppo algorithm.adv_estimator=grpo \\",
            f"  data.train_files={r['verl']}train.parquet data.val_files={r['verl']}test.parquet \\",
            "  data.prompt_key=prompt \\",
            "  actor_rollout_ref.rollout.n=8 \\",
            "  reward.custom_reward_function.path=<PaperGym verl reward module> \\",
            "  reward.custom_reward_function.name=compute_score",
            "# verl < 0.7.1: custom_reward_function.path=... custom_reward_function.name=...",
            "```",
            "",
        ],
        "trl": [
            "### TRL",
            "",
            "`dataset/` (`load_from_disk`) and the same rows as parquet. Columns: `prompt` (chat), "
            "`question`, `reference`, `rubric` (JSON), `privileged_context` (the rubric as text, "
            "for the self-distillation teacher only), `instance_id`, `paper_id`, `recipe`.",
            "",
            "```python",
            "from datasets import load_from_disk",
            "from trl import GRPOConfig, GRPOTrainer",
            "",
            "from papergym.reward.trl import rubric_reward",
            "",
            f'train = load_from_disk("{r["trl"]}dataset")["train"]',
            "trainer = GRPOTrainer(",
            '    model="Qwen/Qwen3-1.7B",',
            "    reward_funcs=[rubric_reward],  # PaperGym's TRL reward: reads question/reference/rubric",
            "    args=GRPOConfig(num_generations=8, beta=0.01, learning_rate=1e-5),",
            "    train_dataset=train,",
            ")",
            "```",
            "",
        ],
    }


def _reader_snippets(r: dict[str, str]) -> dict[str, list[str]]:
    """Full records, verifiers and inspect_ai: reading or evaluating the export."""
    return {
        "hf": [
            "### Full records (Hugging Face)",
            "",
            "```python",
            "from datasets import load_from_disk",
            "from papergym.export.hf import read_hf_instances",
            "",
            f'records = load_from_disk("{r["hf"]}dataset")["train"]  # rubric.specific[].leakage[]',
            f'instances = read_hf_instances("{r["hf"]}dataset")  # papergym.records.Instance',
            "```",
            "",
        ],
        "parquet": [
            "### Full records (parquet)",
            "",
            "Nested fields are parquet structs and lists, readable by pandas, polars or DuckDB.",
            "",
            "```python",
            "from papergym.export.parquet import read_parquet_instances",
            "",
            f'instances = read_parquet_instances("{r["parquet"]}train.parquet")',
            "```",
            "",
        ],
        "verifiers": [
            "### verifiers",
            "",
            "An installable verifiers environment (`load_environment(**kwargs)`; reward `rubric`, "
            "metrics `rubric_specific`, `rubric_general`; an unscored answer is a failed reward, "
            "not 0). See PaperGym's docs/integrations.md.",
            "",
            "```bash",
            *(["papergym export BUILD_DIR --format verifiers"] if r["verifiers"] else []),
            f"pip install 'papergym[verifiers]' {r['verifiers'] or '.'}",
            "vf-eval <name in pyproject.toml> -m MODEL --client.base-url URL --no-push",
            "```",
            "",
        ],
        "inspect": [
            "### inspect_ai",
            "",
            "The `papergym/papergym` inspect task over a build folder (or any rubric dataset "
            "`papergym eval` reads); `inspect view` shows each criterion's verdict and reason.",
            "",
            "```bash",
            "pip install 'papergym[inspect]'",
            "inspect eval papergym/papergym -T data=BUILD_DIR --model openai-api/local/MODEL",
            "inspect view",
            "```",
            "",
        ],
    }


def _loading_section(formats: Sequence[str]) -> list[str]:
    """Instructions for the formats in this folder, or, on a build's card, for every format."""
    lines = ["## Loading and training", ""]
    if formats:
        snippets = _snippets("")
        lines += ["Paths are relative to this card.", ""]
    else:
        snippets = _snippets("export/<format>/")
        formats = list(snippets)
        lines += [
            "Write the exports with `papergym export BUILD_DIR` (add `--split 0.05` for a test "
            "split); each format goes to `export/<format>/` with its own card.",
            "",
        ]
    for name in formats:
        lines += snippets.get(name, [])
    return lines


def _config_section(config: Mapping[str, Any]) -> list[str]:
    if not config:
        return []
    text = json.dumps(config, ensure_ascii=False, indent=2, sort_keys=True, default=str)
    return ["## Build configuration", "", "```json", text, "```", ""]


def render_card(
    stats: dict[str, Any],
    *,
    config: Mapping[str, Any],
    usage: dict[str, Any] | None,
    builder_note: str | None,
    leakage: Mapping[str, Any] | None,
    formats: Sequence[str] = (),
    splits: Mapping[str, int] | None = None,
    failures: Sequence[BuildFailure] = (),
    split_rule: Mapping[str, Any] | None = None,
    comparison: Sequence[dict[str, Any]] = (),
    mix: Mapping[str, Any] | None = None,
) -> str:
    """``card.md`` text from the numbers (pure, for tests); ``comparison``: other datasets'
    audit rates (:func:`papergym.export.leakage_card.read_comparison`); ``mix``: the build's
    discipline mix, target against achieved."""
    lines = [
        *_what_section(stats),
        *_builder_section(stats, builder_note),
        *_counts_section(stats, splits, split_rule),
        *mix_lines(mix),
        *_failures_section(failures, _source_noun(stats)),
        *_rubric_section(stats),
        *_leakage_section(stats, leakage, config.get("leakage_action"), comparison),
        *_usage_section(usage),
        *_loading_section(formats),
        *_config_section(config),
        f"Generated by papergym {__version__}.",
    ]
    return "\n".join(lines) + "\n"


def card_data(
    instances: Sequence[Instance],
    drops: Sequence[Drop],
    *,
    config: Mapping[str, Any],
    usage: Sequence[Mapping[str, Any]] | None,
    builder_note: str | None,
    leakage: Mapping[str, Any] | None,
    splits: Mapping[str, int] | None = None,
    failures: Sequence[BuildFailure] = (),
    split_rule: Mapping[str, Any] | None = None,
    comparison: Sequence[dict[str, Any]] = (),
    mix: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything ``card.json`` holds (``leakage_comparison`` only when compared, ``mix``
    only for a build with a discipline mix)."""
    extra: dict[str, Any] = (
        {"leakage_comparison": [dict(r) for r in comparison]} if comparison else {}
    )
    if mix:
        extra["mix"] = dict(mix)
    return {
        "papergym_version": __version__,
        "stats": _with_action(card_stats(instances, drops), instances, drops, config),
        "splits": dict(splits) if splits else None,
        "split_rule": dict(split_rule) if split_rule else None,
        "usage": None if usage is None else usage_stats(usage, len(instances)),
        # The raw rows too, so a later ``papergym export`` can re-render the cost section.
        "usage_rows": None if usage is None else [dict(row) for row in usage],
        "leakage_audit": dict(leakage) if leakage else None,
        "builder_note": builder_note,
        "config": dict(config),
        "failed": [f.model_dump() for f in failures],
        **extra,
    }


def write_card(
    out_dir: Path,
    instances: Sequence[Instance],
    drops: Sequence[Drop],
    *,
    config: dict[str, Any],
    usage: list[dict[str, Any]] | None,
    builder_note: str | None,
    leakage: dict[str, Any] | None,
    formats: Sequence[str] = (),
    splits: Mapping[str, int] | None = None,
    failures: Sequence[BuildFailure] = (),
    split_rule: Mapping[str, Any] | None = None,
    comparison: Sequence[dict[str, Any]] = (),
    mix: Mapping[str, Any] | None = None,
) -> None:
    """Write ``card.md`` and ``card.json`` into ``out_dir``.

    ``usage`` is ``UsageTracker.as_dict()`` rows; ``leakage`` is the leakage audit's summary
    (rates under keys containing "rate" are shown as percentages); ``formats`` limits the
    loading instructions to the exports in this folder (all when empty); ``failures`` are the
    papers a build run left unfinished because the endpoint failed; ``split_rule`` is how the
    splits were made and each one's date range (:func:`~papergym.export.datesplit.split_rule_card`). Cards are published with
    datasets, so URL userinfo and registered keys are masked in everything they hold.
    """
    data = redact_data(
        card_data(
            instances,
            drops,
            config=config,
            usage=usage,
            builder_note=builder_note,
            leakage=leakage,
            splits=splits,
            failures=failures,
            split_rule=split_rule,
            comparison=comparison,
            mix=mix,
        )
    )
    text = render_card(
        data["stats"],
        config=data["config"],
        usage=data["usage"],
        builder_note=data["builder_note"],
        leakage=data["leakage_audit"],
        formats=formats,
        splits=splits,
        failures=[BuildFailure.model_validate(f) for f in data["failed"]],
        split_rule=data["split_rule"],
        comparison=data.get("leakage_comparison") or (),
        mix=data.get("mix"),
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "card.md").write_text(text, encoding="utf-8")
    payload = json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
    (out_dir / "card.json").write_text(payload, encoding="utf-8")
