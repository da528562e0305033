"""The offline judge: a cheap, deterministic **baseline** that needs no LLM.

It exists so that the reward runs anywhere (tests, CI, a laptop without a judge server); it
is not a substitute for :class:`papergym.reward.judge.RubricJudge` and should not be reported
as one.

Specific criteria
    A criterion is met when some *passage* of the answer — a sentence, or a pair of adjacent
    sentences — matches it closely enough::

        score(c, p) = (1 - w) · cos(MiniLM(c), MiniLM(p)) + w · coverage(c, p)
        met(c)      = max_p score(c, p) ≥ threshold

    ``coverage`` is the share of the criterion's content words (:func:`content_words`, with a
    light plural/inflection folding, minus the "plan"-framing words the builder adds such as
    "plan", "specifies", "method") that occur in the passage. The criterion is embedded without
    its framing ("The plan specifies that X" → "X"). The answer's ``<think>…</think>`` is removed
    first.

Pitfalls (criteria with a negative weight)
    A pitfall describes a mistake ("The plan reports results it has not measured"), and its
    verdict says whether the answer *makes* it. Similarity alone cannot tell "we do X" from
    "we never do X": both sentences share X's words and sit close in MiniLM's space, so a plan
    that explicitly avoids a mistake would be penalised for it. The offline judge therefore
    marks a pitfall met only when some passage clears the same threshold **and** agrees with
    the criterion on negation (:func:`negated`: an odd count of "not", "no", "never",
    "without", "avoid…", "n't", … in a sentence; a two-sentence passage agrees with an
    affirmative criterion only when neither sentence is negated). This is a crude heuristic:
    it misses negation it has no word for ("skips the baseline"), double negation and scope
    ("not only X but Y" reads as negated), and it still flags a plan that merely *discusses*
    the mistake in the criterion's polarity. Its pitfall threshold is the one calibrated on
    desired criteria; no pitfall data was calibrated on. Treat its pitfall verdicts as a weak
    signal; use the LLM judge for weighted rubrics. Desired criteria are judged as before.

General criteria
    Not graded: the general pass is empty (no verdicts), and the scoring rules then make the
    reward the specific mean alone (``Score.alpha`` records 1.0). Unscored verdicts would instead
    make every answer unscored. Cheap heuristics for "specific", "justified" or "efficient" (length, counting
    "because") are trivially gamed by a policy under RL, so we prefer an honest gap: the reward
    then uses the specific mean alone.

Calibration (how the threshold and the lexical weight are chosen)
    The weight and threshold are data, not code: a JSON file (:class:`OfflineCalibration`) with
    the figures behind them and their provenance. The judge loads the one shipped in the
    package, ``papergym/reward/calibration/offline-judge.json``, unless it is given another
    (``OfflineJudge(calibration=path)``, config key ``reward.calibration``). A file is made by
    :func:`calibrate` through ``papergym calibrate-reward``::

        papergym build PAPERS -o BUILD --builder extractive
        papergym calibrate-reward BUILD/instances.jsonl -o offline-judge.json

    For every instance, each specific criterion is paired with its own instance's reference
    answer (positive) and with every other paper's reference answer (negatives). For each
    lexical weight on a grid (0, 0.1, …, 1) the threshold maximising balanced accuracy is found;
    the weight with the best balanced accuracy wins, then the best AUC, then the widest
    *margin* (lowest positive score minus highest negative score: the worst-case gap). When a
    range of thresholds ties for the best balanced accuracy, its midpoint is taken, which leaves
    the most room for paraphrase.

    The shipped file was fitted on the extractive build of the project's 12 example papers
    (12 instances, 120 criteria; 120 positives, 1320 negatives): balanced accuracy and AUC 1.000
    at every weight from 0 to 0.9, so the margin decided: lexical weight 0.3 (margin 0.218),
    threshold 0.606. Pure cosine (w = 0) separates too, but with a margin of only 0.10. Caveat:
    extractive criteria are near-copies of reference sentences, so the positives are easy and
    these figures are optimistic; a paraphrasing policy will score lower than a copying one,
    which is one reason this judge is only a baseline.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from papergym.embed import cosine_matrix, embed
from papergym.errors import BadInputError
from papergym.llm.structured import strip_reasoning
from papergym.records import Instance, Verdict
from papergym.reward.coherence import frame, is_coherent, restates, templated
from papergym.text import content_words, split_sentences

BUNDLED_CALIBRATION = "calibration/offline-judge.json"
"""The calibration shipped in the package (relative to ``papergym.reward``): used by default."""


PLAN_FRAMING = frozenset(
    [
        "plan",
        "plans",
        "planned",
        "plan's",
        "specifies",
        "specify",
        "specified",
        "specifying",
        "states",
        "state",
        "stated",
        "proposes",
        "propose",
        "proposed",
        "proposal",
        "method",
        "methods",
        "approach",
        "approaches",
        "describes",
        "describe",
        "includes",
        "include",
        "covers",
        "cover",
    ]
)
"""Words the builder's criterion templates add ("The plan specifies that …"): not evidence."""

