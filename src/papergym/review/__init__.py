"""Simulated peer review (SPEC §5): ``papergym review`` runs N independent LLM reviewers (or the
offline, fitted baseline) over papers, ``review fit`` fits that baseline, ``review eval`` measures
a reviewer against human reviewers, and :class:`~papergym.review.reward.ReviewReward` turns the
mean simulated rating into a reward for TRL, verl, OpenRLHF and ``serve-reward``."""
