"""Build-only sentence rules: own-work and result cues, and writing criteria in plan voice.

The general text rules (sentence splitting, prose, content words, the numeric-result rule) are in
:mod:`papergym.text`, which the reward and the audit use too; they are re-exported here for the
build's modules.
"""

from __future__ import annotations

import re

from papergym.text import (
    content_words,
    has_numeric_result,
    is_caption,
    is_prose,
    numbers_in,
    prose_sentences,
    split_sentences,
    strip_numeric_results,
)

__all__ = [
    "as_plan_criterion",
    "cites_agent",
    "clean_markers",
    "content_words",
    "has_numeric_result",
    "has_result_claim",
    "is_caption",
    "is_mathy",
    "is_plan_statement",
    "is_prose",
    "mentions_own_work",
    "numbers_in",
    "prose_sentences",
    "split_sentences",
    "strip_numeric_results",
    "talks_about_document",
    "tidy",
    "without_citations",
    "without_lead_in",
]


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_RESULT_CLAIM = re.compile(
    r"\b(?:outperform\w*|we (?:find|found|observe[d]?|obtain(?:ed)?|achieve[d]?)|"
    r"(?:our |the )?results (?:show|indicate|suggest|demonstrate|confirm|reveal)\w*|"
    r"significantly (?:better|higher|lower|more|less|larger|smaller|faster|improv\w*)|"
    r"state[- ]of[- ]the[- ]art (?:results|performance)|achiev\w* (?:the best|better|higher|"
    r"lower|competitive)|(?:is|was|are|were) (?:faster|slower|better|worse|more accurate) than|"
    r"conclude\w*|we see|shows? that|demonstrat\w* that|indicat\w* that|confirm\w*|"
    r"(?:is|are) consistent with)",
    re.IGNORECASE,
)


def is_mathy(sentence: str) -> bool:
    """Whether ``sentence`` leans on notation: an equation sign, sub/superscripts or operators.

    Such sentences are fine inside a method's text but make criteria a judge cannot check from
    prose ("there exist ϕ^* such that w_ϕ^*(λ) = argmin ...").
    """
    return bool(re.search(r"[=^_∂∑∏∫≤≥≈∈→←⇒|\\]|\bargmin|\bargmax", sentence))


def has_result_claim(sentence: str) -> bool:
    """Whether ``sentence`` reports an outcome in words ("outperforms", "we find", "results show").

    Used to keep the experiment stage about design, not findings; it is a cue list, not a parser.
    """
    return bool(_RESULT_CLAIM.search(sentence))


_OWN_WORK = re.compile(
    r"\b(?:we|our|ours|us|my|this (?:paper|work|study|article|note|report|thesis)|"
    r"the present (?:paper|work|study)|here,? we|organi[sz]ed as follows|"
    r"the (?:remainder|rest) of (?:this|the) (?:paper|article)|the paper (?:is|was)|"
    r"this (?:method|approach|technique|algorithm|framework|system|package|library|tool|"
    r"estimator)|the (?:proposed|present|new) (?:method|approach|model|technique))\b"
    # the singular author ("I assume"), not a numeral ("Type I error", "Phase I")
    r"|(?<!Type )(?<!Phase )(?<!Part )(?<!Class )(?<!Stage )(?<!Table )\bI\s+[a-z]",
    re.IGNORECASE,
)
# A sentence whose subject is a definite artefact ("The system", "The method", "The package")
# doing what a contribution does ("defines", "constructs", "uses") describes the paper's own work
# even without "we": "The system defines an open-ended language of models via a grammar."
_ARTEFACT = (
    r"system|method|approach|framework|algorithm|model|package|library|tool|toolkit|software|"
    r"procedure|pipeline|technique|estimator|architecture|code|module|scheme|implementation"
)
_CONTRIBUTION_VERBS = (
    r"defines?|uses?|proposes?|introduces?|constructs?|builds?|generates?|learns?|combines?|"
    r"employs?|relies|searches|produces?|computes?|provides?|implements?|consists?|outputs?|"
    r"automatically|automates?|exploits?|leverages?|extends?|enables?|allows?|supports?|"
    r"takes?|returns?|achieves?|handles?|performs?|offers?|contains?|is (?:able|designed|based|"
    r"built|composed|implemented|written)|can (?:be used|handle|compute|generate|learn)"
)
_OWN_SYSTEM = re.compile(
    rf"(?:^|[,;:]\s+)(?:the|this|our|its)\s+(?:(?:proposed|present|new|resulting|full|"
    rf"overall|main|core)\s+)?(?:{_ARTEFACT})s?\s+(?:\w+ly\s+)?(?:{_CONTRIBUTION_VERBS})\b",
    re.IGNORECASE,
)