NEGATION_CUES = frozenset(
    {"not", "no", "never", "without", "neither", "nor", "cannot", "avoid", "avoids", "avoided"}
    | {"avoiding", "refrain", "refrains", "omit", "omits", "omitting"}
)
"""Words that flip what a sentence asserts, for :func:`negated` (pitfall verdicts only)."""

_FRAME = re.compile(
    r"^\s*the\s+plan(?:'s\s+|\s+(?:specifies|states|describes|ensures)\s+that\s+|\s+covers:\s+|\s+)",
    re.IGNORECASE,
)


def criterion_core(text: str) -> str:
    """The criterion without its "The plan (specifies that) …" framing."""
    core = _FRAME.sub("", text, count=1).strip()
    return core[:1].upper() + core[1:] if core else text.strip()


def negated(text: str) -> bool:
    """Whether ``text`` carries an odd number of negation cues ("not", "never", "n't", ...).

    >>> negated("The plan compares against a baseline."), negated("We never use a baseline.")
    (False, True)
    >>> negated("We don't skip nothing.")  # two cues cancel: crude, see the module docstring
    False
    """
    words: list[str] = re.findall(r"[a-z]+(?:n't)?", text.lower())
    cues = sum(1 for w in words if w in NEGATION_CUES or w.endswith("n't"))
    return cues % 2 == 1


def _agrees(passage: str, wanted: bool) -> bool:
    """Whether ``passage`` asserts in the polarity ``wanted`` (True: negated), per sentence: an
    affirmative criterion needs no negated sentence in it, a negated one at least one. Per
    sentence, because a pair of two negated sentences would otherwise cancel out."""
    parities = [negated(sentence) for sentence in split_sentences(passage) or [passage]]
    return any(parities) if wanted else not any(parities)


def _fold(word: str) -> str:
    """A light inflection fold, so "kernels"/"kernel", "trained"/"training" and
    "measures"/"measure"/"measured" meet (a final "e" goes too: "measur", "compar").

    >>> [_fold(w) for w in ("measures", "measure", "measured", "compares", "studies", "runs")]
    ['measur', 'measur', 'measur', 'compar', 'study', 'run']
    """
    stem = word
    for suffix in ("ies", "ing", "ed", "es", "s"):
        shortest = 3 if suffix == "s" else 4  # "runs"/"run", but not "bed" from "b" + "ed"
        if (
            word.endswith(suffix)
            and len(word) - len(suffix) >= shortest
            and not word.endswith("ss")
        ):
            stem = word[: -len(suffix)]
            if suffix == "ies":
                return stem + "y"
            break
    return stem[:-1] if stem.endswith("e") and len(stem) > 4 else stem


def key_words(text: str) -> frozenset[str]:
    """Folded content words of ``text`` minus the plan-framing words."""
    return frozenset(_fold(w) for w in content_words(text) if w not in PLAN_FRAMING)


def passages(answer: str) -> list[str]:
    """Sentences of ``answer`` and every pair of adjacent sentences."""
    sentences = split_sentences(answer)
    pairs = [f"{a} {b}" for a, b in itertools.pairwise(sentences)]
    return sentences + pairs


