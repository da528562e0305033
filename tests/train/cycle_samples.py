"""A ``papergym write prepare`` folder built in-process, and a plain deterministic reviewer."""

from __future__ import annotations

from pathlib import Path

from papergym.jsonl import write_jsonl, write_text_atomic
from papergym.review.records import ICLR, PaperReview, decide
from papergym.sources.bib import Reference
from papergym.write.data import LeakageFigures, WriteExample, WriteManifest, WritePrompt

TOPICS = ("sparse attention", "long context", "protein folding", "auction design", "graph nets")


def write_data(folder: Path, count: int = 4, test: int = 0) -> Path:
    """A DATA folder with ``count`` training prompts (and ``test`` held-out ones)."""
    folder.mkdir(parents=True, exist_ok=True)
    prompts = []
    for index in range(count + test):
        topic = TOPICS[index % len(TOPICS)]
        keys = (f"key{index}a", f"key{index}b")
        references = tuple(Reference(key=k, title=f"On {topic} ({k})") for k in keys)
        listing = "\n".join(f"[{r.key}] {r.title}" for r in references)
        prompts.append(
            WritePrompt(
                id=f"p{index}",
                source=f"paper{index}.tex",
                split="train" if index < count else "test",
                system="Write a short paper.",
                prompt=f"Write a paper about {topic} citing:\n{listing}",
                keys=keys,
                references=references,
            )
        )
    write_jsonl(folder / "prompts.jsonl", prompts)
    write_jsonl(folder / "sft.jsonl", [example_of(p) for p in prompts])
    manifest = WriteManifest(
        version="test",
        command="papergym write prepare papers -o data",
        papers=len(prompts),
        examples=len(prompts),
        train=count,
        test=test,
        drops=(),
        leakage=LeakageFigures(ngram=8, papers_checked=len(prompts), references_left_out=0),
        settings={},
    )
    write_text_atomic(folder / "manifest.json", manifest.model_dump_json(indent=1))
    return folder


def example_of(prompt: WritePrompt) -> WriteExample:
    """The SFT row of ``prompt``: a short paper citing its keys."""
    cites = ", ".join(f"\\cite{{{key}}}" for key in prompt.keys)
    completion = (
        f"% Outline: introduction, method\n\\title{{A study}}\n\\section{{Introduction}}\n"
        f"We build on {cites}.\n\\section{{Method}}\nWe describe the method."
    )
    return WriteExample(
        id=prompt.id,
        source=prompt.source,
        title="A study",
        split=prompt.split,
        system=prompt.system,
        prompt=prompt.prompt,
        completion=completion,
        keys=prompt.keys,
    )


class WordCountReviewer:
    """Rates a paper by its length: 1 plus one point per word, up to 10. Deterministic, so the
    tiny model's papers of different lengths give pairs; the number of calls is counted."""

    name = "word-count"

    def __init__(self) -> None:
        self.calls = 0

    async def review(self, paper_id: str, text: str) -> PaperReview:
        self.calls += 1
        score = float(min(ICLR.high, ICLR.low + len(text.split())))
        return PaperReview(
            paper_id=paper_id,
            source=paper_id,
            reviewer_model=self.name,
            baseline=True,
            score=score,
            decision=decide(score, 5.5),
            threshold=5.5,
        )
