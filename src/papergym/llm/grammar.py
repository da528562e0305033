"""Constrained decoding for the ``hf`` backend: a JSON schema enforced token by token.

A small model asked for JSON in the prompt alone often writes something else (SmolLM2-135M
writes the schema back). With `xgrammar <https://github.com/mlc-ai/xgrammar>`_ installed
(``pip install 'papergym[grammar]'``), each structured request's schema is compiled into a
grammar over the model's vocabulary, and at every step the tokens that would leave the grammar
are masked out of the logits, so the answer is JSON of the schema by construction (unless it
is cut by ``max_tokens``). The client still validates it, as for every backend.

In a batch each row has its own grammar, or none: requests without a schema, and rows whose
schema xgrammar cannot compile, decode unconstrained. Without xgrammar nothing changes: the
schema goes in the prompt and the answer is validated and repaired.

This module imports neither torch nor xgrammar until a grammar is needed, so that asking
whether decoding is constrained (:func:`constrained_decoding`, read by every cache identity)
stays cheap.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from papergym.llm.config import BackendConfig
from papergym.llm.structured import json_schema_for

if TYPE_CHECKING:
    import torch
    import xgrammar

HOW_TO_TURN_ON = "pip install 'papergym[grammar]' (xgrammar)"
"""What turns constrained decoding on, said where it is off."""

CONSTRAINED = "constrained"
"""The hf backend's schema mode when the schema is enforced while decoding."""

SEPARATORS = (", ", ": ")
"""Whitespace between JSON items and after keys: fixed, so that a small model cannot spend its
tokens on blank lines (which a grammar allowing any whitespace would let it do)."""


def grammar_library_installed() -> bool:
    """Whether xgrammar can be imported (looked up, not imported)."""
    return importlib.util.find_spec("xgrammar") is not None


def constrained_decoding(config: BackendConfig) -> bool:
    """Whether ``config``'s structured answers are decoded under their schema's grammar: an
    ``hf`` backend whose ``structured_output`` is not ``none``, with xgrammar installed."""
    return (
        config.backend == "hf"
        and config.structured_output != "none"
        and grammar_library_installed()
    )


def schema_mode(config: BackendConfig) -> str:
    """How an ``hf`` backend's structured calls are made: ``constrained`` or ``none`` (the
    schema in the prompt, validated and repaired here)."""
    return CONSTRAINED if constrained_decoding(config) else "none"


def off_reason(config: BackendConfig) -> str | None:
    """Why an ``hf`` backend's decoding is not constrained, with how to turn it on; None when
    it is (or when the backend is not ``hf``)."""
    if config.backend != "hf" or constrained_decoding(config):
        return None
    if config.structured_output == "none":
        return (
            "constrained decoding is off (structured_output=none): the schema is only in the prompt"
        )
    return f"constrained decoding is off (xgrammar is not installed): {HOW_TO_TURN_ON}"


class SchemaGrammars:
    """Grammars for one loaded model's vocabulary, compiled once per schema."""

    def __init__(self, tokenizer: Any, vocab_size: int, stop_ids: Iterable[int]) -> None:
        import xgrammar as xgr

        stops = sorted(stop_ids)
        self._info = vocabulary_info(tokenizer, vocab_size, stops)
        self._compiler = xgr.GrammarCompiler(self._info, max_threads=1)
        self._compiled: dict[str, xgrammar.CompiledGrammar | None] = {}
        self._lock = threading.Lock()

    @property
    def vocab_size(self) -> int:
        size: int = self._info.vocab_size
        return size

    def compiled(self, schema: type[BaseModel]) -> xgrammar.CompiledGrammar | None:
        """The grammar of ``schema``'s JSON schema (the one sent to servers, and validated
        against); None when xgrammar cannot express it: that schema decodes unconstrained."""
        text = json.dumps(json_schema_for(schema))  # keys in order: properties come in it
        with self._lock:
            if text not in self._compiled:
                try:
                    # strict_mode off: the schema already closes every object with properties
                    # (additionalProperties: false); a free-form dict field stays open.
                    grammar = self._compiler.compile_json_schema(
                        text, any_whitespace=False, separators=SEPARATORS, strict_mode=False
                    )
                except (RuntimeError, ValueError):
                    grammar = None
                self._compiled[text] = grammar
            return self._compiled[text]