def mentions_own_work(sentence: str) -> bool:
    """First-person or self-referring sentences ("we propose", "our model", "this paper", "I").

    In an introduction they announce the paper's own solution, so the question must not use them.
    So do sentences whose subject is a definite artefact doing what a contribution does ("The
    system defines ...", "The package provides ..."): they state the solution, not the problem.
    """
    return bool(_OWN_WORK.search(sentence) or _OWN_SYSTEM.search(sentence))


_DOCUMENT_TALK = re.compile(
    r"\b(?:(?:this|next|previous|following|preceding|last|present|later) (?:two |three )?"
    r"(?:sections?|chapters?|subsections?)|in this (?:section|chapter|subsection)|"
    r"the remainder of|(?:described|discussed|shown|defined) (?:in the text|above|below)|"
    r"as (?:discussed|shown|described|mentioned|noted|alluded to) (?:above|below|earlier|"
    r"previously|before)|see (?:above|below)|(?:this|the present|the) (?:term )?(?:paper|article)|"
    r"this work|beyond the scope|we hope)\b",
    re.IGNORECASE,
)


def talks_about_document(sentence: str) -> bool:
    """Sentences about the paper's own layout ("in this section", "as discussed above").

    They make no sense out of place, so neither stages nor criteria use them.
    """
    return bool(_DOCUMENT_TALK.search(sentence))


# --- rewriting a selected sentence into a checkable statement about a plan ----------------------

