"""GGUF files made in tests: a header alone, declaring tensors it does not hold."""

from __future__ import annotations

import struct
from pathlib import Path


def header_only_gguf(path: Path, shape: tuple[int, ...], context: int = 4096) -> Path:
    """A GGUF header (version 3) declaring one tensor of ``shape`` and no tensor data."""

    def string(text: str) -> bytes:
        return struct.pack("<Q", len(text)) + text.encode()

    entries = [
        string("general.architecture") + struct.pack("<I", 8) + string("llama"),
        string("llama.context_length") + struct.pack("<II", 4, context),
        string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2) + string("a") + string("b"),
        string("llama.scores") + struct.pack("<IIQ", 9, 6, 2) + struct.pack("<ff", 0.5, 1.5),
    ]
    tensor = string("token_embd.weight") + struct.pack(
        f"<I{len(shape)}QIQ", len(shape), *shape, 0, 0
    )
    data = b"GGUF" + struct.pack("<IQQ", 3, 1, len(entries)) + b"".join(entries) + tensor
    path.write_bytes(data)
    return path
