"""The card of an ARES build: ``card.md`` for people, ``card.json`` with the same numbers.

Written at the end of every ``papergym build --recipe ares`` (offline too), from the shards'
files, read one line at a time, so the card costs no more memory than the build. It holds what
the paper build's card holds where that applies (counts, drops by step and reason, domains, LLM
calls and tokens per kept instance, ``usage_rows`` for ``papergym export``), and what only ARES
has: personas, the distribution of criterion weights, pitfalls per instance, and the corpus
files. The numbers come from :func:`ares_card_stats` (pure given the files); no timestamps, so an
unchanged build rewrites an identical card.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from statistics import mean
from typing import Any

import yaml
from pydantic import BaseModel

from papergym import __version__
from papergym.export.card import RECIPE_TEXT, usage_stats
from papergym.jsonl import iter_jsonl, write_text_atomic
from papergym.recipes.ares.output import CORPUS_FILE
from papergym.recipes.ares.record import AresDraft
from papergym.recipes.ares.runner import AresResult
from papergym.recipes.ares.shards import KEPT_FILE, Mode, ShardStore
from papergym.recipes.output import SETTINGS_FILE
from papergym.records import Instance

CARD_MD, CARD_JSON = "card.md", "card.json"


def spread(values: Sequence[int | float]) -> dict[str, Any]:
    """Mean, min, max and a histogram (value → count, ascending) of ``values``."""
    if not values:
        return {"mean": None, "min": None, "max": None, "histogram": {}}
    histogram = Counter(values)
    return {
        "mean": round(mean(values), 4),
        "min": min(values),
        "max": max(values),
        "histogram": {_label(v): histogram[v] for v in sorted(histogram)},
    }


def _label(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _kept(store: ShardStore, mode: Mode, shards: Iterable[int]) -> Iterator[BaseModel]:
    model: type[BaseModel] = Instance if mode == "llm" else AresDraft
    for shard in sorted(shards):
        path = store.path(KEPT_FILE[mode], shard)
        if path.is_file():
            yield from iter_jsonl(path, model)


def _rubric_stats(instances: Iterable[Instance]) -> tuple[Counter[str], dict[str, Any]]:
    """Domains, and the weights of the instances' criteria (one pass)."""
    domains: Counter[str] = Counter()
    weights: list[float] = []
    per_instance: list[int] = []
    pitfalls: list[int] = []
    leaked = 0
    for instance in instances:
        domains[instance.domain or "unknown"] += 1
        criteria = instance.rubric.specific
        weights.extend(c.weight for c in criteria)
        per_instance.append(len(criteria))
        pitfalls.append(sum(1 for c in criteria if c.weight < 0))
        leaked += sum(1 for c in criteria for v in c.leakage if v.leaked)
    rubric = {
        "criteria": len(weights),
        "weights": spread(weights),
        "desired": sum(1 for w in weights if w > 0),
        "pitfalls": sum(1 for w in weights if w < 0),
        "criteria_per_instance": spread(per_instance),
        "pitfalls_per_instance": spread(pitfalls),
        "instances_with_pitfall": sum(1 for n in pitfalls if n),
        "leaked_verdicts": leaked,  # pitfalls the question states stay (docs/ares.md),
    }
    return domains, rubric