_IRREGULAR_PAST = {
    "ran": "run",
    "chose": "choose",
    "built": "build",
    "took": "take",
    "made": "make",
    "wrote": "write",
    "drew": "draw",
    "began": "begin",
    "kept": "keep",
    "held": "hold",
    "gave": "give",
    "sought": "seek",
    "brought": "bring",
    "led": "lead",
    "left": "leave",
    "found": "find",
    "fed": "feed",
    "froze": "freeze",
    "got": "get",
    "knew": "know",
    "meant": "mean",
    "paid": "pay",
    "said": "say",
    "saw": "see",
    "sent": "send",
    "spent": "spend",
    "stood": "stand",
    "taught": "teach",
    "thought": "think",
    "told": "tell",
    "underwent": "undergo",
    "were": "be",
    "was": "be",
    "had": "have",
    "did": "do",
    "focused": "focus",
    "biased": "bias",
    "based": "base",
    "treated": "treat",
    "repeated": "repeat",
}
_UNCHANGED_VERBS = _word_set(
    "can will may must should could would might shall set put split fit cut let read"
)
_AUXILIARY_3SG = {"have": "has", "are": "is", "do": "does", "be": "is", "am": "is"}
_NO_FINAL_E = ("er", "en", "on", "el", "op", "it", "al", "or", "ow", "ain", "ect", "ess", "ish")
# Discourse openers: they tie a sentence to the paper's flow, which a criterion does not have.
# With a comma any of these; without one only the few that cannot start a clause of their own
# ("Instead of X" and "First-order X" are not openers).
_OPENERS = (
    r"here|then|next|finally|lastly|first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth(?:ly)?|"
    r"first of all|last but not least|in addition|additionally|moreover|furthermore|further|"
    r"specifically|in particular|particularly|to this end|to that end|for this purpose|"
    r"to do so|in doing so|in this way|this way|instead|similarly|likewise|in practice|"
    r"in other words|in short|in summary|to summari[sz]e|in sum|in conclusion|to conclude|"
    r"overall|in brief|importantly|more importantly|crucially|notably|however|nevertheless|"
    r"nonetheless|still|yet|thus|hence|therefore|consequently|accordingly|as such|indeed|"
    r"in fact|of course|again|also|meanwhile|in contrast|by contrast|conversely|"
    r"on the other hand|on the one hand|on one hand|at the same time|for example|for instance|"
    r"as an example|in this case|in general|generally|typically|as a result|more specifically|"
    r"more precisely|more generally|that is|in turn|as above|to start|as before|as noted|"
    r"as a first step|as a second step|in the first step|in the second step|"
    r"in (?:this|the present|our) (?:paper|work|study|section|article)|alternatively|"
    r"put differently|simply put|namely|now|so|and|but|ultimately|eventually|subsequently|"
    r"afterwards|formally|intuitively|concretely|practically|technically|mathematically"
)
_LEAD_INS = re.compile(
    rf"^(?:(?:{_OPENERS}),\s+|(?:also|then|here|next|finally|lastly|now|note that|and|but|so|"
    r"thus|hence|therefore|consequently|moreover|furthermore|additionally|indeed)\s+)",
    re.IGNORECASE,
)
_ADVERBS = (
    r"(?:[a-z]{3,}(?<!p)ly|simply|also|then|further|first|instead|now|next|only|therefore|thus|"
    r"often|still|again|always|never|here|later|thereby|instead|additionally|finally)"
)
# "we"/"I" and the verb that follows, anywhere; adverbs between them are kept.
_NOT_AUTHOR_I = r"(?<!Type )(?<!Phase )(?<!Part )(?<!Class )(?<!Stage )(?<!Table )(?<!World War )"
_FIRST_PERSON_CLAUSE = re.compile(
    rf"\b(?:we|{_NOT_AUTHOR_I}(?-i:I))\s+((?:{_ADVERBS}\s+)*)([a-z]+)\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(
    rf"\b(?:[Ww]e|[Oo]urs?|[Uu]s|{_NOT_AUTHOR_I}I|[Mm]y|[Mm]e|[Oo]urselves)\b(?![-/])"
)
_LOWERABLE = _word_set(
    """the a an each all both every for in to when after before given since because using with
    then this these that those it its they their there here one two three some many most as
    although though while whereas during if once unlike like instead rather by on at from under
    over following throughout depending even only finally first second within without upon
    across"""
)
# Words that open an adverbial phrase or a subordinate clause: "For each X, we write ..." can
# become "The plan, for each X, writes ...".
_ADVERBIAL_OPENERS = _word_set(
    """for in at on by to with without after before when whenever while since because although
    though whereas if once unless until upon given using to following during throughout under
    over within across via starting rather instead contrasting unlike like depending as"""
)
# Words after which "[cite]" is an object: it becomes "prior work" ("we follow [cite] and ...").
_PREPOSITIONS = (
    r"by|in|of|from|following|see|to|with|than|like|unlike|after|before|on|and|follows?|"
    r"followed|uses?|used|extends?|extended|adopts?|adopted|build on|builds on|built on"
)
_CITE_PHRASE = re.compile(rf"\b({_PREPOSITIONS})\s+\[cite\]", re.IGNORECASE)
# "[cite]" as the subject: at the start, or after "as", "and", "while", "that", a comma.
_CITED_SUBJECT = re.compile(
    r"(^|\b(?i:as|and|while|that|but|when|since|whereas|because|although)\s|[,;:]\s)"
    r"\[cite\]\s+(?=([a-z]+))"
)
# "[cite]" followed by a word that is not a connective: someone else's work acts in the
# sentence ("the approach [cite] employ", "[cite] show"). A criterion is about the plan, not them.
_CITED_AGENT = re.compile(
    r"\[cite\]\s+(?!(?:and|or|for|in|of|to|with|as|which|who|whose|where|that|but|while|on|at|"
    r"by|from|is|are|was|were|has|have|had|can|could|may|might|will|would|should|also)\b)"
    r"[a-z]+"
)
_REF_PHRASE = re.compile(
    r"\s*[(\[]\s*(?:see|cf\.|e\.g\.,?)?\s*(?:(?:Figures?|Figs?\.|Tables?|Tabs?\.|Sections?|Secs?\.|"
    r"§|Equations?|Eqs?\.|Eqns?\.|Appendi(?:x|ces)|App\.|Algorithms?|Alg\.|Theorems?|Thm\.|"
    r"Lemmas?|Propositions?|Prop\.|Corollar(?:y|ies)|Definitions?|Chapters?|Listings?|"
    r"Footnotes?)\s*~?)?\[ref\](?:\s*(?:,|and|–|-)\s*\[ref\])*\s*[)\]]"
    r"|\s*,?\s*\b(?:as\s+(?:shown|described|discussed|given|defined|detailed|illustrated)\s+)?"
    r"(?:in|see|from|of|cf\.)\s+(?:Figures?|Figs?\.|Tables?|Tabs?\.|Sections?|Secs?\.|§|"
    r"Equations?|Eqs?\.|Eqns?\.|Appendi(?:x|ces)|App\.|Algorithms?|Alg\.|Chapters?)\s*~?"
    r"\[ref\](?:\s*(?:,|and|–|-)\s*\[ref\])*(?=[\s,.;:)])",
    re.IGNORECASE,
)


