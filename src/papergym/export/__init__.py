"""Exports of built instances for trainers and readers (SPEC §2 step 10, §7).

One module per format, imported directly so that a command pays only for what it uses
(``pyarrow`` and ``datasets`` are slow to import):

- :mod:`papergym.export.verl`: verl RL parquet (``data_source, prompt, ability, reward_model,
  extra_info``).
- :mod:`papergym.export.trl`: a Hugging Face dataset for TRL (GRPO and rubric-conditioned
  self-distillation, with a ``privileged_context`` column).
- :mod:`papergym.export.hf`: the full records as a Hugging Face dataset, nested fields kept.
- :mod:`papergym.export.parquet`: the full records as plain parquet, round-tripping to
  :class:`~papergym.records.Instance` via ``read_parquet_instances``.
- :mod:`papergym.export.card`: the dataset card (``card.md`` and ``card.json``).
- :mod:`papergym.export.run`: the run code of ``papergym export`` (its verb: :mod:`papergym.cli.export`).
"""
