"""A setting that is ``llm``, ``auto`` or an offline way (build.builder, review.reviewer),
resolved against whether an LLM is configured; ``llm`` without one is refused in one line."""

from __future__ import annotations

import pytest

from papergym.errors import BadInputError
from papergym.llm.config import BackendConfig, LLMConfig, llm_or, require_llm
from papergym.recipes.endpoint import choose_builder
from papergym.review.runtime import reviewer_kind
from papergym.review.settings import ReviewSection

NONE = LLMConfig()
SOME = LLMConfig(default=BackendConfig(model="m", base_url="http://127.0.0.1:9/v1"))


@pytest.mark.parametrize(
    ("choice", "llm", "expected"),
    [
        ("auto", NONE, "offline"),
        ("auto", SOME, "llm"),
        ("llm", SOME, "llm"),
        ("offline", NONE, "offline"),
        ("offline", SOME, "offline"),
    ],
)
def test_auto_is_llm_when_one_is_configured(choice: str, llm: LLMConfig, expected: str) -> None:
    assert llm_or(choice, "offline", llm, "x=llm needs an LLM") == expected


def test_llm_without_one_is_refused_naming_the_setting_and_the_ways_to_give_one() -> None:
    with pytest.raises(BadInputError) as caught:
        llm_or("llm", "offline", NONE, "x=llm needs an LLM")
    assert str(caught.value) == (
        "x=llm needs an LLM: pass --llm-config, or --base-url and --model, or set llm in the "
        "-c file"
    )
    require_llm(SOME, "never said")  # configured: nothing to refuse


def test_the_builder_and_the_reviewer_keep_their_messages() -> None:
    assert choose_builder("extractive", SOME) == "extractive"
    assert choose_builder("auto", NONE) == "extractive"
    with pytest.raises(BadInputError, match=r"^--builder llm \(build\.builder\) needs an LLM: "):
        choose_builder("llm", NONE)
    assert reviewer_kind(ReviewSection(reviewer="auto"), SOME) == "llm"
    with pytest.raises(BadInputError, match=r"^review\.reviewer=llm needs an LLM: pass "):
        reviewer_kind(ReviewSection(reviewer="llm"), NONE)