# Cited work as the subject once markers are gone ("As prior studies point out, ..."): the
# sentence is about someone else's work, not the plan.
_PRIOR_WORK_ACTS = re.compile(
    r"(?:^|[,;:]\s|\b(?i:as|and|while|that|but|when|since|whereas|because|although)\s)"
    r"[Pp]rior (?:work|studies)\s+(?!(?:and|or|of|in|on|for|to|with|as|which|that)\b)[a-z]"
)


def _base_of_past(verb: str) -> str:
    """The base form of a past-tense verb, by rule ("estimated" → "estimate", "ran" → "run")."""
    lower = verb.lower()
    if lower in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[lower]
    stem = lower[:-2]
    if stem.endswith("i"):
        return stem[:-1] + "y"  # applied → apply
    if len(stem) > 4 and stem.endswith("ll"):
        return stem[:-1]  # modelled → model (but called → call)
    if len(stem) >= 3 and stem[-1] == stem[-2] and stem[-1] not in "lsfzd":
        return stem[:-1]  # stopped → stop, planned → plan
    if stem.endswith(_NO_FINAL_E) or stem.endswith(("ll", "ss")):
        return stem
    if re.search(r"(?:[^aeiou][aeiou][^aeiouwxy]|[ui]at|[^aeiou]l|v|us|uc|rg|ns|rs|iz|ys)$", stem):
        return stem + "e"  # estimated → estimate, sampled → sample, solved → solve
    return stem


def _third_person(base: str) -> str:
    """``base`` conjugated for "the plan": uses, fixes, applies, has."""
    if base in _AUXILIARY_3SG:
        return _AUXILIARY_3SG[base]
    if base in _UNCHANGED_VERBS - {"set", "put", "split", "fit", "cut", "let", "read"}:
        return base
    if re.search(r"(?:s|sh|ch|x|z|o)$", base):
        return base + "es"
    if re.search(r"[^aeiou]y$", base):
        return base[:-1] + "ies"
    return base + "s"


def _plan_verb(verb: str) -> str:
    """The verb of a "we" clause conjugated for "the plan", in the present ("ran" → "runs")."""
    lower = verb.lower()
    past = lower in _IRREGULAR_PAST or (lower.endswith("ed") and len(lower) > 4)
    return _third_person(_base_of_past(lower) if past else lower)


def _lower_first(sentence: str, vocabulary: frozenset[str]) -> str:
    """Lower-case the first word when it is an ordinary word, not a name ("Gaussian", "Python").

    A word counts as ordinary when it is a function word, an adverb, or appears in lower case in
    ``vocabulary`` (the words the paper writes in lower case).
    """
    first = sentence.split(None, 1)[0] if sentence.split() else ""
    word = re.sub(r"['’]s$", "", first.rstrip(",;:"))
    ordinary = (
        word.lower() in _LOWERABLE
        or word.endswith(("ly", "ing"))  # adverbs and gerunds ("Combining kernels ...")
        or word.lower() in vocabulary
    )
    if ordinary and word[:1].isupper() and (len(word) == 1 or word[1:].islower()):
        return sentence[0].lower() + sentence[1:]
    return sentence


def tidy(text: str) -> str:
    """``text`` without the debris removed markers leave: "( )", "[ ]", "et al. ,", " ,"."""
    text = re.sub(r"\(\s*(?:[,;]\s*)*\)|\[\s*(?:[,;]\s*)*\]", "", text)
    # an abbreviation left alone in brackets, or before what a removed marker separated
    abbreviation = r"(?:see|e\.g\.|i\.e\.|cf\.)[,~\s]*"
    text = re.sub(rf"\(\s*{abbreviation}\)", "", text, flags=re.IGNORECASE)
    text = re.sub(rf"\(\s*(?:{abbreviation})?[,;]\s*", "(", text, flags=re.IGNORECASE)
    text = re.sub(rf"[,;]?\s*(?:{abbreviation})?[,;]?\s*\)", ")", text, flags=re.IGNORECASE)
    text = re.sub(r"\s+([,.;:!?)])", r"\1", text)
    text = re.sub(r"([,;:])\s*(?=[,;:.])", "", text)
    text = re.sub(r"\(\s+", "(", text)
    return " ".join(text.split())