class _Encoded:
    """Texts with their embeddings and key-word sets, computed once."""

    def __init__(
        self,
        texts: Sequence[str],
        vectors: npt.NDArray[np.float32] | None = None,
        coherent: Sequence[bool] | None = None,
        sentences: int | None = None,
    ) -> None:
        self.texts = list(texts)
        # Answers hold their sentences first, then the adjacent pairs (:func:`passages`).
        self.sentences = len(self.texts) if sentences is None else sentences
        self.vectors = _embed_unique(self.texts) if vectors is None else vectors
        self.words = [key_words(t) for t in self.texts]
        flags = [is_coherent(t) for t in self.texts] if coherent is None else coherent
        self.coherent = np.array(flags, dtype=bool)


def _embed_unique(texts: Sequence[str]) -> npt.NDArray[np.float32]:
    """Embeddings of ``texts``, each distinct text embedded once (a padded or repetitive answer
    repeats sentences, and the embedding is the whole cost of judging)."""
    unique = list(dict.fromkeys(texts))
    row = {text: n for n, text in enumerate(unique)}
    return embed(unique)[[row[t] for t in texts]] if texts else embed([])


def pair_vectors(sentences: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Vectors of adjacent sentence pairs: the normalised sum of the two sentences' vectors.

    MiniLM mean-pools its tokens, so a pair's embedding is close to its sentences' average;
    taking it from them embeds every sentence once instead of once more inside each pair.
    """
    if len(sentences) < 2:
        return np.zeros((0, sentences.shape[1]), dtype=np.float32)
    summed = sentences[:-1] + sentences[1:]
    norms = np.linalg.norm(summed, axis=1, keepdims=True)
    return np.asarray(summed / np.where(norms == 0, 1.0, norms), dtype=np.float32)


def encode_answers(answers: Sequence[Sequence[str]]) -> list[_Encoded]:
    """The passages (:func:`passages`) of many answers' sentences, embedded in one call."""
    flat = [sentence for sentences in answers for sentence in sentences]
    vectors = _embed_unique(flat)
    out: list[_Encoded] = []
    start = 0
    for sentences in answers:
        own = vectors[start : start + len(sentences)]
        start += len(sentences)
        pairs = [f"{a} {b}" for a, b in itertools.pairwise(sentences)]
        coherent = [is_coherent(s) for s in sentences]
        both = [a and b for a, b in itertools.pairwise(coherent)]  # a pair is prose if each is
        out.append(
            _Encoded(
                list(sentences) + pairs,
                np.concatenate([own, pair_vectors(own)]),
                coherent + both,
                sentences=len(sentences),
            )
        )
    return out


def _coverage(criteria: _Encoded, answer: _Encoded) -> npt.NDArray[np.float32]:
    out = np.zeros((len(criteria.texts), len(answer.texts)), dtype=np.float32)
    for i, wanted in enumerate(criteria.words):
        if not wanted:
            continue
        for j, present in enumerate(answer.words):
            out[i, j] = len(wanted & present) / len(wanted)
    return out


def _eligible(criteria: _Encoded, answer: _Encoded) -> npt.NDArray[np.bool_]:
    """Which passages may count: prose (:func:`is_coherent`) that says more than the rubric's
    own words (:func:`restates`, against every criterion's words together, so that criteria
    run into one sentence do not count either) and is not one frame filled with them again
    (:func:`templated`; a pair counts only if neither of its sentences is a template copy);
    see :mod:`papergym.reward.coherence`."""
    rubric_words = frozenset().union(*criteria.words)
    copies = templated([frame(w, rubric_words) for w in answer.words[: answer.sentences]])
    flags = []
    for j, present in enumerate(answer.words):
        own = [j] if j < answer.sentences else [j - answer.sentences, j - answer.sentences + 1]
        flags.append(
            bool(answer.coherent[j])
            and not restates(rubric_words, present)
            and not any(copies[k] for k in own)
        )
    return np.array(flags, dtype=bool).reshape(1, -1)


def _parts(
    criteria: _Encoded, answer: _Encoded, pitfalls: Sequence[bool] = ()
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """(cosine, coverage) matrices, criteria × passages; 0 where a passage may not count.

    A pitfall (``pitfalls[i]`` True) needs only prose: copying a mistake's words into the
    answer costs reward, so the restating rule, there to stop earning it, does not apply."""
    eligible = np.broadcast_to(
        _eligible(criteria, answer), (len(criteria.texts), len(answer.texts))
    )
    if any(pitfalls):
        eligible = np.where(np.array(pitfalls)[:, None], answer.coherent[None, :], eligible)
    cosine = cosine_matrix(criteria.vectors, answer.vectors)
    return np.where(eligible, cosine, 0.0).astype(np.float32), np.where(
        eligible, _coverage(criteria, answer), 0.0
    ).astype(np.float32)


def _best(
    cosine: npt.NDArray[np.float32], coverage: npt.NDArray[np.float32], weight: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.intp]]:
    """Per criterion, the best combined score over passages and which passage gave it."""
    if cosine.shape[1] == 0:
        return np.zeros(cosine.shape[0]), np.full(cosine.shape[0], -1, dtype=np.intp)
    combined = (1.0 - weight) * cosine.astype(np.float64) + weight * coverage
    return combined.max(axis=1), combined.argmax(axis=1)


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


RUBRIC_CACHE_SIZE = 4096
"""Rubrics whose criterion vectors a judge keeps (a GRPO step judges each rubric many times)."""

_Pending = list[tuple[Instance, str, "asyncio.Future[tuple[list[Verdict], list[Verdict]]]"]]


class OfflineJudge:
    """Embedding + lexical-coverage judge for specific criteria; general ones left unscored.

    The threshold and lexical weight come from ``calibration`` (a file, or a loaded
    :class:`OfflineCalibration`; default: the one shipped in the package); ``threshold`` and
    ``lexical_weight``, when given, override it. Criterion vectors are kept per rubric, and the
    answers judged at once (:meth:`judge` calls gathered together, :meth:`judge_many`) are
    embedded in one call.
    """

    def __init__(
        self,
        threshold: float | None = None,
        lexical_weight: float | None = None,
        *,
        calibration: OfflineCalibration | str | Path | None = None,
    ) -> None:
        if not isinstance(calibration, OfflineCalibration):
            calibration = load_calibration(calibration)
        threshold = calibration.threshold if threshold is None else threshold
        lexical_weight = calibration.lexical_weight if lexical_weight is None else lexical_weight
        if not 0.0 <= lexical_weight <= 1.0:
            raise ValueError(f"lexical_weight must be in [0, 1], not {lexical_weight}")
        self.calibration = calibration
        self.threshold = threshold
        self.lexical_weight = lexical_weight
        self._rubrics: OrderedDict[tuple[str, ...], _Encoded] = OrderedDict()
        self._rubrics_lock = threading.Lock()
        # calls waiting to be judged together, per event loop (a judge may serve several: the
        # adapters' background loop and a caller's own), each batch flushed by a task of its own
        self._pending: dict[asyncio.AbstractEventLoop, _Pending] = {}
        self._flushes: set[asyncio.Task[None]] = set()

    @property
    def name(self) -> str:
        """A short description of this judge, for :attr:`papergym.records.Score.judge`."""
        return f"offline:minilm+coverage+coherence(w={self.lexical_weight:g},t={self.threshold:g})"

    def _criteria(self, texts: Sequence[str]) -> _Encoded:
        """The rubric's criterion cores, embedded once per rubric (least recently used go)."""
        key = tuple(texts)
        with self._rubrics_lock:
            found = self._rubrics.get(key)
            if found is not None:
                self._rubrics.move_to_end(key)
                return found
        encoded = _Encoded([criterion_core(c) for c in texts])
        with self._rubrics_lock:
            self._rubrics[key] = encoded
            while len(self._rubrics) > RUBRIC_CACHE_SIZE:
                self._rubrics.popitem(last=False)
        return encoded

    def scores(self, criteria: Sequence[str], answer: str) -> list[float]:
        """The best combined score of each criterion against ``answer`` (0 when it is empty)."""
        sentences = split_sentences(strip_reasoning(answer))
        if not criteria:
            return []
        if not sentences:
            return [0.0] * len(criteria)
        (found,) = encode_answers([sentences])
        best, _ = _best(*_parts(self._criteria(criteria), found), self.lexical_weight)
        return [float(s) for s in best]

    def judge_sync(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        """(specific, general) verdicts for ``answer``; no general pass (see the module doc).

        A pitfall's verdict is True when the answer states the mistake (see the module doc).
        """
        return self.judge_many([(instance, answer)])[0]

    def judge_many(
        self, pairs: Sequence[tuple[Instance, str]]
    ) -> list[tuple[list[Verdict], list[Verdict]]]:
        """:meth:`judge_sync` of many (instance, answer) pairs, their sentences embedded at once."""
        sentences = [split_sentences(strip_reasoning(answer)) for _, answer in pairs]
        encoded = encode_answers(sentences)
        return [
            (self._verdicts(instance, found), [])  # general: not graded (the module doc)
            for (instance, _), found in zip(pairs, encoded, strict=True)
        ]

    def _verdicts(self, instance: Instance, found: _Encoded) -> list[Verdict]:
        criteria = instance.rubric.specific
        if not criteria:
            return []
        if not found.texts:
            return [
                Verdict(criterion_id=c.id, passed=False, reason="the answer is empty")
                for c in criteria
            ]
        encoded = self._criteria([c.text for c in criteria])
        cosine, coverage = _parts(encoded, found, [c.pitfall for c in criteria])
        best, where = _best(cosine, coverage, self.lexical_weight)
        specific: list[Verdict] = []
        for i, criterion in enumerate(criteria):
            j = int(where[i])
            met = bool(best[i] >= self.threshold)
            reason = (
                f"offline heuristic: best passage {_clip(found.texts[j])!r} scores {best[i]:.2f} "
                f"(cosine {cosine[i, j]:.2f}, word coverage {coverage[i, j]:.2f}) "
                f"{'≥' if met else '<'} threshold {self.threshold:g}"
            )
            if criterion.pitfall and met:
                met, reason = self._pitfall(
                    encoded.texts[i], found.texts, cosine[i], coverage[i], reason
                )
            specific.append(Verdict(criterion_id=criterion.id, passed=met, reason=reason))
        return specific

    def _pitfall(
        self,
        core: str,
        found: Sequence[str],
        cosine: npt.NDArray[np.float32],
        coverage: npt.NDArray[np.float32],
        reason: str,
    ) -> tuple[bool, str]:
        """(met, reason) for a pitfall that some passage matches: the mistake counts as made
        only if a matching passage agrees with the criterion on negation."""
        combined = (1.0 - self.lexical_weight) * cosine.astype(np.float64) + (
            self.lexical_weight * coverage
        )
        wanted = negated(core)
        for j in np.argsort(-combined):
            if combined[j] < self.threshold:
                break
            if _agrees(found[j], wanted):
                return True, f"{reason}; pitfall: {_clip(found[j])!r} states the mistake"
        return False, (
            f"{reason}; pitfall not counted: every matching passage has the opposite negation "
            "(read as avoiding the mistake)"
        )

    async def judge(self, instance: Instance, answer: str) -> tuple[list[Verdict], list[Verdict]]:
        """:meth:`judge_sync` on a worker thread: the same interface as the LLM judge.

        Calls made together (``asyncio.gather``) wait one turn of the event loop and are then
        judged as one batch (:meth:`judge_many`): one embedding call for all their sentences.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[list[Verdict], list[Verdict]]] = loop.create_future()
        pending = self._pending.setdefault(loop, [])
        pending.append((instance, answer, future))
        if len(pending) == 1:
            # a task, not this call: a caller cancelled while it waits must not strand the batch
            flush = loop.create_task(self._flush(loop))
            self._flushes.add(flush)
            flush.add_done_callback(self._flushes.discard)
        return await future

    async def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        for _ in range(BATCH_WAIT_TURNS):  # let the other calls of this gather join the batch
            await asyncio.sleep(0)
        batch = self._pending.pop(loop, [])
        try:
            results = await asyncio.to_thread(self.judge_many, [(i, a) for i, a, _ in batch])
        except Exception as error:  # every caller of the batch sees the failure
            for _, _, future in batch:
                if not future.done():  # its caller may have been cancelled meanwhile
                    future.set_exception(error)
            return
        for (_, _, future), result in zip(batch, results, strict=True):
            if not future.done():
                future.set_result(result)


BATCH_WAIT_TURNS = 4
"""Event-loop turns a batch waits for more :meth:`OfflineJudge.judge` calls to join it."""


# --- calibration --------------------------------------------------------------------------------


class CalibrationReport(BaseModel):
    """What :func:`calibrate` found: the chosen weight and threshold and how well they separate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: float
    lexical_weight: float
    balanced_accuracy: float
    auc: float
    true_positive_rate: float
    true_negative_rate: float
    margin: float
    """Lowest positive score minus highest negative score (negative when they overlap)."""
    positives: int
    negatives: int
    instances: int
    by_weight: dict[str, tuple[float, float, float, float]] = {}
    """Per lexical weight (as text): (best threshold, balanced accuracy, AUC, margin)."""


WEIGHT_GRID: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""Lexical weights :func:`calibrate` tries by default."""


def auc_score(positive: Sequence[float], negative: Sequence[float]) -> float:
    """Probability that a random positive outscores a random negative (ties count half)."""
    pos = np.asarray(positive, dtype=np.float64)
    neg = np.sort(np.asarray(negative, dtype=np.float64))
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    below = np.searchsorted(neg, pos, side="left")
    not_above = np.searchsorted(neg, pos, side="right")
    return float((below + 0.5 * (not_above - below)).sum() / (pos.size * neg.size))


def best_threshold(
    positive: Sequence[float], negative: Sequence[float]
) -> tuple[float, float, float, float]:
    """(threshold, balanced accuracy, TPR, TNR) maximising balanced accuracy of ``score ≥ t``.

    Ties over a range of thresholds resolve to the midpoint of the range, between the last
    score that must be rejected and the first that must be accepted.
    """
    pos = np.asarray(positive, dtype=np.float64)
    neg = np.asarray(negative, dtype=np.float64)
    if pos.size == 0 or neg.size == 0:
        raise ValueError("calibration needs at least one positive and one negative")
    values = np.unique(np.concatenate([pos, neg]))
    candidates = np.concatenate([values, [values[-1] + 1e-9]])
    tpr = (pos[None, :] >= candidates[:, None]).mean(axis=1)
    tnr = (neg[None, :] < candidates[:, None]).mean(axis=1)
    balanced = (tpr + tnr) / 2
    top = balanced.max()
    best = np.flatnonzero(np.isclose(balanced, top))
    first, last = int(best[0]), int(best[-1])
    # Accept-from candidates[first] .. candidates[last] all tie: any t in (values[first-1],
    # candidates[last]] gives the same decisions; take the middle of that open range.
    low = values[first - 1] if first > 0 else candidates[first] - 1e-6
    threshold = float((low + candidates[last]) / 2)
    return threshold, float(top), float(tpr[first]), float(tnr[first])


def calibration_scores(
    instances: Sequence[Instance], weight: float
) -> tuple[list[float], list[float]]:
    """(positive, negative) best scores: criteria against their own vs other references."""
    parts = _calibration_parts(instances)
    return _split(parts, weight)


_Parts = list[tuple[int, int, npt.NDArray[np.float32], npt.NDArray[np.float32]]]


def _calibration_parts(instances: Sequence[Instance]) -> _Parts:
    criteria = [
        _Encoded([criterion_core(c.text) for c in inst.rubric.specific]) for inst in instances
    ]
    references = encode_answers([split_sentences(inst.reference_answer) for inst in instances])
    parts: _Parts = []
    for i, crit in enumerate(criteria):
        if not crit.texts:
            continue
        for j, ref in enumerate(references):
            cosine, coverage = _parts(crit, ref)
            parts.append((i, j, cosine, coverage))
    return parts


def _split(parts: _Parts, weight: float) -> tuple[list[float], list[float]]:
    positive: list[float] = []
    negative: list[float] = []
    for i, j, cosine, coverage in parts:
        best, _ = _best(cosine, coverage, weight)
        (positive if i == j else negative).extend(float(s) for s in best)
    return positive, negative


def calibrate(
    instances: Sequence[Instance],
    *,
    lexical_weights: Sequence[float] = WEIGHT_GRID,
) -> CalibrationReport:
    """Choose the lexical weight and threshold that best separate own vs other references.

    Positives: each specific criterion against its own instance's reference answer. Negatives:
    the same criterion against every other instance's reference answer (instances of one paper
    should not be mixed: pass one instance per paper). The weight with the best balanced
    accuracy wins (ties: best AUC, then the widest margin, then the smaller weight).
    """
    if len(instances) < 2:
        raise ValueError("calibration needs at least two instances (one per paper)")
    parts = _calibration_parts(instances)
    rows: dict[str, tuple[float, float, float, float]] = {}
    # (balanced accuracy, AUC, margin, -weight, threshold, TPR, TNR)
    best: tuple[float, float, float, float, float, float, float] | None = None
    counts = (0, 0)
    for weight in lexical_weights:
        positive, negative = _split(parts, weight)
        counts = (len(positive), len(negative))
        threshold, balanced, tpr, tnr = best_threshold(positive, negative)
        auc = auc_score(positive, negative)
        margin = min(positive) - max(negative)
        rows[f"{weight:g}"] = (
            round(threshold, 4),
            round(balanced, 4),
            round(auc, 4),
            round(margin, 4),
        )
        key = (round(balanced, 6), round(auc, 6), round(margin, 6), -weight, threshold, tpr, tnr)
        if best is None or key[:4] > best[:4]:
            best = key
    assert best is not None
    balanced, auc, margin, neg_weight, threshold, tpr, tnr = best
    return CalibrationReport(
        threshold=round(threshold, 4),
        lexical_weight=-neg_weight,
        balanced_accuracy=balanced,
        auc=auc,
        true_positive_rate=tpr,
        true_negative_rate=tnr,
        margin=round(margin, 4),
        positives=counts[0],
        negatives=counts[1],
        instances=len(instances),
        by_weight=rows,
    )


# --- calibration as data ------------------------------------------------------------------------


class CalibrationProvenance(BaseModel):
    """Where a calibration came from: enough to judge it and to make it again."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str
    """The command that produced the figures."""
    data: str
    """What it was fitted on, in words (no machine paths: the file ships to other machines)."""
    date: datetime.date
    papergym_version: str
    note: str = ""


class OfflineCalibration(CalibrationReport):
    """A calibration file: the weight and threshold the judge uses, the figures
    :func:`calibrate` reported for them, and their provenance."""

    format: Literal["papergym.offline-judge-calibration/1"] = "papergym.offline-judge-calibration/1"
    threshold: float = Field(allow_inf_nan=False)
    lexical_weight: float = Field(ge=0.0, le=1.0)
    provenance: CalibrationProvenance


def load_calibration(path: str | Path | None = None) -> OfflineCalibration:
    """The calibration in ``path`` (default: the one shipped in the package).

    A missing or unreadable file, bad JSON or a file that is not a calibration is one line
    naming the file (:class:`~papergym.errors.BadInputError`).
    """
    if path is None:
        resource = resources.files("papergym.reward").joinpath(BUNDLED_CALIBRATION)
        return OfflineCalibration.model_validate_json(resource.read_text("utf-8"))
    path = Path(path)
    if path.is_dir():
        raise BadInputError(path, "is a folder, not a calibration file")
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise BadInputError(path, "no such calibration file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise BadInputError(path, f"cannot read it: {error}") from None
    except json.JSONDecodeError as error:
        raise BadInputError(path, f"not JSON: {error.msg} (line {error.lineno})") from None
    try:
        return OfflineCalibration.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        raise BadInputError(
            path, f"not an offline-judge calibration: {where}: {first['msg']}"
        ) from None


def calibration_file(report: CalibrationReport, provenance: CalibrationProvenance) -> str:
    """The text of a calibration file for ``report`` (what ``papergym calibrate-reward`` writes)."""
    record = OfflineCalibration(**report.model_dump(), provenance=provenance)
    fields = record.model_dump(mode="json")
    # the format first, so that a reader of the file sees what it is before the numbers
    return json.dumps({"format": fields.pop("format"), **fields}, indent=2) + "\n"
