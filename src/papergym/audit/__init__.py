"""Criterion-leakage audit (SPEC §2 steps 8–9): can a criterion be inferred from the question alone?

Rubric datasets in several formats are read into one shape (:mod:`.formats`), screened cheaply
by lexical and embedding overlap (:mod:`.overlap`), optionally judged by an LLM
(:mod:`.judge`), and summarised as leakage rates (:mod:`.report`); :mod:`.command` is the CLI.
"""
