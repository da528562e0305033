"""The sample browser: every question of an eval or compare folder, as JSON embedded in the page
and drawn a page at a time by ``templates/browser.js`` (inline, allowed by its hash under the
page's Content-Security-Policy).

The data comes in two parts so that a page of 10,000 questions is usable before it has
finished loading: a small *index* (per question what the list, the filters and the sort read:
id, title, each system's score and ``[criterion, met]`` checks) placed right after the
browser's container, before the script; and the *details* (question text, answers, reasons,
quotes, criterion texts) in blocks of ``DETAIL_CHUNK`` questions at the end of the page, read
(one block, once) only when a question is opened.

The data is untrusted text: it travels in ``<script type="application/json">`` blocks (never
executed) with ``<``, ``>`` and ``&`` written as JSON escapes, so no answer can close a block
or open a comment; the script reads it with ``JSON.parse`` and writes it with ``textContent``
only, never as HTML.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from markupsafe import Markup, escape

from papergym.eval import records as er
from papergym.eval.compare import records as cr
from papergym.report.parts import BrowserMarkup, CompareDir, EvalDir

BROWSER_ANSWER_CHARS = 4000  # an answer longer than this is cut in the browser (marked so)
TITLE_CHARS = 140
DETAIL_CHUNK = 200  # questions per details block: opening one question parses only its block
FILTER_CRITERIA = 500  # criterion ids offered in the filter's list (any id can be typed)


@dataclass(frozen=True)
class BrowserScript:
    """The inline script and the CSP source that allows it (its sha256)."""

    text: str
    csp_source: str


def browser_script() -> BrowserScript:
    """The browser's script and its ``'sha256-…'`` CSP source."""
    text = (
        resources.files("papergym.report")
        .joinpath("templates/browser.js")
        .read_text(encoding="utf-8")
    )
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return BrowserScript(text, f"'sha256-{digest}'")


def embed_json(payload: object) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<`` (so no ``</script>`` or
    ``<!--``), ``>`` or ``&`` is left as itself."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def browser_markup(
    key: str, kind: str, head: dict[str, Any], rows: Sequence[tuple[dict[str, Any], dict[str, Any]]]
) -> BrowserMarkup:
    """The browser's container with its index block, and its details blocks. ``head`` is what
    all questions share (kind, systems, score name); ``rows`` is each question's (index entry,
    details entry), in the list's order."""
    data_id = f"browser-data-{escape(key)}"
    details_id = f"browser-details-{escape(key)}"
    criteria = sorted(
        {c[0] for item, _ in rows for e in item["systems"].values() for c in e["checks"]}
    )
    index = {**head, "chunk": DETAIL_CHUNK, "criteria": criteria[:FILTER_CRITERIA]}
    index["items"] = [item for item, _ in rows]
    blocks = [
        f'<script type="application/json" id="{details_id}-{number}">'
        f"{embed_json([detail for _, detail in rows[start : start + DETAIL_CHUNK]])}</script>"
        for number, start in enumerate(range(0, len(rows), DETAIL_CHUNK))
    ]
    return BrowserMarkup(
        Markup(
            f'<div class="browser" data-kind="{escape(kind)}" data-source="{data_id}" '
            f'data-details="{details_id}">'
            '<p class="note">The sample browser needs the page\'s inline script.</p></div>\n'
            f'<script type="application/json" id="{data_id}">{embed_json(index)}</script>'
        ),
        Markup("\n".join(blocks)),
    )


def _title(question: str) -> str:
    first = " ".join(question.split())
    return first[:TITLE_CHARS] + ("…" if len(first) > TITLE_CHARS else "") if first else ""


def _verdict_row(verdict: er.EvalVerdict) -> list[Any]:
    """[criterion id, "" (its text is the question's, once), met (true, false, null =
    unscored), reason, quote, unbacked]."""
    return [
        verdict.criterion_id,
        "",
        verdict.passed,
        verdict.reason,
        verdict.quote or "",
        verdict.unbacked or "",
    ]