def _cited_subject(match: re.Match[str]) -> str:
    """ "[cite]" as a subject → "prior work" ("[cite] proposes") or "prior studies" ("[cite] show")."""
    verb = match.group(2)
    singular = verb in ("is", "was", "has", "does") or (
        verb.endswith("s") and not verb.endswith("ss")
    )
    noun = "work" if singular else "studies"
    return f"{match.group(1)}{'prior' if match.group(1) else 'Prior'} {noun} "


def _cited_subjects(sentence: str) -> str:
    """``sentence`` with bracketed and grouped citations gone and cited subjects named."""
    text = re.sub(
        r"\s*\((?:e\.g\.,?\s*|see\s+|cf\.\s*)?\[cite\](?:\s*[,;]\s*\[cite\])*\)", "", sentence
    )
    text = re.sub(r"\[cite\](?:\s*(?:,|;|and)\s*\[cite\])+", "[cite]", text)
    text = _CITE_PHRASE.sub(lambda m: f"{m.group(1)} prior work", text)
    return _CITED_SUBJECT.sub(_cited_subject, text)


def without_citations(sentence: str) -> str:
    """``sentence`` without "[cite]" markers: a cited subject becomes "prior work".

    "proposed by [cite]" → "proposed by prior work"; "[cite] showed" → "Prior studies showed"
    (plural for a plural verb: "as prior studies point out"; singular for "[cite] proposes");
    "random search [cite]." → "random search.".
    """
    return tidy(re.sub(r"\s*\[cite\]", "", _cited_subjects(sentence)))


_NEEDS_REF = re.compile(
    r"\b(?:equations?|eqs?\.|eqns?\.|figures?|figs?\.|tables?|sections?|theorems?|lemmas?|"
    r"algorithms?|appendix|propositions?|conditions?|assumptions?|models?|steps?)\s*~?$",
    re.IGNORECASE,
)


_REF_NOUN = re.compile(r"[A-Za-z§]\S*\s*~?\[ref\]")
# "are described in Section [ref]": the phrase completes the verb, it is not an aside
# ("the series described in Section [ref]" would lose its complement just the same)
_NEEDS_COMPLEMENT = re.compile(r"\b\w{2,}(?:ed|en|wn)\s*$", re.IGNORECASE)


def _drop_ref_phrase(match: re.Match[str]) -> str:
    """A cross-reference phrase goes, unless the sentence needs it.

    "equation ([ref])" names what it refers to just before the bracket; "are described in
    Section [ref]" or "the series described in Section [ref]" needs its complement. Either is
    kept, so the sentence is left out.
    """
    before = match.string[: match.start()]
    bare = not _REF_NOUN.search(match.group(0))
    if (bare and _NEEDS_REF.search(before)) or _NEEDS_COMPLEMENT.search(before):
        return match.group(0)
    return ""


def clean_markers(sentence: str) -> str | None:
    """``sentence`` without citation and cross-reference markers, or None when it cannot be.

    "[cite]" goes as :func:`without_citations` says; a cross-reference in a phrase of its own
    ("(see Figure [ref])", "as shown in Section [ref]") is removed with the phrase. A "[ref]" that
    the sentence needs ("Equation [ref] gives ...") leaves it unusable: None.
    """
    text = _cited_subjects(_REF_PHRASE.sub(_drop_ref_phrase, sentence))
    # a marker still needed: "Equation [ref] gives", "the approach [cite] employ to ..."
    if "[ref]" in text or _CITED_AGENT.search(text):
        return None
    text = tidy(re.sub(r"\s*\[cite\]", "", text))
    # "In Section [ref], we ..." loses its opening phrase: the comma after it goes too
    text = re.sub(r"^[,;:]\s*", "", text)
    # "Other examples are [cite] and [cite]." has nothing left after its verb
    if re.search(
        r"\b(?:is|are|was|were|include|includes|including|such as|see|e\.g\.|and)\W*$", text
    ):
        return None
    return text[:1].upper() + text[1:]


