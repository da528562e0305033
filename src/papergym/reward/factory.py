"""The judge and the rubric reward a ``reward`` section describes, with the LLM endpoints of the
``llm`` section (or of the judge's own file, ``reward.llm_config``)."""

from __future__ import annotations

from typing import Literal

from papergym.llm.config import LLMConfig
from papergym.reward.reward import Judge, RubricReward
from papergym.reward.settings import RewardSection


def judge_llm(section: RewardSection, llm: LLMConfig) -> LLMConfig:
    """The LLM configuration the judge uses: ``reward.llm_config``'s file, else ``llm``.

    The file says which model judges; where its answers are cached is the command's to say, as
    for every other LLM of the run. So the command's ``llm.cache=false`` (``--no-cache``)
    turns the judge's cache off too, and its ``llm.cache_dir`` (``--cache-dir``,
    ``$PAPERGYM_CACHE_DIR``) moves it; the file's own ``cache: false`` still holds, and its
    ``cache_dir`` is used where the command names none.
    """
    if section.llm_config is None:
        return llm
    from papergym.llm.config import load_llm_config

    return load_llm_config(
        section.llm_config, env={}, no_cache=not llm.cache, cache_dir=llm.cache_dir
    )


def judge_kind(section: RewardSection, llm: LLMConfig) -> Literal["llm", "offline"]:
    """Which judge ``reward.judge`` names once ``auto`` is resolved."""
    if section.judge == "auto":
        return "llm" if judge_llm(section, llm).configured else "offline"
    return section.judge


def make_judge(section: RewardSection, llm: LLMConfig) -> Judge:
    """The judge ``section`` names: the offline baseline, or the LLM judge role."""
    if judge_kind(section, llm) == "offline":
        from papergym.reward.offline import OfflineJudge

        return OfflineJudge(calibration=section.calibration)
    from papergym.llm.client import LLMClient
    from papergym.reward.judge import RubricJudge

    per_call = section.criteria_per_call
    return RubricJudge(
        LLMClient.from_config(judge_llm(section, llm)),
        mode="all" if per_call == "all" else "one" if per_call == 1 else "k",
        k=per_call if isinstance(per_call, int) else 5,
        advisory_reference=section.advisory_reference,
        general_reference=section.general_reference,
    )


def make_reward(section: RewardSection, llm: LLMConfig, judge: Judge | None = None) -> RubricReward:
    """The rubric reward ``section`` describes (its judge built from ``llm`` unless given)."""
    return RubricReward(
        judge or make_judge(section, llm),
        alpha=section.alpha,
        cache_size=section.cache_size,
        max_answer_chars=section.max_answer_chars or None,
        normalisation=section.normalisation,
    )
