"""The ARES corpus readers: every format, streaming, and what bad input gives."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from papergym.errors import BadInputError
from papergym.recipes.ares.corpus import Columns, Corpus, Entry
from papergym.recipes.ares.documents import Document
from papergym.records import Drop


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def documents(entries: list[Entry]) -> list[Document]:
    return [e.item for e in entries if isinstance(e.item, Document)]


def drops(entries: list[Entry]) -> list[Drop]:
    return [e.item for e in entries if isinstance(e.item, Drop)]


def test_jsonl_rows_keep_id_url_and_scalar_metadata(tmp_path: Path) -> None:
    path = tmp_path / "web.jsonl"
    path.write_text(
        json.dumps({"text": "First page.", "id": "a", "url": "http://x", "lang": "en", "n": 3})
        + "\n\n"  # a blank line is not a row
        + json.dumps({"text": "Second page.", "tags": ["nested", "dropped"]})
        + "\n",
        encoding="utf-8",
    )
    entries = list(Corpus.open([path]))
    first, second = documents(entries)
    assert first == Document(
        id="a", text="First page.", url="http://x", source="web.jsonl", meta={"lang": "en", "n": 3}
    )
    assert second.id == "web.jsonl:3" and second.meta == {}  # file:line when there is no id
    assert [e.position for e in entries] == [0, 1]


def test_column_names_are_configurable(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", [{"body": "Some text.", "doc": 7, "link": "u"}])
    corpus = Corpus.open([path], Columns(text="body", id="doc", url="link"))
    (document,) = documents(list(corpus))
    assert (document.id, document.text, document.url) == ("7", "Some text.", "u")


def test_parquet_is_read_a_batch_at_a_time_and_skipped_row_groups_are_not_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "big.parquet"
    rows = 2000
    table = pa.table({"text": [f"doc {i}" for i in range(rows)], "score": list(range(rows))})
    pq.write_table(table, path, row_group_size=100)  # 20 row groups
    corpus = Corpus.open([path])
    stream = corpus.entries()
    assert next(stream).item == Document(
        id="big.parquet:0", text="doc 0", source="big.parquet", meta={"score": 0}
    )
    assert [e.position for e in stream] == list(range(1, rows))
    # only the rows of positions 1500..1599 are wanted: 19 row groups are never decoded
    wanted = list(corpus.entries(lambda p: 1500 <= p < 1600))
    assert [e.position for e in wanted] == list(range(1500, 1600))
    assert documents(wanted)[0].text == "doc 1500"


def test_saved_hugging_face_datasets_with_and_without_splits(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_dict({"text": ["one", "", "three"], "id": ["a", "b", "c"]}).save_to_disk(
        tmp_path / "single"
    )
    datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_dict({"text": ["t1", "t2"]}),
            "test": datasets.Dataset.from_dict({"text": ["s1"]}),
        }
    ).save_to_disk(tmp_path / "splits")
    single = list(Corpus.open([tmp_path / "single"]))
    assert [d.id for d in documents(single)] == ["a", "c"]
    assert drops(single)[0].reason == "empty document"
    split = documents(list(Corpus.open([tmp_path / "splits"])))
    assert [(d.source, d.id, d.text) for d in split] == [
        ("splits/test", "splits/test:0", "s1"),
        ("splits/train", "splits/train:0", "t1"),
        ("splits/train", "splits/train:1", "t2"),
    ]


def test_folders_of_text_files_skip_their_readme_and_drop_bad_files(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# A\nbody", encoding="utf-8")
    (folder / "sub" / "b.txt").write_text("plain", encoding="utf-8")
    (folder / "README.md").write_text("what this corpus is", encoding="utf-8")
    (folder / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (folder / "empty.txt").write_text("  \n", encoding="utf-8")
    (folder / "big.txt").write_text("x" * 3000, encoding="utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG")  # not a corpus file: ignored in a folder
    entries = list(Corpus.open([folder], max_document_mb=0.002))
    assert [(d.id, d.text) for d in documents(entries)] == [
        ("notes/a.md", "# A\nbody"),
        ("notes/sub/b.txt", "plain"),
    ]
    reasons = {d.paper_id: d.reason for d in drops(entries)}
    assert reasons == {
        "notes/big.txt": "file of 0.003 MB over the 0.002 MB limit",
        "notes/empty.txt": "empty document",
        "notes/latin1.txt": "not UTF-8 text (byte 3)",
    }


def test_bad_rows_are_drops_with_reasons_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        b'{"text": "good one"}\n'
        b'{"text": "caf\xe9"}\n'
        b"not json\n"
        b"[1, 2]\n"
        b'{"text": 5}\n'
        b'{"title": "no text"}\n'
        b'{"text": ""}\n'
        b'{"text": "good two"}\n'
    )
    entries = list(Corpus.open([path]))
    assert [d.text for d in documents(entries)] == ["good one", "good two"]
    assert [(d.paper_id, d.step, d.reason.split(":")[0]) for d in drops(entries)] == [
        ("mixed.jsonl:2", "read", "not UTF-8 text (byte 13 of the line)"),
        ("mixed.jsonl:3", "read", "not valid JSON"),
        ("mixed.jsonl:4", "read", "not a JSON object"),
        ("mixed.jsonl:5", "read", "'text' is not a string"),
        ("mixed.jsonl:6", "read", "no 'text' field"),
        ("mixed.jsonl:7", "read", "empty document"),
    ]


def test_a_100_mb_record_is_dropped_without_being_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as handle:
        handle.write(b'{"text": "small"}\n{"text": "')
        chunk = b"a" * 1_000_000
        for _ in range(100):
            handle.write(chunk)
        handle.write(b'"}\n{"text": "after"}\n')
    tracemalloc.start()
    try:
        entries = list(Corpus.open([path], max_document_mb=10))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [d.text for d in documents(entries)] == ["small", "after"]
    (drop,) = drops(entries)
    assert drop.reason == "record of 100 MB over the 10 MB limit"
    assert peak < 40_000_000  # the 10 MB cap plus 1 MB chunks, never the 100 MB line


def test_a_text_cell_over_the_limit_in_parquet_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"text": ["ok", "y" * 5000, "ok too"], "id": ["a", "b", "c"]}), path)
    entries = list(Corpus.open([path], max_document_mb=0.001))
    assert [d.id for d in documents(entries)] == ["a", "c"]
    assert drops(entries)[0].paper_id == "b"
    assert drops(entries)[0].reason == "text of 0.005 MB over the 0.001 MB limit"


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("table.csv", b"text\nhello\n", "not a corpus file: expected JSONL"),
        ("bad.jsonl", b"this is not json\n", "not JSONL: the first line is not a JSON object"),
        ("notext.jsonl", b'{"body": "x"}\n', "no 'text' field in the first record"),
        ("empty.jsonl", b"\n\n", "empty JSONL file"),
        ("bad.parquet", b"PAR1 not really", "not a parquet file"),
    ],
)
def test_bad_files_are_one_line_errors_naming_them(
    tmp_path: Path, name: str, content: bytes, reason: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(BadInputError) as error:
        Corpus.open([path])
    assert str(error.value).startswith(f"{path}: {reason}")
    assert "\n" not in str(error.value)


def test_a_parquet_without_the_text_column_names_its_columns(tmp_path: Path) -> None:
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"content": ["x"], "id": ["a"]}), path)
    with pytest.raises(BadInputError, match=r"no 'text' column \(columns: content, id\); set ares"):
        Corpus.open([path])


def test_missing_paths_and_empty_folders_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no such file or folder"):
        Corpus.open([tmp_path / "nowhere.jsonl"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInputError, match="no corpus files in the folder"):
        Corpus.open([tmp_path / "empty"])


def test_positions_run_on_across_files_and_wanted_rows_alone_are_parsed(tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [{"text": f"a{i}"} for i in range(5)])
    b = tmp_path / "b.txt"
    b.write_text("bee", encoding="utf-8")
    c = write_jsonl(tmp_path / "c.jsonl", [{"text": f"c{i}"} for i in range(3)])
    corpus = Corpus.open([a, b, c])
    assert [(e.position, e.item.paper_id if isinstance(e.item, Drop) else e.item.text) for e in corpus] == [
        (0, "a0"), (1, "a1"), (2, "a2"), (3, "a3"), (4, "a4"), (5, "bee"), (6, "c0"), (7, "c1"), (8, "c2"),
    ]  # fmt: skip
    odd = list(corpus.entries(lambda p: p % 2 == 1))
    assert [e.position for e in odd] == [1, 3, 5, 7]
