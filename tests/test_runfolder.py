"""runfolder: a folder resumes when its recorded identity matches, and is refused — naming each
key that differs — when it does not, or when it holds another command's output."""

from __future__ import annotations

from pathlib import Path

import pytest

from papergym.errors import BadInputError
from papergym.runfolder import RunRecord, differences, merged_identity, refuse_foreign, resumes

RECORD = RunRecord("plan.json", "review", limit=2)


def test_new_and_empty_folders_start_a_run_and_nothing_is_written(tmp_path: Path) -> None:
    assert resumes(tmp_path / "new", RECORD, {"a": 1}) is False
    assert not (tmp_path / "new").exists()
    (tmp_path / "empty").mkdir()
    assert resumes(tmp_path / "empty", RECORD, {"a": 1}) is False


def test_same_identity_resumes_and_other_keys_of_the_record_are_ignored(tmp_path: Path) -> None:
    RECORD.write(tmp_path, {"a": 1, "note": "x"})
    assert resumes(tmp_path, RECORD, {"a": 1}) is True


def test_a_different_identity_is_refused_naming_each_key(tmp_path: Path) -> None:
    RECORD.write(tmp_path, {"a": 1, "b": {"c": "http://u:secret@h/v1"}, "d": 1, "e": 1})
    with pytest.raises(BadInputError) as refused:
        resumes(tmp_path, RECORD, {"a": 2, "b": {"c": "x"}, "d": 2, "e": 2})
    message = str(refused.value)
    assert "holds a review with a different configuration (a: 1 → 2; b.c: " in message
    assert "secret" not in message  # masked
    assert "… 2 more" in message  # limit=2
    assert message.endswith("use another -o folder or the same settings")


def test_another_commands_folder_and_a_file_path_are_refused(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("mine")
    with pytest.raises(BadInputError, match="holds no PaperGym review"):
        resumes(tmp_path, RECORD, {"a": 1})
    with pytest.raises(BadInputError, match="not a folder"):
        resumes(tmp_path / "mine.txt", RECORD, {"a": 1})
    with pytest.raises(BadInputError, match="not a folder"):
        resumes(tmp_path / "mine.txt" / "sub", RECORD, {"a": 1})
    assert (tmp_path / "mine.txt").read_text() == "mine"


def test_an_unreadable_record_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text("{not json")
    with pytest.raises(BadInputError, match="unreadable"):
        resumes(tmp_path, RECORD, {"a": 1})


def test_differences_flatten_nested_keys_and_mark_unset_ones() -> None:
    assert differences({"m": {"judge": "x"}, "k": None}, {"m": {"judge": "y"}, "n": 1}) == [
        "k: (none) → (unset)",
        "m.judge: x → y",
        "n: (unset) → 1",
    ]
    assert RunRecord("a.yaml", "ARES build").a_what == "an ARES build"


def test_a_folder_without_the_record_is_refused_naming_its_first_entries(tmp_path: Path) -> None:
    record = RunRecord("verdicts.jsonl", "compare")
    refuse_foreign(tmp_path / "new", record)  # new and empty folders are fine
    for name in ("d.txt", "a.txt", "c.txt", "b.txt"):
        (tmp_path / name).write_text("mine")
    with pytest.raises(BadInputError) as refused:
        refuse_foreign(tmp_path, record)
    assert str(refused.value).endswith(
        "holds a.txt, b.txt, c.txt but no verdicts.jsonl: not a `papergym compare` folder; "
        "use another -o"
    )
    (tmp_path / "verdicts.jsonl").write_text("")
    refuse_foreign(tmp_path, record)
    with pytest.raises(BadInputError, match=r"holds a\.txt"):  # a stricter test of its own
        refuse_foreign(tmp_path, record, ours=lambda out: False)
    with pytest.raises(BadInputError, match="not a folder"):
        refuse_foreign(tmp_path / "a.txt", record)


def test_merged_identity_adds_up_accumulated_entries_and_refuses_other_values(
    tmp_path: Path,
) -> None:
    record = RunRecord("plan.json", "eval", hint="use another -o")
    first = {"samples": 2, "systems": {"a": "x@1"}}
    assert merged_identity(tmp_path, record, first, accumulate=("systems",)) == first
    record.write(tmp_path, {"samples": 2, "systems": {"a": "x@1", "b": "y@1"}})
    # a system of its own is added; the recorded ones are kept
    merged = merged_identity(
        tmp_path, record, {"samples": 2, "systems": {"c": "z@1"}}, accumulate=("systems",)
    )
    assert merged == {"samples": 2, "systems": {"a": "x@1", "b": "y@1", "c": "z@1"}}
    with pytest.raises(BadInputError) as refused:
        merged_identity(
            tmp_path, record, {"samples": 3, "systems": {"a": "x@2"}}, accumulate=("systems",)
        )
    assert str(refused.value).endswith(
        "holds an eval with a different configuration (samples: 2 → 3; systems.a: x@1 → x@2); "
        "use another -o"
    )
    # a key the record lacks reads as None (a file from before that key existed)
    same = {"samples": 2, "judge_backend": None, "systems": {}}
    assert merged_identity(tmp_path, record, same, accumulate=("systems",))["judge_backend"] is None
