"""Tiny causal language models built in-process: real transformers objects, no downloads.

Tests and CPU demos need a model that loads, chats and generates like a hub checkpoint, yet
costs nothing to make. These helpers train a byte-level BPE tokenizer on a small built-in
corpus (so every text round-trips), give it a ChatML chat template, and pair it with a randomly
initialised Llama-architecture model of a few hundred thousand parameters. Everything is
deterministic: the same arguments give the same tokenizer and the same weights.

The model knows nothing. Its answers are noise, which is exactly what tests of the "the model
could not answer" paths need. So that answers still end by themselves (instead of always being
cut at ``max_tokens``), its generation config boosts the end-of-turn token exponentially after
``answer_tokens`` tokens; any backend that honours ``generation_config.json`` sees that.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (
    GenerationConfig,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerFast,
)

UNK, BOS, EOS, PAD = "<unk>", "<s>", "</s>", "<pad>"
IM_START, IM_END = "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = (UNK, BOS, EOS, PAD, IM_START, IM_END)
"""In this order, so their ids are 0..5 whatever the corpus."""

CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
"""ChatML, as Qwen and many others use it: each turn is ``<|im_start|>role\\n…<|im_end|>``."""

DEFAULT_CORPUS: tuple[str, ...] = (
    "We study a small question with a simple method and report what we find.",
    "Large models are expensive to train, and the gap we address is the cost of attention.",
    "The research plan has three steps: collect the data, train the baseline, compare the results.",
    "Our hypothesis is that sparse attention keeps accuracy while reducing memory by half.",
    "We evaluate on long documents and report the mean and standard deviation over five seeds.",
    "Related work includes linear attention, low-rank approximations and retrieval methods.",
    "The judge reads the plan, checks each rubric item and gives a score between 0 and 10.",
    'Answer with JSON: {"title": "Sparse attention", "steps": ["collect", "train"], "score": 7}',
    '{"name": "baseline", "hours": 4, "confidence": 0.8, "tags": ["nlp", "efficiency"]}',
    '[{"item": "ablation", "weight": 0.5}, {"item": "significance test", "weight": 1.0}]',
    r"\section{Method} We route queries to a few key blocks, see Equation~\ref{eq:route}.",
    r"\begin{equation} \mathrm{softmax}(QK^\top / \sqrt{d}) V \end{equation}",
    r"\begin{abstract} We propose a method and show that it works. \end{abstract}",
    r"\cite{vaswani2017attention} introduced the transformer; \emph{we} extend it to $O(n \log n)$.",
    "Limitations: the experiments use one language, and the largest model has one billion parameters.",
    "Numbers such as 0.1, 2048, 3e-4 and 99.5% appear in tables, figures and footnotes.",
)
"""A little English, JSON and LaTeX, so common pieces of all three become single tokens."""

INIT_STD = 0.3
"""Weight init scale. At transformers' usual 0.02 a random model gives every prompt the same
answer (a run of newlines); wider weights make its answers depend on the prompt, which tests of
batching and caching need."""


def build_tiny_tokenizer(
    texts: Iterable[str] | None = None, vocab_size: int = 512
) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on ``texts`` (default: a built-in corpus), with ChatML.

    Byte-level means any string encodes and decodes back unchanged, even characters the corpus
    never had. ``vocab_size`` is an upper bound: a small corpus may yield fewer merges.
    """
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    # trim_offsets=False keeps character offsets exact; no BOS/EOS is added when encoding,
    # because the chat template already writes every marker the model should see.
    backend.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(list(DEFAULT_CORPUS if texts is None else texts), trainer)
    return PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=backend,
        unk_token=UNK,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        extra_special_tokens={"im_start_token": IM_START, "im_end_token": IM_END},
        chat_template=CHAT_TEMPLATE,
        clean_up_tokenization_spaces=False,
    )


def build_tiny_model(
    tokenizer: PreTrainedTokenizerFast,
    *,
    hidden_size: int = 64,
    layers: int = 2,
    heads: int = 4,
    seed: int = 0,
    answer_tokens: int | None = 8,
) -> PreTrainedModel:
    """A randomly initialised Llama-architecture causal LM sized to ``tokenizer``'s vocabulary.

    Generation stops at ``<|im_end|>`` (end of turn) or ``</s>``. ``answer_tokens`` is where
    the end-of-turn boost starts (see the module docstring); None leaves answers to run until
    ``max_new_tokens``. The global torch RNG is left as it was.
    """
    vocab = tokenizer.get_vocab()
    ids = {token: vocab[token] for token in SPECIAL_TOKENS}
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=2048,
        tie_word_embeddings=True,
        initializer_range=INIT_STD,
        bos_token_id=ids[BOS],
        eos_token_id=ids[EOS],
        pad_token_id=ids[PAD],
    )
    # fork_rng: seeding must not change the caller's random stream (tests rely on theirs).
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    model.generation_config = _generation_config(ids, answer_tokens)
    model.train(False)  # inference behaviour, as from_pretrained gives
    return model


def _generation_config(ids: dict[str, int], answer_tokens: int | None) -> GenerationConfig:
    options: dict[str, Any] = {
        "bos_token_id": ids[BOS],
        "eos_token_id": [ids[IM_END], ids[EOS]],
        "pad_token_id": ids[PAD],
    }
    if answer_tokens is not None:
        # Doubles the end-of-turn score each token past answer_tokens: a random model then ends
        # its turn a few tokens later, while a trained one may end earlier on its own.
        options["exponential_decay_length_penalty"] = (answer_tokens, 2.0)
    return GenerationConfig(**options)  # type: ignore[no-untyped-call]


def save_tiny_model(path: Path, **kwargs: Any) -> Path:
    """Build a tiny tokenizer and model and save both into ``path``; returns ``path``.

    ``kwargs`` go to :func:`build_tiny_tokenizer` (``texts``, ``vocab_size``) or
    :func:`build_tiny_model` (the rest). The folder loads offline with
    ``AutoTokenizer.from_pretrained(path)`` and ``AutoModelForCausalLM.from_pretrained(path)``.
    """
    tokenizer_options = {key: kwargs.pop(key) for key in ("texts", "vocab_size") if key in kwargs}
    tokenizer = build_tiny_tokenizer(**tokenizer_options)
    model = build_tiny_model(tokenizer, **kwargs)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(path)
    model.save_pretrained(path)
    return path
