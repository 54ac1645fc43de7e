"""The few pieces of a rollout the usage scan decodes as JSON: each model call's
``last_token_usage`` object, and once an hour a ``token_count`` line for its ``rate_limits``;
and the usage cache's own file (:func:`encode`, :func:`decode`).

The byte-level scan (:mod:`core.providers.codex.history`) finds them; this module decodes them
with msgspec — a maintained C decoder that builds typed structs and skips what it is not asked
for — all of a run of calls in one call. msgspec is a dependency, but a missing or broken wheel
must not cost the chart: the standard library's ``json`` then gives the same answers, slower.
Either way JSON nested too deep is refused, never a ``RecursionError`` (msgspec raises one: the
line then goes to :mod:`core.providers.jsonload`, which refuses it).
Measured on the 1 GiB bench tree (docs/notes/issue-24-scan.md): msgspec 0.16 s, orjson 0.19 s,
``json`` 0.30 s, the former anchored regex 0.27 s for the 119,827 calls.
"""


import json
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from core.providers import jsonload

#: the counted fields of a usage object, in the order of :class:`TokenCounts`' columns
FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens",
          "total_tokens")

Sums = tuple[int, int, int, int, int]


def _stdlib_sums(objects: list[bytes]) -> Sums | None:
    try:
        rows = jsonload.loads(b"[" + b",".join(objects) + b"]")
        return tuple(sum(int(row.get(name) or 0) for row in rows)  # type: ignore[return-value]
                     for name in FIELDS)
    except (ValueError, TypeError, AttributeError):
        return None


def _stdlib_line(line: bytes) -> tuple[str, Any] | None:
    try:
        record = jsonload.loads(line)
        return str(record["timestamp"]), record["payload"]["rate_limits"]
    except (ValueError, KeyError, TypeError):
        return None


def _stdlib_encode(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _msgspec_decoders() -> tuple[Callable[[list[bytes]], Sums | None],
                                 Callable[[bytes], tuple[str, Any] | None],
                                 Callable[[Any], bytes], Callable[[bytes], Any]] | None:
    try:
        import msgspec
    except ImportError:  # pragma: no cover - msgspec is a dependency; the fallback is tested
        return None

    class Usage(msgspec.Struct):
        input_tokens: int = 0
        cached_input_tokens: int = 0
        output_tokens: int = 0
        reasoning_output_tokens: int = 0
        total_tokens: int = 0

    class Payload(msgspec.Struct):
        rate_limits: dict[str, Any]

    class Line(msgspec.Struct):
        timestamp: str
        payload: Payload

    usages = msgspec.json.Decoder(list[Usage]).decode
    lines = msgspec.json.Decoder(Line).decode
    getters = [attrgetter(name) for name in FIELDS]

    def sums(objects: list[bytes]) -> Sums | None:
        try:
            rows = usages(b"[" + b",".join(objects) + b"]")
        except (msgspec.DecodeError, RecursionError):
            return None  # e.g. a null or fractional count, or too deep: json's reading decides
        return tuple(sum(map(get, rows)) for get in getters)

    def line(raw: bytes) -> tuple[str, Any] | None:
        try:
            record = lines(raw)
        except (msgspec.DecodeError, RecursionError):  # too deep: refused by jsonload
            return _stdlib_line(raw)
        return record.timestamp, record.payload.rate_limits

    def plain(raw: bytes) -> Any:
        try:
            return msgspec.json.decode(raw)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise ValueError(f"not JSON: {type(exc).__name__}") from None

    return sums, line, msgspec.json.encode, plain


_FAST = _msgspec_decoders()


def usage_sums(objects: list[bytes]) -> Sums | None:
    """The five counts summed over ``objects`` (JSON usage objects; a missing or null count is
    0), or None when one of them is not such an object — the caller then reads them one by
    one."""
    if _FAST is not None and (found := _FAST[0](objects)) is not None:
        return found
    return _stdlib_sums(objects)


def stamp_and_limits(line: bytes) -> tuple[str, Any] | None:
    """(``timestamp``, ``payload.rate_limits``) of a rollout line, or None when it has none."""
    return _FAST[1](line) if _FAST is not None else _stdlib_line(line)


def encode(value: Any) -> bytes:
    """``value`` (plain lists, dicts, strings and numbers) as compact JSON."""
    return _FAST[2](value) if _FAST is not None else _stdlib_encode(value)


def decode(raw: bytes) -> Any:
    """The plain value ``raw`` holds; ValueError when it is not JSON or nests too deep (never a
    ``RecursionError``)."""
    return _FAST[3](raw) if _FAST is not None else jsonload.loads(raw)


__all__ = ["FIELDS", "Sums", "decode", "encode", "stamp_and_limits", "usage_sums"]