def vocabulary_info(tokenizer: Any, vocab_size: int, stop_ids: list[int]) -> xgrammar.TokenizerInfo:
    """The model's vocabulary as xgrammar sees it, with special tokens blanked, and the tokens
    that could make the JSON invalid.

    xgrammar takes a token's text as what it writes, so ``<|im_end|>`` would be allowed inside
    a JSON string (and end the turn there); so would a raw control character (``\x1b``), which
    JSON forbids there, and a piece of a UTF-8 character (a byte-level token), which xgrammar
    does not check: pieces that never join up decode as replacement characters. Blank tokens
    are special to it: never allowed, except the ``stop_ids``, which end the answer once the
    JSON is done. Every character stays writable: JSON strings take ``\\uXXXX`` escapes.
    """
    import xgrammar as xgr

    detected = xgr.TokenizerInfo.from_huggingface(
        tokenizer, vocab_size=vocab_size, stop_token_ids=stop_ids
    )
    special = {index for index, token in tokenizer.added_tokens_decoder.items() if token.special}
    special |= set(tokenizer.all_special_ids)
    written = detected.decoded_vocab
    special |= {index for index, text in enumerate(written) if not _json_safe(text)}
    vocabulary = [""] * vocab_size
    for token, index in tokenizer.get_vocab().items():
        if index < vocab_size and index not in special:
            vocabulary[index] = token
    return xgr.TokenizerInfo(
        vocabulary,
        detected.vocab_type,
        vocab_size=vocab_size,
        stop_token_ids=stop_ids,
        add_prefix_space=detected.add_prefix_space,
    )


class RowGrammars:
    """A ``generate`` logits processor that holds each row of the batch to its own grammar.

    ``grammars[i]`` is row ``i``'s compiled grammar, or None for a row left unconstrained. One
    instance serves one ``generate`` call (its matchers follow that call's tokens).
    """

    def __init__(
        self, grammars: Sequence[xgrammar.CompiledGrammar | None], vocab_size: int
    ) -> None:
        import xgrammar as xgr

        self._matchers = [None if g is None else xgr.GrammarMatcher(g) for g in grammars]
        self._bitmask = xgr.allocate_token_bitmask(len(grammars), vocab_size)
        self._vocab_size = vocab_size
        self._started = False

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        import xgrammar as xgr

        if input_ids.shape[0] != len(self._matchers):
            raise RuntimeError(
                f"grammar rows: {len(self._matchers)} grammars for a batch of {input_ids.shape[0]}"
            )
        last = input_ids[:, -1].tolist()
        rows = []
        for row, matcher in enumerate(self._matchers):
            if matcher is None or matcher.is_terminated():
                continue  # unconstrained, or finished (generate pads it from here on)
            # the token chosen last step (none before the first step)
            if self._started and not matcher.accept_token(last[row]):
                raise RuntimeError(f"grammar rows: token {last[row]} left row {row}'s grammar")
            if not matcher.is_terminated():  # a stop token just ended it
                matcher.fill_next_token_bitmask(self._bitmask, row)
                rows.append(row)
        self._started = True
        if rows:
            masked = scores.to("cpu") if scores.device.type not in ("cpu", "cuda") else scores
            xgr.apply_token_bitmask_inplace(
                masked, self._bitmask.to(masked.device), vocab_size=self._vocab_size, indices=rows
            )
            scores = masked.to(scores.device)
        # A processor before this one may have pushed a token to +inf (a length penalty that
        # grows while the grammar holds the turn open): sampling from +inf is NaN. Keep it the
        # largest finite logit instead, so it still wins where the grammar allows it.
        import torch

        largest = torch.finfo(scores.dtype).max
        return scores.masked_fill(scores == float("inf"), largest)


def _json_safe(text: bytes) -> bool:
    """Whether a token's bytes are whole UTF-8 characters, none of them a control character
    (which compact JSON never writes raw)."""
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not any(ord(char) < 0x20 for char in decoded)
