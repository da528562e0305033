"""Rebuild the demo ARES corpus from the shared papers (run from the repository root).

    python examples/corpus/build_corpus.py ../shared/papers

Each section of at least MIN_WORDS words of a paper whose source repository has a permissive
licence (MIT, BSD, Apache-2.0; see ../shared/papers/index.json) becomes one document of
papers.jsonl, with the paper, the section, the repository and the licence as metadata; the first
section of three papers is also written as a Markdown file, to show the folder format. Papers with
no licence or a copyleft one are left out. The script is not read as a document: the corpus reader
only reads .jsonl, .parquet, .txt and .md files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from papergym.ingestion import ingest

PERMISSIVE = ("MIT", "BSD", "Apache")
MIN_WORDS = 150
MAX_PER_PAPER = 5
HERE = Path(__file__).parent


def main(papers: Path) -> None:
    index = json.loads((papers / "index.json").read_text(encoding="utf-8"))
    rows: list[dict[str, object]] = []
    markdown = 0
    for entry in sorted(index, key=lambda e: e["name"]):
        licence = str(entry["license"])
        if not licence.startswith(PERMISSIVE):
            continue
        (paper,) = ingest(papers / entry["name"])
        kept = [s for s in paper.sections if s.words >= MIN_WORDS and not s.appendix]
        for number, section in enumerate(kept[:MAX_PER_PAPER]):
            doc_id = f"{entry['name']}#{number}"
            url = f"https://github.com/{entry['repo']}/tree/{entry['commit']}"
            if number == 0 and markdown < 3:
                markdown += 1
                text = f"# {section.heading}\n\n{section.text}\n"
                (HERE / f"{entry['name']}.md").write_text(text, encoding="utf-8")
                continue
            rows.append(
                {
                    "id": doc_id,
                    "url": url,
                    "text": section.text,
                    "title": f"{paper.title}: {section.heading}",
                    "licence": licence.split(" (")[0],
                    "source": entry["paper"],
                }
            )
    with (HERE / "papers.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} sections in papers.jsonl, {markdown} Markdown files")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/papers"))
