"""PaperGym environments inside other frameworks, one import point each.

- :mod:`papergym.integrations.common`: what both share (the reward configured from keyword
  arguments, a score's metrics, :class:`~papergym.integrations.common.UnscoredAnswer`); no
  third-party import.
- :mod:`papergym.integrations.verifiers`: a ``verifiers`` (v1, 0.4) taskset, task and
  single-turn harness; the environment module ``papergym export --format verifiers`` writes
  imports them from here.
- :mod:`papergym.integrations.inspect`: the ``papergym`` inspect_ai task, scorer and metrics
  (registered with inspect through the ``inspect_ai`` entry point of PaperGym's package).

The frameworks are optional extras (``papergym[verifiers]``, ``papergym[inspect]``); their
APIs move between releases, so everything that touches them lives in these two modules.
"""
