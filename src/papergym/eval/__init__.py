"""Evaluation: ``papergym eval`` (answers, scores, summary with intervals), ``compare`` and
``report``."""
