"""``papergym write``: a LaTeX paper from a bibliography, and training data for the writer."""
