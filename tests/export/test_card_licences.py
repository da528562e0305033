"""The card of a build from fetched papers lists the papers per licence; other cards do not."""

from __future__ import annotations

import json
from pathlib import Path

from export_samples import instance

from papergym.export.card import card_stats, write_card
from papergym.records import Instance, RecipeName

CC_BY = "http://creativecommons.org/licenses/by/4.0/"


def _licensed(paper: str, licence: str | None, recipe: RecipeName = "papergym") -> Instance:
    return instance(paper, recipe=recipe).model_copy(update={"licence": licence})


def test_licences_are_counted_per_paper() -> None:
    instances = [
        _licensed("a", CC_BY),
        _licensed("a", CC_BY, recipe="innov"),  # the same paper twice counts once
        _licensed("b", CC_BY),
        _licensed("c", None),
    ]
    stats = card_stats(instances, [])
    assert stats["licences"] == {CC_BY: 2, "not stated": 1}


def test_a_card_without_licences_has_no_licence_section(tmp_path: Path) -> None:
    assert "licences" not in card_stats([instance("a")], [])
    write_card(
        tmp_path, [instance("a")], [], config={}, usage=None, builder_note=None, leakage=None
    )
    assert "Licences" not in (tmp_path / "card.md").read_text()


def test_the_card_lists_the_licences(tmp_path: Path) -> None:
    instances = [_licensed("a", CC_BY), _licensed("b", None)]
    write_card(tmp_path, instances, [], config={}, usage=None, builder_note=None, leakage=None)
    card = (tmp_path / "card.md").read_text()
    assert "### Licences" in card
    assert f"| {CC_BY} | 1 |" in card and "| not stated | 1 |" in card
    assert json.loads((tmp_path / "card.json").read_text())["stats"]["licences"] == {
        CC_BY: 1,
        "not stated": 1,
    }
