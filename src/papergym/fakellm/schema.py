"""JSON values generated from a JSON schema: what the fake LLM answers when asked for structure.

Deterministic for a seed, so the same prompt gets the same answer (caches and resumes see what a
temperature-0 model would give).
"""

from __future__ import annotations

import json
import math
import random
import uuid
from typing import Any

JSONDict = dict[str, Any]

_SOFT_DEPTH = 6
"""Below this depth only required properties and ``minItems`` items are generated, so that
recursive schemas (a tree of nodes) end."""

_HARD_DEPTH = 40
"""Past this depth generation gives up with ``null`` rather than overflow the stack."""

_WORDS = (
    "alpha",
    "beta",
    "gamma",
    "delta",
    "sparse",
    "attention",
    "baseline",
    "token",
    "layer",
    "method",
    "result",
    "dataset",
)

_FORMAT_SAMPLES = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "12:00:00",
    "duration": "P1D",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "uri": "https://example.com/item",
    "url": "https://example.com/item",
    "iri": "https://example.com/item",
    "uri-reference": "/item",
    "hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
}


class SchemaSampler:
    """Generates one JSON value that satisfies a (practical subset of a) JSON schema.

    Covers what pydantic and OpenAI-style structured outputs emit: ``$ref``/``$defs``,
    ``allOf``, ``anyOf``/``oneOf`` (first non-null branch), ``enum``/``const``, ``type`` arrays,
    objects (every property, ``required``, ``additionalProperties``, ``minProperties``), arrays
    (``items``, ``prefixItems``, ``minItems``/``maxItems``, ``uniqueItems``), strings
    (``minLength``/``maxLength``, common ``format`` values), integers and numbers (inclusive and
    exclusive bounds, ``multipleOf``) and booleans. ``pattern`` is not honoured.
    """

    def __init__(self, root: Any, rng: random.Random) -> None:
        self._root = root
        self._rng = rng

    def sample(self, schema: Any, depth: int = 0) -> Any:
        """Return a value valid against ``schema`` (resolved against the root's definitions)."""
        if depth > _HARD_DEPTH or schema is False:
            return None
        if not isinstance(schema, dict):
            return self._string({})
        schema = self._resolve(schema)
        if depth >= _SOFT_DEPTH and self._allows_null(schema):
            return None  # ends recursion through Optional fields that strict schemas require
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self._enum(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                return self._first_branch(schema[key], depth)
        return self._by_type(schema, depth)

    def _by_type(self, schema: JSONDict, depth: int) -> Any:
        kind = _type_of(schema)
        if kind == "object":
            return self._object(schema, depth)
        if kind == "array":
            return self._array(schema, depth)
        if kind == "integer":
            return self._integer(schema)
        if kind == "number":
            return self._number(schema)
        if kind == "boolean":
            return self._rng.random() < 0.5
        if kind == "null":
            return None
        return self._string(schema)

    # -- references and combinators ----------------------------------------------------------

    def _resolve(self, schema: JSONDict) -> JSONDict:
        """Inline ``$ref`` (keeping sibling keywords) and merge ``allOf`` into one schema."""
        for _ in range(_HARD_DEPTH):
            ref = schema.get("$ref")
            if not isinstance(ref, str):
                break
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**self._lookup(ref), **siblings}
        parts = schema.get("allOf")
        if isinstance(parts, list):
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in parts:
                if isinstance(part, dict):
                    merged = _merge_schemas(merged, self._resolve(part))
            schema = merged
        return schema

    def _lookup(self, ref: str) -> JSONDict:
        """Follow a local JSON pointer such as ``#/$defs/Step``; unknown refs mean 'anything'."""
        if not ref.startswith("#"):
            return {}
        node: Any = self._root
        for raw in ref[1:].split("/"):
            if not raw:
                continue
            key = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return {}
        return node if isinstance(node, dict) else {}

    def _first_branch(self, branches: list[Any], depth: int) -> Any:
        """Pick the first branch that is not ``null``: the useful value of an ``Optional``."""
        for branch in branches:
            if not (isinstance(branch, dict) and _is_null_schema(self._resolve(branch))):
                return self.sample(branch, depth)
        return None

    def _allows_null(self, schema: JSONDict) -> bool:
        declared = schema.get("type")
        if isinstance(declared, list) and "null" in declared:
            return True
        if isinstance(schema.get("enum"), list) and None in schema["enum"]:
            return True
        branches = [*(schema.get("anyOf") or []), *(schema.get("oneOf") or [])]
        return any(isinstance(b, dict) and _is_null_schema(self._resolve(b)) for b in branches)

    def _enum(self, values: Any) -> Any:
        if not isinstance(values, list) or not values:
            return None
        non_null = [v for v in values if v is not None]
        return self._rng.choice(non_null) if non_null else None

    # -- containers ----------------------------------------------------------------------------

    def _object(self, schema: JSONDict, depth: int) -> JSONDict:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = [r for r in schema.get("required") or [] if isinstance(r, str)]
        shallow = depth >= _SOFT_DEPTH
        result: JSONDict = {}
        for name, sub in properties.items():
            if not shallow or name in required:
                result[name] = self.sample(sub, depth + 1)
        extra = schema.get("additionalProperties")
        extra_schema = extra if isinstance(extra, dict) else {}
        for name in required:
            if name not in result:
                result[name] = self.sample(extra_schema, depth + 1)
        wanted = _int_or_none(schema.get("minProperties")) or 0
        if not properties and isinstance(extra, dict) and not shallow:
            wanted = max(wanted, 1)
        counter = 0
        while len(result) < wanted and extra is not False:
            counter += 1
            result.setdefault(f"key_{counter}", self.sample(extra_schema, depth + 1))
        return result

    def _array(self, schema: JSONDict, depth: int) -> list[Any]:
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        count = _item_count(schema, len(prefix), shallow=depth >= _SOFT_DEPTH)
        items = schema.get("items", {})
        unique = bool(schema.get("uniqueItems"))
        values: list[Any] = []
        seen: set[str] = set()
        for _ in range(count * 8):  # retries only matter for uniqueItems
            index = len(values)
            if index >= count or (index >= len(prefix) and items is False):
                break
            value = self.sample(prefix[index] if index < len(prefix) else items, depth + 1)
            key = json.dumps(value, sort_keys=True)
            if not (unique and key in seen):
                seen.add(key)
                values.append(value)
        return values

    # -- scalars -------------------------------------------------------------------------------

    def _string(self, schema: JSONDict) -> str:
        fmt = schema.get("format")
        if fmt == "uuid":
            text = str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
        elif isinstance(fmt, str) and fmt in _FORMAT_SAMPLES:
            text = _FORMAT_SAMPLES[fmt]
        else:
            text = " ".join(self._rng.sample(_WORDS, 2))
        low = _int_or_none(schema.get("minLength")) or 0
        high = _int_or_none(schema.get("maxLength"))
        if len(text) < low:
            text += "x" * (low - len(text))
        return text if high is None else text[:high]

    def _integer(self, schema: JSONDict) -> int:
        low, high = _integer_bounds(schema)
        step = schema.get("multipleOf")
        if isinstance(step, int) and not isinstance(step, bool) and step > 0:
            first = math.ceil(low / step) * step
            if first > high:
                return first
            return first + step * self._rng.randint(0, (high - first) // step)
        return self._rng.randint(low, high) if low <= high else low

    def _number(self, schema: JSONDict) -> float | int:
        if isinstance(schema.get("multipleOf"), int):
            return self._integer(schema)
        low, high, strict_low, strict_high = _number_bounds(schema)
        step = schema.get("multipleOf")
        if isinstance(step, float) and step > 0:
            k_low = math.floor(low / step) + 1 if strict_low else math.ceil(low / step)
            k_high = math.ceil(high / step) - 1 if strict_high else math.floor(high / step)
            k = self._rng.randint(k_low, k_high) if k_low <= k_high else k_low
            return round(k * step, 10)
        value = round(self._rng.uniform(low, high), 2)
        too_low = value < low or (strict_low and value <= low)
        too_high = value > high or (strict_high and value >= high)
        return (low + high) / 2 if too_low or too_high else value


def sample_from_schema(schema: Any, seed: int = 0) -> Any:
    """Return a JSON value valid against ``schema``, the same one for the same ``seed``."""
    return SchemaSampler(schema, random.Random(seed)).sample(schema)


def _type_of(schema: JSONDict) -> str:
    """The JSON type to generate: the first non-null ``type``, else inferred from keywords."""
    declared = schema.get("type")
    if isinstance(declared, list):
        kinds = [t for t in declared if isinstance(t, str) and t != "null"]
        return kinds[0] if kinds else "null"
    if isinstance(declared, str):
        return declared
    if any(k in schema for k in ("properties", "additionalProperties", "required")):
        return "object"
    if any(k in schema for k in ("items", "prefixItems", "minItems", "maxItems")):
        return "array"
    if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
        return "number"
    return "string"


def _is_null_schema(schema: JSONDict) -> bool:
    declared = schema.get("type")
    return (
        declared == "null"
        or declared == ["null"]
        or ("const" in schema and schema["const"] is None)
        or schema.get("enum") == [None]
    )


def _merge_schemas(base: JSONDict, extra: JSONDict) -> JSONDict:
    """Merge two ``allOf`` parts: properties and required lists are united, the rest kept."""
    merged = dict(base)
    for key, value in extra.items():
        if key == "properties" and isinstance(value, dict):
            merged["properties"] = {**(merged.get("properties") or {}), **value}
        elif key == "required" and isinstance(value, list):
            old = list(merged.get("required") or [])
            merged["required"] = old + [r for r in value if r not in old]
        else:
            merged.setdefault(key, value)
    return merged


def _number_or_none(value: Any) -> float | None:
    """``value`` as a float when it is a JSON number (booleans are not), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _int_or_none(value: Any) -> int | None:
    number = _number_or_none(value)
    return None if number is None else int(number)


def _item_count(schema: JSONDict, prefix: int, *, shallow: bool) -> int:
    """``minItems``, or 1 when it is 0 (an empty list tests little), or every tuple position
    (``prefixItems``), capped by ``maxItems``."""
    low = _int_or_none(schema.get("minItems")) or 0
    count = low if shallow else max(low, 1, prefix)
    high = _int_or_none(schema.get("maxItems"))
    return count if high is None else max(0, min(count, high))


def _bounds(schema: JSONDict) -> tuple[float | None, bool, float | None, bool]:
    """``(low, low_is_strict, high, high_is_strict)`` from draft-4 and later bound keywords."""
    low = _number_or_none(schema.get("minimum"))
    high = _number_or_none(schema.get("maximum"))
    ex_min, ex_max = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    low_strict = ex_min is True and low is not None
    high_strict = ex_max is True and high is not None
    ex_low, ex_high = _number_or_none(ex_min), _number_or_none(ex_max)
    if ex_low is not None and (low is None or ex_low >= low):
        low, low_strict = ex_low, True
    if ex_high is not None and (high is None or ex_high <= high):
        high, high_strict = ex_high, True
    return low, low_strict, high, high_strict


def _integer_bounds(schema: JSONDict) -> tuple[int, int]:
    low, low_strict, high, high_strict = _bounds(schema)
    int_low = None if low is None else math.floor(low) + 1 if low_strict else math.ceil(low)
    int_high = None if high is None else math.ceil(high) - 1 if high_strict else math.floor(high)
    return _default_range(int_low, int_high)


def _number_bounds(schema: JSONDict) -> tuple[float, float, bool, bool]:
    """``(low, high, low_is_strict, high_is_strict)`` for a ``number`` schema."""
    low, low_strict, high, high_strict = _bounds(schema)
    default_low, default_high = _default_range(low, high)
    return (
        float(default_low) if low is None else low,
        float(default_high) if high is None else high,
        low_strict,
        high_strict,
    )


def _default_range(low: float | None, high: float | None) -> tuple[int, int]:
    """Fill missing bounds so that the range spans 100 around what is given (0–100 by default)."""
    if low is None and high is None:
        return 0, 100
    if low is None:
        assert high is not None
        return math.floor(high) - 100, math.floor(high)
    if high is None:
        return math.ceil(low), math.ceil(low) + 100
    return math.ceil(low), math.floor(high)
