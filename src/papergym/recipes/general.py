"""The general rubric: one fixed, instance-independent set applied to every plan (SPEC §2 step 7).

It is graded in its own pass. The texts are ours; each is a binary statement a judge can check.
"""

from __future__ import annotations

from papergym.records import GeneralCriterion

GENERAL_CRITERIA: tuple[GeneralCriterion, ...] = (
    GeneralCriterion(
        id="general-requirements",
        text="The plan addresses every requirement the task states; examples listed in the task "
        "are treated as illustrations, not as the complete list.",
    ),
    GeneralCriterion(
        id="general-specificity",
        text="The plan gives a detailed, specific solution: concrete components, steps and "
        "settings rather than generic intentions.",
    ),
    GeneralCriterion(
        id="general-soundness",
        text="The plan has no overlooked flaw that would prevent it from working as described.",
    ),
    GeneralCriterion(
        id="general-justification",
        text="The plan justifies its main choices by explaining why they serve the goal.",
    ),
    GeneralCriterion(
        id="general-efficiency",
        text="The plan is efficient: it avoids cost and effort that the goal does not require.",
    ),
    GeneralCriterion(
        id="general-ethics",
        text="The plan raises no ethical problem, or names and mitigates the ones it raises.",
    ),
    GeneralCriterion(
        id="general-consistency",
        text="The plan is internally consistent: no step contradicts another.",
    ),
)
