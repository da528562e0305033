"""Which stages feed which part of an instance, per recipe (SPEC §2 and its benchmarks): the one
table both builders route recipes by (the extractive baseline and the LLM recipe).

The separation is the point of PaperGym: the question is written only from stages a policy may
see, the reference answer and the criteria only from stages it must come up with itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from papergym.errors import BadInputError
from papergym.records import RecipeName, StageName

Dimension = Literal["method", "experiment"]


@dataclass(frozen=True)
class RecipeSpec:
    """The stage routing of one recipe.

    ``question_stages`` feed the question; of them, ``given_stages`` are stated as given (the
    design benchmark hands the method to the policy and asks for its validation).
    ``answer_stages`` feed the reference answer and the specific criteria, whose ``dimension``
    must be one of ``dimensions``. ``task`` is what the question asks for, in our words;
    ``question_note`` what the LLM recipe's question prompt adds for this recipe.
    """

    name: RecipeName
    question_stages: tuple[StageName, ...]
    answer_stages: tuple[StageName, ...]
    dimensions: tuple[Dimension, ...]
    task: str
    given_stages: tuple[StageName, ...] = ()
    question_note: str = ""

    @property
    def required_stages(self) -> tuple[StageName, ...]:
        """Stages that must be non-empty for an instance to be built."""
        return tuple(dict.fromkeys(self.question_stages + self.answer_stages))


# The dimension a criterion takes from the stage it was drawn from.
STAGE_DIMENSION: dict[StageName, Dimension] = {"solution": "method", "experiment": "experiment"}

_RECIPES: dict[str, RecipeSpec] = {
    "papergym": RecipeSpec(
        name="papergym",
        question_stages=("research_goal", "background"),
        answer_stages=("solution", "experiment"),
        dimensions=("method", "experiment"),
        task="a research plan: the method and the experiments that would test it",
    ),
    "innov": RecipeSpec(
        name="innov",
        question_stages=("research_goal", "background"),
        answer_stages=("solution",),
        dimensions=("method",),
        task="a method: its core idea, its components and why they address the gap",
    ),
    "design": RecipeSpec(
        name="design",
        question_stages=("research_goal", "background", "solution"),
        given_stages=("solution",),
        answer_stages=("experiment",),
        dimensions=("experiment",),
        task="an experiment that validates a given method",
        question_note="The method below is given: state it as the approach to be validated and "
        "ask for a plan of experiments that would validate it. Do not hint at baselines, "
        "datasets, metrics, ablations or expected outcomes.",
    ),
}

RECIPE_NAMES: tuple[RecipeName, ...] = ("papergym", "innov", "design")


def recipe(name: str) -> RecipeSpec:
    """The routing of recipe ``name``; an unknown name is the user's error."""
    try:
        return _RECIPES[name]
    except KeyError:
        known = ", ".join(RECIPE_NAMES)
        raise BadInputError(None, f"unknown recipe {name!r} (known: {known})") from None
