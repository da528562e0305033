"""``papergym review``: simulated peer review of papers (``run``, the default subcommand), fitting
the offline baseline (``fit``), evaluating a reviewer against human ratings (``eval``) and
comparing the scores of groups of papers (``compare``)."""

from __future__ import annotations

from papergym.cli.groups import sub_app
from papergym.cli.review.compare import review_compare
from papergym.cli.review.eval import review_eval
from papergym.cli.review.fit import review_fit
from papergym.cli.review.run import review_run

app = sub_app(
    "review",
    "Simulated peer review: review papers (the default subcommand, run: `papergym review PAPER "
    "-o OUT`), fit the offline baseline, evaluate a reviewer against human ratings, compare "
    "groups of papers by their scores.",
    default_command=True,
)
app.command("run")(review_run)
app.command("fit")(review_fit)
app.command("eval")(review_eval)
app.command("compare")(review_compare)
