"""The report's page at scale: an eval folder of many questions (two systems, one sample each,
a few hundred words per answer, eight verdicts with reasons and quotes per answer) written
with ``papergym report``; it prints the page's size and the index's share of it, the time to
write it, and what headless Chromium measures in the page itself (first paint, browser ready:
the list drawn, load event; the sample browser writes them on ``<body>`` as data attributes,
read back with ``--dump-dom``), and checks that a filter set in the address changes what the
browser shows. The same figures for a control page: the same blocks laid out the old way (all
data before the script, the script last), for the gain of the layout.

    python benchmarks/report_scale.py [--questions 10000] [--quick] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from papergym.eval import records as er
from papergym.eval.summary import Bootstrap, summarise
from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.report.run import write_report

SYSTEMS = ("base", "grpo")
WORDS = [
    "method",
    "experiment",
    "baseline",
    "ablation",
    "dataset",
    "metric",
    "variance",
    "seed",
    "control",
    "result",
]


def _answer(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _verdicts(rng: random.Random, instance_id: str, bias: float) -> tuple[er.EvalVerdict, ...]:
    return tuple(
        er.EvalVerdict(
            criterion_id=f"c{rank}",
            kind="specific",
            dimension="method" if rank < 5 else "experiment",
            rank=rank,
            passed=rng.random() < bias,
            reason=f"{instance_id}: " + _answer(rng, 18),
            quote=_answer(rng, 8),
        )
        for rank in range(1, 9)
    )


def write_eval_dir(path: Path, questions: int, seed: int = 0) -> Path:
    """A synthetic eval folder of ``questions`` questions answered by two systems."""
    rng = random.Random(seed)
    ids = [f"q{index:05d}" for index in range(questions)]
    answers: list[er.EvalAnswer] = []
    scores: list[er.EvalScore] = []
    for s_index, system in enumerate(SYSTEMS):
        for instance_id in ids:
            words = rng.randint(120, 400)
            verdicts = _verdicts(rng, instance_id, 0.45 + 0.15 * s_index)
            value = sum(bool(v.passed) for v in verdicts) / len(verdicts)
            answers.append(
                er.EvalAnswer(
                    system=system,
                    instance_id=instance_id,
                    sample=0,
                    answer=_answer(rng, words),
                    words=words,
                    prompt_tokens=120,
                    completion_tokens=int(words * 1.3),
                    latency_s=round(rng.uniform(0.5, 4.0), 3),
                    cost_usd=None,
                )
            )
            scores.append(
                er.EvalScore(
                    system=system,
                    instance_id=instance_id,
                    sample=0,
                    value=value,
                    specific=value,
                    words=words,
                    verdicts=verdicts,
                    judge="offline",
                )
            )
    systems = [er.EvalSystem(name=name, spec=name, kind="endpoint", model=name) for name in SYSTEMS]
    summaries, pairs = summarise(systems, scores, Bootstrap(resamples=200))
    summary = er.EvalSummary(
        version="bench",
        data="synthetic",
        data_format="instances",
        data_id="synthetic",
        split="test",
        questions=questions,
        samples=1,
        temperature=0.0,
        max_tokens=1024,
        judge="offline",
        alpha=0.7,
        seed=seed,
        resamples=200,
        systems=summaries,
        pairs=pairs,
    )
    path.mkdir(parents=True, exist_ok=True)
    write_jsonl(path / er.ANSWERS_FILE, answers)
    write_jsonl(path / er.SCORES_FILE, scores)
    write_jsonl(
        path / er.QUESTIONS_FILE,
        [
            er.EvalQuestion(
                instance_id=i,
                question=f"How would you test claim {i}? " + _answer(rng, 30),
                criteria={f"c{r}": _answer(rng, 10) for r in range(1, 9)},
            )
            for i in ids
        ],
    )
    write_text_atomic(path / er.SUMMARY_FILE, summary.model_dump_json(indent=1))
    return path


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if found := shutil.which(name):
            return found
    return None


def dump_dom(browser: str, url: str) -> tuple[str, float]:
    """The page's DOM after load (its timings written on <body>) and Chromium's wall time."""
    started = time.perf_counter()
    completed = subprocess.run(
        [
            browser,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--virtual-time-budget=5000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if completed.returncode != 0:
        raise SystemExit(f"chromium failed: {completed.stderr[-2000:]}")
    return completed.stdout, time.perf_counter() - started


INDEX_BLOCK = re.compile(
    r'<script type="application/json" id="browser-data-[^"]*">.*?</script>', re.S
)
DETAILS_BLOCK = re.compile(
    r'<script type="application/json" id="browser-details-[^"]*">.*?</script>\n?', re.S
)
CODE_BLOCK = re.compile(r"<script>.*?</script>\n?", re.S)


def index_share(html: str) -> float:
    """The share of the page taken by the browsers' index blocks."""
    return sum(len(block) for block in INDEX_BLOCK.findall(html)) / len(html)


