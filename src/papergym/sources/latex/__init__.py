"""Reading LaTeX paper sources: main file, inputs, macros, sections and clean text."""

from papergym.sources.latex.document import LatexDocument, read_latex_paper
from papergym.sources.latex.totext import latex_to_text

__all__ = ["LatexDocument", "latex_to_text", "read_latex_paper"]
