"""Load for the reward server: mixed-rubric requests, a concurrent client, and the expected scores.

Shared by ``tests/reward/test_reward_server.py`` and ``benchmarks/reward_server_load.py``.

The requests mix rubrics on purpose: every answer (a paper's reference answer, or a part of it) is
scored under its own paper's rubric *and* under the other papers' rubrics, and the labels are
verl ``ground_truth`` strings, which carry no instance id. A reward that keyed its memory by
instance id and answer would serve one paper's score under another paper's rubric; the check is
that every score over HTTP equals the in-process score of the same (rubric, answer) pair.

The client is a minimal HTTP/1.1 client on asyncio streams (one keep-alive connection per
simulated trainer worker), so the measurement carries no client library's overhead, and it talks
to 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from papergym.export.verl import ground_truth
from papergym.recipes.general import GENERAL_CRITERIA
from papergym.records import Criterion, Instance, Rubric

_TOPICS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "sparse attention",
        "How can attention over long documents be made cheaper without losing accuracy?",
        (
            "We route each query to a few key blocks chosen by a learned router.",
            "The router is trained jointly with the model using a straight-through estimator.",
            "We evaluate on long-document question answering and compare against dense attention.",
            "We measure wall-clock speed and memory at sequence lengths up to 64k tokens.",
        ),
    ),
    (
        "protein folding",
        "How can protein structure prediction use evolutionary information more efficiently?",
        (
            "We compress the multiple sequence alignment into a small set of learned profiles.",
            "A geometric transformer predicts residue distances from these profiles.",
            "We evaluate on held-out protein families using the TM-score.",
            "An ablation removes the profile compression to measure its contribution.",
        ),
    ),
    (
        "monetary policy",
        "How do interest rate announcements affect household consumption?",
        (
            "We use high-frequency bond price changes around announcements as monetary shocks.",
            "Household spending comes from anonymised bank transaction records.",
            "We estimate local projections of consumption on the identified shocks.",
            "We split households by liquid wealth to test for heterogeneous responses.",
        ),
    ),
    (
        "galaxy surveys",
        "How can photometric redshifts of faint galaxies be estimated more reliably?",
        (
            "We train a convolutional network directly on multi-band galaxy images.",
            "Spectroscopic redshifts from a deep field serve as training labels.",
            "We calibrate the predicted redshift distributions with a held-out spectroscopic sample.",
            "Outlier fraction and scatter are reported as a function of magnitude.",
        ),
    ),
    (
        "robot grasping",
        "How can a robot learn to grasp unseen household objects from few demonstrations?",
        (
            "We pretrain a visual encoder on egocentric videos of human hands.",
            "A grasp policy is fine-tuned with behaviour cloning on twenty demonstrations.",
            "We test on thirty unseen objects in a real kitchen.",
            "Success rate is compared against a policy trained from scratch.",
        ),
    ),
    (
        "soil carbon",
        "How does cover cropping change soil organic carbon in arable fields?",
        (
            "We sample soil cores at three depths across paired fields over five years.",
            "Carbon content is measured by dry combustion in the laboratory.",
            "A mixed-effects model separates field, year and treatment effects.",
            "We compare the sequestration rate with regional carbon accounting defaults.",
        ),
    ),
)


def _first_half(sentence: str) -> str:
    """The first half of a sentence's words, lower-cased: a criterion that its sentence meets
    and says more than (a criterion copied whole is the gameable form, issue 23)."""
    words = sentence.rstrip(".").split()
    kept = " ".join(words[: max(3, (len(words) + 1) // 2)])
    return kept[0].lower() + kept[1:] + "."


def mixed_instances(count: int = len(_TOPICS)) -> list[Instance]:
    """Small instances on unrelated topics, each with its own rubric (the first half of each of
    its method sentences)."""
    out: list[Instance] = []
    for index, (topic, question, sentences) in enumerate(_TOPICS[:count]):
        criteria = tuple(
            Criterion(
                id=f"c{rank}",
                text=f"The plan specifies that {_first_half(s)}",
                dimension="method" if rank <= 2 else "experiment",
                origin="extractive",
                rank=rank,
            )
            for rank, s in enumerate(sentences, start=1)
        )
        out.append(
            Instance(
                id=f"load-{index}",
                recipe="papergym",
                builder="extractive",
                paper_id=f"paper-{index}",
                title=topic,
                question=question,
                reference_answer=" ".join(sentences),
                rubric=Rubric(specific=criteria, general=GENERAL_CRITERIA),
            )
        )
    return out


def answers_for(instance: Instance) -> list[str]:
    """Distinct answers drawn from one instance's reference: whole, halves, a padded copy."""
    sentences = instance.reference_answer.split(". ")
    half = max(1, len(sentences) // 2)
    return [
        instance.reference_answer,
        ". ".join(sentences[:half]),
        ". ".join(sentences[half:]),
        instance.reference_answer + " We will also release our code.",
        "",
    ]


@dataclass(frozen=True)
class Item:
    """One (rubric, answer) pair: the instance whose rubric grades, and the answer."""

    instance: Instance
    answer: str


@dataclass(frozen=True)
class LoadRequest:
    """One HTTP request: ``path`` and the items it scores."""

    path: str  # "/get_reward" or "/score"
    items: tuple[Item, ...]

    def body(self) -> bytes:
        """The JSON body; labels are verl ground truths (no instance id) on both paths."""
        if self.path == "/get_reward":
            prompts = [f"Question: {i.instance.question}\nAnswer: " for i in self.items]
            payload: dict[str, Any] = {
                "query": [p + i.answer for p, i in zip(prompts, self.items, strict=True)],
                "prompts": prompts,
                "labels": [ground_truth(i.instance) for i in self.items],
            }
        else:
            payload = {
                "items": [
                    {"ground_truth": ground_truth(i.instance), "answer": i.answer}
                    for i in self.items
                ]
            }
        return json.dumps(payload).encode()


def mixed_requests(
    instances: Sequence[Instance], count: int, *, items_per_request: int = 2, seed: int = 0
) -> list[LoadRequest]:
    """``count`` requests over every (rubric, answer) pair, own and other papers' answers mixed.

    The pairs are dealt in a shuffled round-robin so that the same answer arrives under several
    rubrics close together in time: exactly when an id-keyed cache would mix them up.
    """
    pairs = [
        Item(rubric, answer)
        for source in instances
        for answer in answers_for(source)
        for rubric in instances
    ]
    rng = random.Random(seed)
    rng.shuffle(pairs)
    requests: list[LoadRequest] = []
    for n in range(count):
        items = tuple(
            pairs[(n * items_per_request + k) % len(pairs)] for k in range(items_per_request)
        )
        requests.append(LoadRequest("/get_reward" if n % 2 == 0 else "/score", items))
    return requests


@dataclass
class Result:
    """What one request got back: status, seconds, and the reward values (None: unscored)."""

    status: int
    seconds: float
    values: list[float | None] = field(default_factory=list)
    error: str = ""


async def _post(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    host: str,
    path: str,
    body: bytes,
    token: str | None,
) -> tuple[int, bytes]:
    head = [
        f"POST {path} HTTP/1.1",
        f"Host: {host}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
    ]
    if token:
        head.append(f"Authorization: Bearer {token}")
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
    await writer.drain()
    status_line = await reader.readline()
    if not status_line:
        raise ConnectionError("the server closed the connection")
    status = int(status_line.split()[1])
    length = 0
    while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    return status, await reader.readexactly(length)


def _values(request: LoadRequest, status: int, payload: bytes) -> list[float | None]:
    if status != 200:
        return []
    data = json.loads(payload)
    if request.path == "/get_reward":
        unscored = data["extra_logs"]["rubric_unscored"]
        return [None if u else float(r) for r, u in zip(data["rewards"], unscored, strict=True)]
    return [s["value"] for s in data["scores"]]


async def drive(
    host: str,
    port: int,
    requests: Sequence[LoadRequest],
    *,
    concurrency: int,
    timeout: float,
    token: str | None = None,
) -> tuple[list[Result], float]:
    """Send ``requests`` from ``concurrency`` clients at once; (results in order, wall seconds).

    Each client holds one keep-alive connection and sends its next request when the previous
    answer is in. The whole run is bounded by ``timeout`` seconds.
    """
    results: list[Result | None] = [None] * len(requests)
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(len(requests)):
        queue.put_nowait(index)

    async def client() -> None:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            while not queue.empty():
                index = queue.get_nowait()
                request = requests[index]
                started = time.perf_counter()
                try:
                    status, payload = await _post(
                        reader, writer, host, request.path, request.body(), token
                    )
                    results[index] = Result(
                        status, time.perf_counter() - started, _values(request, status, payload)
                    )
                except (ConnectionError, asyncio.IncompleteReadError, ValueError) as error:
                    results[index] = Result(0, time.perf_counter() - started, error=repr(error))
                    writer.close()
                    reader, writer = await asyncio.open_connection(host, port)
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.wait_for(
        asyncio.gather(*(client() for _ in range(min(concurrency, len(requests))))), timeout
    )
    wall = time.perf_counter() - started
    return [r if r is not None else Result(0, 0.0, error="not sent") for r in results], wall


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0–100) by nearest rank."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]