def _eval_entry(
    answer: er.EvalAnswer | None, score: er.EvalScore | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One system's answer to one question: (its index entry, its details entry)."""
    text = answer.answer if answer else ""
    checks = [_verdict_row(v) for v in score.verdicts] if score else []
    unscored = (
        (score.unscored_reason or "unscored")
        if score is not None and score.value is None
        else ("not scored" if score is None else "")
    )
    return (
        {
            "score": score.value if score else None,
            "unscored": unscored,
            "checks": [[row[0], row[2]] for row in checks],
        },
        {
            "words": answer.words if answer else 0,
            "text": text[:BROWSER_ANSWER_CHARS],
            "cut": len(text) > BROWSER_ANSWER_CHARS,
            "checks": checks,
        },
    )


def eval_browser(directory: EvalDir, key: str) -> BrowserMarkup:
    """Every question of an eval folder (sample 0 of each), each system's answer, score and
    verdicts with their reasons."""
    systems = [s.system.name for s in directory.summary.systems]
    answers = {(a.system, a.instance_id): a for a in directory.answers if a.sample == 0}
    scores = {(s.system, s.instance_id): s for s in directory.scores if s.sample == 0}
    ids = sorted({instance_id for _, instance_id in scores} | {i for _, i in answers})
    rows = []
    for instance_id in ids:
        asked = directory.questions.get(instance_id)
        entries = {
            name: _eval_entry(answers.get((name, instance_id)), scores.get((name, instance_id)))
            for name in systems
        }
        question = asked.question if asked else ""
        rows.append(
            (
                {
                    "id": instance_id,
                    "title": _title(question),
                    "systems": {name: entry[0] for name, entry in entries.items()},
                },
                {
                    "question": question,
                    "criteria": asked.criteria if asked else {},
                    "systems": {name: entry[1] for name, entry in entries.items()},
                },
            )
        )
    head = {"kind": "eval", "systems": systems, "score": "reward"}
    return browser_markup(key, "eval", head, rows)


def _compare_checks(verdicts: Sequence[cr.CompareVerdict], system: str) -> list[list[Any]]:
    """One row per verdict and criterion: did the judge pick ``system``."""
    rows: list[list[Any]] = []
    for verdict in verdicts:
        shown = f"{verdict.judge} · order {' / '.join(verdict.ordering)}"
        if verdict.picks is None:
            reason = f"unparsed: {verdict.unparsed_reason or ''} {verdict.reason}".strip()
            rows.append(["(all)", shown, None, reason, "", ""])
            continue
        for criterion, pick in verdict.picks.items():
            rows.append([criterion, shown, pick.system == system, verdict.reason, "", ""])
    return rows


def compare_browser(directory: CompareDir, key: str) -> BrowserMarkup:
    """Every question of a compare folder: per system, the share of parsed picks it won and
    each verdict (judge, order shown, criterion) with the judge's reason."""
    systems = list(directory.summary.systems)
    by_question: dict[str, list[cr.CompareVerdict]] = defaultdict(list)
    for verdict in directory.verdicts:
        by_question[verdict.instance_id].append(verdict)
    rows = []
    for instance_id in sorted(by_question):
        verdicts = by_question[instance_id]
        index, details = {}, {}
        for name in systems:
            checks = _compare_checks(verdicts, name)
            decided = [row[2] for row in checks if row[2] is not None]
            index[name] = {
                "score": sum(decided) / len(decided) if decided else None,
                "unscored": "" if decided else "no parsed verdict",
                "checks": [[row[0], row[2]] for row in checks],
            }
            details[name] = {"words": 0, "text": "", "cut": False, "checks": checks}
        rows.append(
            (
                {"id": instance_id, "title": "", "systems": index},
                {"question": "", "criteria": {}, "systems": details},
            )
        )
    head = {"kind": "compare", "systems": systems, "score": "share won"}
    return browser_markup(key, "compare", head, rows)
