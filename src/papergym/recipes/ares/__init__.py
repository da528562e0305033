"""ARES: weighted-rubric RL instances from general document corpora (SPEC §6).

Documents stream in from JSONL, parquet, saved Hugging Face datasets or folders of text files
(:mod:`.corpus`), pass through the ARES steps one at a time in memory (:mod:`.pipeline`), and
leave as sharded instance files with a progress record so a killed run resumes (:mod:`.shards`,
:mod:`.runner`). :mod:`.distributed` runs the same steps on datatrove's executors.
"""