def cites_agent(sentence: str) -> bool:
    """Whether cited work acts in ``sentence`` ("[cite] show", "the approach [cite] employ").

    Such a sentence is about someone else's work; it may set up a question but is no criterion.
    """
    return bool(_CITED_AGENT.search(sentence)) or bool(re.match(r"^\s*\[cite\]", sentence))


def without_lead_in(sentence: str) -> str:
    """``sentence`` without its opening connectives ("Moreover, ", "In summary, finally, ")."""
    previous = None
    while previous != sentence:
        previous, sentence = sentence, _LEAD_INS.sub("", sentence, count=1)
    return sentence


def _first_person_to_plan(text: str) -> str:
    """First-person wording as the plan's: "we use" → "the plan uses", "our" → "the plan's"."""

    def clause(match: re.Match[str]) -> str:
        adverbs, verb = match.group(1) or "", match.group(2)
        return f"the plan {adverbs.lower()}{_plan_verb(verb)}"

    text = _FIRST_PERSON_CLAUSE.sub(clause, text)
    text = re.sub(r"\b(?:[Oo]ur|[Mm]y)\s+own\b", "the plan's", text)
    text = re.sub(r"\b(?:[Oo]ur|[Mm]y)\b", "the plan's", text)
    text = re.sub(r"\b(?:[Oo]urs|[Oo]urselves)\b", "the plan", text)
    text = re.sub(r"\b(?:us|me)\b", "the plan", text)
    return text


def as_plan_criterion(sentence: str, vocabulary: frozenset[str] = frozenset()) -> str | None:
    """A selected paper sentence as a checkable statement about a plan, by fixed rules.

    Markers and opening connectives go; first person becomes the plan ("We use X" → "The plan
    uses X", "Our model ..." → "The plan's model ...", "For each X, we write Y" → "The plan, for
    each X, writes Y"); anything else → "The plan specifies that <sentence>". The wording after
    the subject is the paper's own; only the subject and the tense change. None when the
    sentence cannot become one: a cross-reference it needs, cited work acting in it, or first
    person left after the rules.
    """
    cleaned = clean_markers(sentence) if not cites_agent(sentence) else None
    if cleaned is None or _PRIOR_WORK_ACTS.search(cleaned):
        return None
    # a footnote or aside in brackets, "(One exception is X.)", is a sentence of its own
    unwrapped = re.fullmatch(r"\((.*[.!?])\)\.?|\((.*)\)\.", cleaned.strip())
    if unwrapped and "(" not in (unwrapped.group(1) or unwrapped.group(2) or "("):
        cleaned = unwrapped.group(1) or unwrapped.group(2)
    text = without_lead_in(cleaned).rstrip()
    if not text:
        return None
    text = text if text.endswith((".", "!", "?")) else text + "."
    text = text[:-1].rstrip(" ,;:") + "."
    text = _first_person_to_plan(text)
    if _FIRST_PERSON.search(text):
        return None
    if re.match(r"the plan\b", text, re.IGNORECASE):
        return "The plan" + text[len("the plan") :]
    # "For each component, the plan writes tests." → "The plan, for each component, writes tests."
    moved = re.match(r"^([^,]{3,120}?),\s+the plan\s+(?!'s)(.*)$", text)
    opener = moved.group(1).split()[0].lower() if moved else ""
    if moved and opener in _ADVERBIAL_OPENERS and "the plan" not in moved.group(1):
        phrase = moved.group(1)
        if phrase[1:2].islower():  # an opener is a function word or a participle, not a name
            phrase = phrase[0].lower() + phrase[1:]
        return f"The plan, {phrase}, {moved.group(2)}"
    return "The plan specifies that " + _lower_first(text, vocabulary)


_PLAN_OPENING = re.compile(r"^The plan(?:'s)?\b")


def is_plan_statement(criterion: str) -> bool:
    """The shape every criterion must have: a plan-voice subject, no first person or markers,
    no opener after "that", and a final period."""
    return (
        bool(_PLAN_OPENING.match(criterion))
        and criterion.endswith(".")
        and not _FIRST_PERSON.search(criterion)
        and "[cite]" not in criterion
        and "[ref]" not in criterion
        and not criterion.endswith(".).")
        and not re.search(rf"\bthat\s+(?:{_OPENERS}),", criterion, re.IGNORECASE)
    )