def old_layout(html: str) -> str:
    """The page laid out as before the index/details split: every data block before the
    script (the details right after the index) and the script at the end of the body."""
    code = CODE_BLOCK.search(html)
    if code is None:
        raise SystemExit("the page has no script")
    details = "".join(DETAILS_BLOCK.findall(html))
    body = DETAILS_BLOCK.sub("", CODE_BLOCK.sub("", html))
    body = INDEX_BLOCK.sub(lambda m: m.group(0) + "\n" + details, body, count=1)
    return body.replace("</body>", code.group(0) + "</body>")


def measure(browser: str, page: Path, label: str) -> str:
    """Size, first paint, browser ready and load event of one page in headless Chromium."""
    dom, wall = dump_dom(browser, page.as_uri())
    html = page.read_text(encoding="utf-8")
    print(
        f"{label}: page {page.stat().st_size / 1e6:.2f} MB (index {index_share(html):.1%}); "
        f"first paint {body_timing(dom, 'first-paint-ms')}, browser ready "
        f"{body_timing(dom, 'browser-ready-ms')}, load event {body_timing(dom, 'load-ms')}; "
        f"wall {wall:.1f} s for launch, load and dump"
    )
    return dom


def body_timing(dom: str, name: str) -> str:
    found = re.search(rf'<body[^>]*\sdata-{name}="([0-9.]+)"', dom)
    return f"{found.group(1)} ms" if found else "not measured"


def shown(dom: str) -> tuple[int, int]:
    found = re.search(r'data-shown="(\d+)" data-total="(\d+)"', dom)
    if not found:
        raise SystemExit("the sample browser did not draw its status line")
    return int(found.group(1)), int(found.group(2))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="200 questions: a smoke run")
    parser.add_argument("--keep", type=Path, help="write the folder and page here (kept)")
    args = parser.parse_args()
    questions = 200 if args.quick else args.questions
    root = args.keep or Path(tempfile.mkdtemp(prefix="report-scale-"))
    started = time.perf_counter()
    folder = write_eval_dir(root / "eval", questions)
    print(
        f"eval folder: {questions} questions × {len(SYSTEMS)} systems "
        f"({time.perf_counter() - started:.1f} s to write)"
    )
    started = time.perf_counter()
    page = root / "report.html"
    write_report([folder], page)
    print(
        f"papergym report: {time.perf_counter() - started:.2f} s; page "
        f"{page.stat().st_size / 1e6:.2f} MB"
    )
    browser = chromium()
    if browser is None:
        print("Chromium not found: no browser timings")
        return 0
    dom = measure(browser, page, "headless Chromium, index first, details last")
    total = shown(dom)
    control = root / "report-old-layout.html"
    control.write_text(old_layout(page.read_text(encoding="utf-8")), encoding="utf-8")
    measure(browser, control, "control, all data before the script at the end")
    rows = dom.count('<details class="sample"')
    print(f"sample browser: {total[0]} of {total[1]} questions; {rows} rows in the DOM")
    filtered, _ = dump_dom(browser, page.as_uri() + "#system=grpo&min=0.9&sort=diff")
    after = shown(filtered)
    print(f"filter #system=grpo&min=0.9: {after[0]} of {after[1]} questions")
    if total[0] != questions or not 0 < after[0] < total[0]:
        print("the filter did not change what the browser shows", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