def ares_card_stats(
    store: ShardStore, mode: Mode, result: AresResult, usage_rows: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Every number of the card, from the shards of ``mode`` (kept files, texts) and ``result``."""
    shards = [k for k, r in store.records().items() if r.mode == mode]
    if mode == "llm":
        domains, rubric = _rubric_stats(
            i for i in _kept(store, mode, shards) if isinstance(i, Instance)
        )
    else:
        drafts = (d for d in _kept(store, mode, shards) if isinstance(d, AresDraft))
        domains, rubric = Counter(d.domain or "unknown" for d in drafts), None
    personas = Counter(t.persona for k in shards for t in store.texts(k) if t.persona is not None)
    by_step = Counter[str]()
    by_reason: dict[str, dict[str, int]] = {}
    for (step, kind), count in sorted(result.drops.items()):
        by_step[step] += count
        by_reason.setdefault(step, {})[kind] = count
    kept_this_run = result.kept_this_run
    return {
        "recipe": "ares",
        "mode": mode,
        "documents": result.documents,
        "kept": result.kept,
        "dropped": result.dropped,
        "failed": len(result.failures),
        "kept_this_run": kept_this_run,
        "drops": {"by_step": dict(by_step.most_common()), "by_reason": by_reason},
        "domains": dict(domains.most_common()),
        "personas": dict(personas.most_common()),
        "rubric": rubric,
        "usage": usage_stats(usage_rows, kept_this_run) if usage_rows else None,
    }


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _read_settings(out: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load((out / SETTINGS_FILE).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def ares_card_data(
    store: ShardStore, mode: Mode, result: AresResult, usage_rows: list[dict[str, Any]] | None
) -> dict[str, Any]:
    """Everything ``card.json`` holds."""
    corpus = _read_json(store.out / CORPUS_FILE) or []
    return {
        "papergym_version": __version__,
        "stats": ares_card_stats(store, mode, result, usage_rows or []),
        "corpus": [{"file": str(name), "bytes": int(size)} for name, size in corpus],
        # the raw rows too, as a paper build's card has them: ``papergym export`` reads them
        "usage_rows": usage_rows,
        "builder_note": None,
        "settings": _read_settings(store.out),
    }


# --- rendering ----------------------------------------------------------------------------------


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return [*lines, ""]


def _share(part: int, whole: int) -> str:
    return f"{part:,} ({part / whole:.1%})" if whole else f"{part:,}"


def _counts_section(stats: Mapping[str, Any]) -> list[str]:
    kept = "instances" if stats["mode"] == "llm" else "kept by the offline steps"
    rows = [
        ("documents read", f"{stats['documents']:,}"),
        (kept, _share(stats["kept"], stats["documents"])),
        ("dropped", _share(stats["dropped"], stats["documents"])),
    ]
    if stats["failed"]:
        rows.append(("failed (endpoint; retried next run)", f"{stats['failed']:,}"))
    lines = ["## Counts", "", *_table(("", "count"), rows)]
    reasons = stats["drops"]["by_reason"]
    if reasons:
        drops = [(s, k, f"{n:,}") for s, kinds in reasons.items() for k, n in kinds.items()]
        lines += ["### Drops by step and reason", "", *_table(("step", "reason", "count"), drops)]
    return lines


def _distribution_section(title: str, counted: Mapping[str, int], limit: int = 30) -> list[str]:
    if not counted:
        return []
    total = sum(counted.values())
    rows = [(name, _share(n, total)) for name, n in list(counted.items())[:limit]]
    more = len(counted) - limit
    tail = [f"... and {more} more (card.json lists all).", ""] if more > 0 else []
    return [f"## {title}", "", *_table((title.lower().rstrip("s"), "kept"), rows), *tail]


def _rubric_section(rubric: Mapping[str, Any] | None) -> list[str]:
    if not rubric:
        return []
    weights = rubric["weights"]
    per, pitfalls = rubric["criteria_per_instance"], rubric["pitfalls_per_instance"]
    return [
        "## Weighted rubrics",
        "",
        f"{rubric['criteria']:,} criteria: {rubric['desired']:,} desired (positive weight), "
        f"{rubric['pitfalls']:,} pitfalls (negative weight); {per['mean']} criteria and "
        f"{pitfalls['mean']} pitfalls per instance on average; "
        f"{rubric['instances_with_pitfall']:,} instances have at least one pitfall.",
        "",
        *_table(("weight", "criteria"), weights["histogram"].items()),
        *_table(("pitfalls per instance", "instances"), pitfalls["histogram"].items()),
    ]


def _usage_section(usage: Mapping[str, Any] | None, kept_this_run: int) -> list[str]:
    if not usage:
        return []
    per = usage.get("per_instance") or {}
    rows = [
        (key, f"{usage[key]:,}", "n/a" if per.get(key) is None else f"{per[key]:,.2f}")
        for key in ("calls", "cache_hits", "tokens_in", "tokens_out")
    ]
    stages = [
        (s, f"{v['calls']:,}", f"{v['tokens_in'] + v['tokens_out']:,}")
        for s, v in usage["by_stage"].items()
    ]
    return [
        "## LLM usage (the latest run)",
        "",
        f"Per kept instance: over the {kept_this_run:,} instances this run built.",
        "",
        *_table(("", "total", "per kept instance"), rows),
        *_table(("stage", "calls", "tokens"), stages),
    ]


def _corpus_section(corpus: Sequence[Mapping[str, Any]]) -> list[str]:
    if not corpus:
        return []
    rows = [(f"`{c['file']}`", f"{c['bytes']:,}") for c in corpus]
    return ["## Corpus", "", *_table(("file", "bytes"), rows)]


def render_ares_card(data: Mapping[str, Any]) -> str:
    """``card.md`` text from :func:`ares_card_data` (pure, for tests)."""
    stats = data["stats"]
    what = RECIPE_TEXT.get("ares", "question-answering tasks from plain documents (ARES).")
    offline = (
        " This is an offline build: the documents the steps that need no LLM kept (prefilter, "
        "domain by embedding), not instances yet."
        if stats["mode"] == "offline"
        else ""
    )
    lines = [
        "# PaperGym ARES dataset",
        "",
        f"Instances for {what}{offline}",
        "",
        *_counts_section(stats),
        *_distribution_section("Domains", stats["domains"]),
        *_distribution_section("Personas", stats["personas"]),
        *_rubric_section(stats["rubric"]),
        *_usage_section(stats["usage"], stats["kept_this_run"]),
        *_corpus_section(data["corpus"]),
        f"Generated by papergym {__version__}.",
    ]
    return "\n".join(lines) + "\n"


def write_ares_card(store: ShardStore, mode: Mode, result: AresResult) -> dict[str, Any]:
    """Write ``card.md`` and ``card.json`` into the build folder; the card's data."""
    rows = result.usage.as_dict() if result.usage is not None else None
    data = ares_card_data(store, mode, result, rows)
    write_text_atomic(store.out / CARD_JSON, json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    write_text_atomic(store.out / CARD_MD, render_ares_card(data))
    return data
