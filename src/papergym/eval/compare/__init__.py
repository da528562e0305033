"""``papergym compare``: multi-way comparisons of eval folders' answers by LLM judges.

For each question a judge sees the systems' answers labelled A, B, C… and picks the best
overall, on method and on experiments (or a tie). Judges prefer some positions whatever they
read, so every question is shown in a set of orderings in which each system holds each
position equally often: every permutation up to 3 systems, a Williams design (a balanced Latin
square) beyond. Position bias then cancels out of the win rates and can be measured on its own:
the share of decisive verdicts that went to position A, against the 1/n an unbiased judge gives.

What is reported: per system and criterion, win / tie / loss rates over the parsed verdicts,
with 95% intervals from a bootstrap over questions (a question's verdicts resampled together);
the position-bias rate; with several judges, Fleiss' κ over items (question × ordering) ×
judges, categories the systems and the tie. A verdict the judge's answer could not be parsed
for (after the LLM layer's repairs) is counted apart, never as a loss, and every rate says its
denominator.

The reference answer is not shown by default (``compare.reference``): eval's rubric reward
already measures closeness to the paper's own plan, and a judge given the paper's plan tends to
prefer the answer that resembles it; compare asks the complementary question, which plan is
better on its merits. With ``compare.reference=true`` the reference is shown as one possible
approach, not the bar.
"""
