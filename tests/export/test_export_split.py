from __future__ import annotations

import pytest
from export_samples import instance

from papergym.errors import BadInputError
from papergym.export.common import split_instances


def test_export_split_is_deterministic_and_independent_of_order_and_size() -> None:
    instances = [instance(f"paper{n}") for n in range(200)]
    first = split_instances(instances, 0.2)
    again = split_instances(list(reversed(instances)), 0.2)
    assert {i.id for i in first["test"]} == {i.id for i in again["test"]}
    assert 20 <= len(first["test"]) <= 60  # about a fifth
    assert len(first["train"]) + len(first["test"]) == 200
    # Growing the dataset never moves an instance that was already placed.
    smaller = split_instances(instances[:50], 0.2)
    assert {i.id for i in smaller["test"]} <= {i.id for i in first["test"]}
    # Input order is kept inside each split.
    order = [i.id for i in instances]
    assert [order.index(i.id) for i in first["train"]] == sorted(
        order.index(i.id) for i in first["train"]
    )


def test_export_split_keeps_a_paper_in_one_split_across_recipes() -> None:
    instances = [instance(f"p{n}", recipe=r) for n in range(60) for r in ("papergym", "innov")]
    split = split_instances(instances, 0.5)
    train_papers = {i.paper_id for i in split["train"]}
    assert train_papers.isdisjoint(i.paper_id for i in split["test"])


def test_export_split_without_fraction_is_all_train_and_bad_fractions_fail() -> None:
    instances = [instance("a")]
    assert split_instances(instances, None) == {"train": instances}
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(BadInputError, match="--split"):
            split_instances(instances, bad)
