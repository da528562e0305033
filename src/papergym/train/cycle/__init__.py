"""``papergym train cycle``: CycleResearcher's iterative preference training against a reviewer.

:mod:`.run` runs the rounds (the story of a round is told there); :mod:`.generate` writes the
papers, :mod:`.scoring` reviews and pairs them, :mod:`.training` trains a round on the pairs;
:mod:`.records` holds the records and pure rules, :mod:`.reviewers` the reviewers.
"""
