"""The README of a verifiers export shows commands that work on that export."""

from __future__ import annotations

from papergym.export.verifiers import readme_text


def test_the_python_example_loads_a_split_the_export_has() -> None:
    without_test = readme_text("papergym-plans", "papergym_plans", {"train": 3})
    # it used to say split="test" whatever the export held: a FileNotFoundError when run
    assert 'load_environment(split="train"' in without_test
    assert 'split="test"' not in without_test
    with_test = readme_text("papergym-plans", "papergym_plans", {"train": 3, "test": 1})
    assert 'load_environment(split="test"' in with_test
