"""The sample browser: every question of an eval or compare folder, as JSON embedded in the page
and drawn a page at a time by ``templates/browser.js`` (inline, allowed by its hash under the
page's Content-Security-Policy).

The data is untrusted text: it travels in a ``<script type="application/json">`` block (never
executed) with ``<``, ``>`` and ``&`` written as JSON escapes, so no answer can close the block
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
from papergym.report.parts import CompareDir, EvalDir

BROWSER_ANSWER_CHARS = 4000  # an answer longer than this is cut in the browser (marked so)
TITLE_CHARS = 140


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


def browser_markup(key: str, kind: str, payload: dict[str, Any]) -> Markup:
    """The browser's container (filled by the script) and its data block."""
    data_id = f"browser-data-{escape(key)}"
    return Markup(
        f'<div class="browser" data-kind="{escape(kind)}" data-source="{data_id}">'
        '<p class="note">The sample browser needs the page\'s inline script.</p></div>\n'
        f'<script type="application/json" id="{data_id}">{embed_json(payload)}</script>'
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


def _eval_entry(answer: er.EvalAnswer | None, score: er.EvalScore | None) -> dict[str, Any]:
    text = answer.answer if answer else ""
    return {
        "score": score.value if score else None,
        "unscored": (score.unscored_reason or "unscored")
        if score is not None and score.value is None
        else ("not scored" if score is None else ""),
        "words": answer.words if answer else 0,
        "text": text[:BROWSER_ANSWER_CHARS],
        "cut": len(text) > BROWSER_ANSWER_CHARS,
        "checks": [_verdict_row(v) for v in score.verdicts] if score else [],
    }


def eval_browser(directory: EvalDir, key: str) -> Markup:
    """Every question of an eval folder (sample 0 of each), each system's answer, score and
    verdicts with their reasons."""
    systems = [s.system.name for s in directory.summary.systems]
    answers = {(a.system, a.instance_id): a for a in directory.answers if a.sample == 0}
    scores = {(s.system, s.instance_id): s for s in directory.scores if s.sample == 0}
    ids = sorted({instance_id for _, instance_id in scores} | {i for _, i in answers})
    items = []
    for instance_id in ids:
        asked = directory.questions.get(instance_id)
        items.append(
            {
                "id": instance_id,
                "title": _title(asked.question if asked else ""),
                "question": asked.question if asked else "",
                "criteria": asked.criteria if asked else {},
                "systems": {
                    name: _eval_entry(
                        answers.get((name, instance_id)), scores.get((name, instance_id))
                    )
                    for name in systems
                },
            }
        )
    payload = {"kind": "eval", "systems": systems, "score": "reward", "items": items}
    return browser_markup(key, "eval", payload)


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


def compare_browser(directory: CompareDir, key: str) -> Markup:
    """Every question of a compare folder: per system, the share of parsed picks it won and
    each verdict (judge, order shown, criterion) with the judge's reason."""
    systems = list(directory.summary.systems)
    by_question: dict[str, list[cr.CompareVerdict]] = defaultdict(list)
    for verdict in directory.verdicts:
        by_question[verdict.instance_id].append(verdict)
    items = []
    for instance_id in sorted(by_question):
        verdicts = by_question[instance_id]
        entries = {}
        for name in systems:
            checks = _compare_checks(verdicts, name)
            decided = [row[2] for row in checks if row[2] is not None]
            entries[name] = {
                "score": sum(decided) / len(decided) if decided else None,
                "unscored": "" if decided else "no parsed verdict",
                "words": 0,
                "text": "",
                "cut": False,
                "checks": checks,
            }
        items.append(
            {"id": instance_id, "title": "", "question": "", "criteria": {}, "systems": entries}
        )
    payload = {"kind": "compare", "systems": systems, "score": "share won", "items": items}
    return browser_markup(key, "compare", payload)
