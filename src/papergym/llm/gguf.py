"""GGUF files as local models: recognising one, reading its header, and the memory it needs.

A GGUF file (llama.cpp's format) is named like any local model, ``model: PATH/FILE.gguf``;
transformers loads it as ``from_pretrained(folder, gguf_file=FILE)``, dequantised. Before that
load (a minute for a 135M model on a busy CPU) the file is checked here: it exists, it starts
with the ``GGUF`` magic bytes, and its weights fit in memory. The header is read by a small
reader of its own rather than ``gguf.GGUFReader``, which parses every field (the tokenizer's
100k strings) and took 15 s per file here; this reader skips arrays and stops at the tensor
table.

The memory rule, stated once: the weights take *parameters × bytes per parameter* of the dtype
they load as (transformers dequantises GGUF to float32 under ``dtype: auto``: 4 bytes; bfloat16
and float16: 2). A model whose weights alone exceed the memory available now (``MemAvailable``
of ``/proc/meminfo``, or a CUDA device's free memory) cannot load, and is refused before loading.
Activations and the loading peak come on top, so passing the check does not promise a load.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from papergym.errors import BadInputError

GGUF_MAGIC = b"GGUF"
GGUF_SUFFIX = ".gguf"
BYTES_PER_PARAMETER = {"auto": 4, "float32": 4, "bfloat16": 2, "float16": 2}
"""Bytes a weight takes once loaded (``auto``: transformers dequantises GGUF to float32)."""

# Metadata value types of the GGUF specification, with their struct formats (little-endian).
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q"}
_SCALAR |= {11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


@dataclass(frozen=True)
class GGUFHeader:
    """What a GGUF file says about itself: its scalar metadata and its parameter count."""

    metadata: dict[str, object]
    parameters: int

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))

    @property
    def context_length(self) -> int | None:
        """The context the model was trained for (``<architecture>.context_length``)."""
        value = self.metadata.get(f"{self.architecture}.context_length")
        return value if isinstance(value, int) and value > 0 else None


def is_gguf_name(model: str) -> bool:
    """Whether ``model`` names a GGUF file (by its suffix; the content is checked on load)."""
    return model.lower().endswith(GGUF_SUFFIX)


def gguf_source(model: str, gguf_file: str | None) -> tuple[str, str | None]:
    """(what to pass to ``from_pretrained``, the ``gguf_file`` argument): a ``model`` that is a
    ``.gguf`` path becomes its folder and file name; otherwise both as configured."""
    if gguf_file is None and is_gguf_name(model):
        path = Path(model).expanduser()
        return str(path.parent), path.name
    return model, gguf_file


def local_gguf_path(model: str, gguf_file: str | None) -> Path | None:
    """The GGUF file on disk that ``model``/``gguf_file`` name, or ``None`` when they name none
    here (a hub repo, or no GGUF at all)."""
    folder, name = gguf_source(model, gguf_file)
    if name is None:
        return None
    if is_gguf_name(model) or Path(folder).expanduser().is_dir():
        return Path(folder).expanduser() / name
    return None  # a hub repo id: transformers fetches the file


def check_gguf(path: Path) -> None:
    """Refuse, in one line, a path that does not exist or is not a GGUF file."""
    if not path.is_file():
        raise BadInputError(path, "no such GGUF file" if not path.exists() else "not a file")
    with path.open("rb") as stream:
        magic = stream.read(4)
    if magic != GGUF_MAGIC:
        raise BadInputError(
            path, f"not a GGUF file: it starts with {magic!r}, not the GGUF magic bytes b'GGUF'"
        )


def read_header(path: Path) -> GGUFHeader:
    """The scalar metadata and the parameter count of the GGUF file at ``path``."""
    check_gguf(path)
    try:
        with path.open("rb", buffering=1 << 20) as stream:
            return _read_header(stream)
    except (struct.error, UnicodeDecodeError, ValueError) as error:
        raise BadInputError(path, f"not a readable GGUF file: {error}") from None


def _read_header(stream: BinaryIO) -> GGUFHeader:
    read = _reader(stream)
    stream.read(4)  # the magic, checked already
    (version,) = read("<I")
    if version not in (2, 3):
        raise ValueError(f"GGUF version {version} (this reader knows versions 2 and 3)")
    tensors, entries = read("<QQ")
    metadata: dict[str, object] = {}
    for _ in range(entries):
        key = _string(stream, read)
        (kind,) = read("<I")
        value = _value(stream, read, kind)
        if value is not None:
            metadata[key] = value
    parameters = 0
    for _ in range(tensors):
        _string(stream, read)
        (dims,) = read("<I")
        shape = read(f"<{dims}Q") if dims else ()
        read("<IQ")  # the tensor's type and data offset
        parameters += math.prod(shape)
    return GGUFHeader(metadata=metadata, parameters=parameters)


Read = Callable[[str], tuple[int, ...]]


def _reader(stream: BinaryIO) -> Read:
    def read(fmt: str) -> tuple[int, ...]:
        size = struct.calcsize(fmt)
        data = stream.read(size)
        if len(data) != size:
            raise ValueError("the header ends early")
        return struct.unpack(fmt, data)

    return read


def _string(stream: BinaryIO, read: Read) -> str:
    (length,) = read("<Q")
    data = stream.read(length)
    if len(data) != length:
        raise ValueError("the header ends early")
    return data.decode("utf-8")


def _value(stream: BinaryIO, read: Read, kind: int) -> object:
    """A scalar or string value; an array is skipped (``None``): nothing here needs one."""
    if kind in _SCALAR:
        return read(_SCALAR[kind])[0]
    if kind == _STRING:
        return _string(stream, read)
    if kind != _ARRAY:
        raise ValueError(f"unknown metadata type {kind}")
    item, count = read("<IQ")
    if item in _SCALAR:
        stream.seek(struct.calcsize(_SCALAR[item]) * count, 1)
    else:
        for _ in range(count):
            _value(stream, read, item)
    return None


def weights_bytes(parameters: int, dtype: str) -> int:
    """Memory the weights take once loaded: parameters × bytes per parameter of ``dtype``."""
    return parameters * BYTES_PER_PARAMETER.get(dtype, 4)


def available_memory(device: str) -> int | None:
    """Bytes free for weights on ``device`` now, or ``None`` where this cannot be told."""
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            return None
        free, _total = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    try:
        lines = Path("/proc/meminfo").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return None


def refuse_if_too_big(what: Path | str, needed: int, available: int | None, device: str) -> None:
    """Refuse (one line) weights of ``needed`` bytes when ``available`` is known and smaller."""
    if available is not None and needed > available:
        raise BadInputError(
            what,
            f"too big for memory: its weights need {_gib(needed)} on {device} "
            f"(parameters x bytes per parameter), {_gib(available)} is available",
        )


def _gib(count: int) -> str:
    return f"{count / 2**30:.1f} GiB"
