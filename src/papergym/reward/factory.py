"""The judge and the rubric reward a ``reward`` section describes, with the LLM endpoints of the
``llm`` section (or of the judge's own file, ``reward.llm_config``)."""

from __future__ import annotations

from typing import Literal

from papergym.errors import BadInputError
from papergym.llm.config import LLMConfig
from papergym.reward.rating import AnswerJudge
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
    """The rubric judge ``section`` names: the offline baseline, or the LLM judge role.

    ``verdict: graded`` with the offline judge is refused (:class:`~papergym.errors.BadInputError`): its verdict is a
    threshold on a similarity score, and a grade cut from that score would be invented.
    """
    if judge_kind(section, llm) == "offline":
        if section.verdict == "graded":
            raise BadInputError(
                None,
                "reward.verdict graded needs an LLM judge: the offline judge only decides "
                "met or not met (set reward.judge: llm and an LLM, or reward.verdict: binary)",
            )
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
        verdict=section.verdict,
    )


def make_answer_judge(section: RewardSection, llm: LLMConfig) -> AnswerJudge:
    """The whole-answer judge of an ablation mode: the holistic LLM judge (it needs an LLM),
    or the reference-similarity scorer (it needs none)."""
    if section.mode == "reference_similarity":
        from papergym.reward.similarity import ReferenceSimilarity

        return ReferenceSimilarity()
    if section.mode != "holistic":
        raise ValueError(f"reward mode {section.mode!r} has no whole-answer judge")
    if judge_kind(section, llm) == "offline":
        raise BadInputError(
            None,
            "reward.mode holistic needs an LLM judge (configure the llm section or "
            "reward.llm_config); reference_similarity needs none",
        )
    from papergym.llm.client import LLMClient
    from papergym.reward.holistic import HolisticJudge

    return HolisticJudge(LLMClient.from_config(judge_llm(section, llm)))


def make_reward(
    section: RewardSection, llm: LLMConfig, judge: Judge | AnswerJudge | None = None
) -> RubricReward:
    """The reward ``section`` describes, in its ``mode`` (its judge built from ``llm`` unless
    given). ``generic_only`` with the offline judge is refused: it grades no general criteria,
    so every score would be unscored."""
    if judge is None:
        if section.mode in ("holistic", "reference_similarity"):
            judge = make_answer_judge(section, llm)
        else:
            if section.mode == "generic_only" and judge_kind(section, llm) == "offline":
                raise BadInputError(
                    None,
                    "reward.mode generic_only needs an LLM judge: the offline judge grades no "
                    "general criteria",
                )
            judge = make_judge(section, llm)
    return RubricReward(
        judge,
        alpha=section.alpha,
        cache_size=section.cache_size,
        max_answer_chars=section.max_answer_chars or None,
        normalisation=section.normalisation,
        mode=section.mode,
    )
