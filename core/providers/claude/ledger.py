"""Token usage across every transcript, de-duplicated, grouped into 5-hour blocks for the chart.

Claude Code writes one line per content block of a response, each repeating the response's
``usage``; resumed sessions copy old lines into new files. So every response is counted once,
keyed by ``message.id`` + ``requestId`` (what ccusage does).

Blocks follow the usual "session block" rule of Claude usage monitors: a block starts at the
hour (UTC) of its first response and lasts five hours; a response after the block's end, or more
than five hours after the previous one, starts a new block.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

BLOCK_SECONDS = 5 * 3600


@dataclass(frozen=True)
class UsageBlock:
    """Tokens used in one 5-hour block."""

    start: datetime
    end: datetime
    last_at: datetime
    responses: int
    input_tokens: int
    output_tokens: int
    cache_creation_tokens: int
    cache_read_tokens: int

    @property
    def total_tokens(self) -> int:
        return (self.input_tokens + self.output_tokens + self.cache_creation_tokens
                + self.cache_read_tokens)


@dataclass(frozen=True)
class LimitStopRecord:
    """A limit stop seen anywhere in the history (for the chart's markers)."""

    key: str
    at: datetime
    session_id: str
    text: str
    rate_limit_type: str | None = None  # the structured window, when the record had one
    resets_at: float | None = None  # the exact reset (epoch seconds), when the record had one
    using_overage: bool = False


@dataclass(frozen=True)
class LedgerExport:
    keys: list[bytes]
    times: array[float]
    tokens: array[int]
    model_of: array[int]
    model_names: list[str]
    stops: list[LimitStopRecord]


class _OpenBlock:
    __slots__ = ("cc", "count", "cr", "end", "inp", "last", "out", "start")

    def __init__(self, at: float) -> None:
        self.start = at - at % 3600
        self.end = self.start + BLOCK_SECONDS
        self.last = at
        self.count = self.inp = self.out = self.cc = self.cr = 0

    def fits(self, at: float) -> bool:
        return at < self.end and at - self.last <= BLOCK_SECONDS

    def add(self, at: float, tokens: tuple[int, int, int, int]) -> None:
        self.last = max(self.last, at)
        self.count += 1
        self.inp += tokens[0]
        self.out += tokens[1]
        self.cc += tokens[2]
        self.cr += tokens[3]

    def freeze(self) -> UsageBlock:
        return UsageBlock(_utc(self.start), _utc(self.end), _utc(self.last), self.count,
                          self.inp, self.out, self.cc, self.cr)


class UsageLedger:
    """Owns the de-duplicated responses and limit stops; computes blocks incrementally.

    Responses arriving in time order (the usual case: appends) extend the last block; an older
    one marks the blocks for a rebuild on the next :meth:`blocks` call.
    """

    def __init__(self) -> None:
        self._seen: set[bytes] = set()
        self._keys: list[bytes] = []
        self._times = array("d")
        self._tokens = array("q")  # 4 per response: input, output, cache creation, cache read
        self._model_of = array("H")  # index into _model_names, per response
        self._model_names: list[str] = []
        self._model_index: dict[str, int] = {}
        self.stops: dict[str, LimitStopRecord] = {}
        self._blocks: list[_OpenBlock] = []
        self._dirty = False

    @property
    def models(self) -> dict[str, int]:
        """Responses per model."""
        counts = Counter(self._model_of)
        return {self._model_names[i]: n for i, n in sorted(counts.items())}

    def __len__(self) -> int:
        return len(self._times)

    def seen(self, key: bytes) -> bool:
        return key in self._seen

    @property
    def seen_keys(self) -> set[bytes]:
        """The keys counted so far (read-only use: a hot loop's membership test)."""
        return self._seen

    def add(self, key: bytes, at: float, model: str, tokens: tuple[int, int, int, int]) -> bool:
        """Count one response; False when its key was counted before."""
        if key in self._seen:
            return False
        self._seen.add(key)
        self._keys.append(key)
        self._times.append(at)
        self._tokens.extend(tokens)
        index = self._model_index.get(model)
        if index is None:
            index = self._model_index[model] = len(self._model_names)
            self._model_names.append(model)
        self._model_of.append(index)
        if not self._dirty:
            self._extend(at, tokens)
        return True

    def export(self) -> LedgerExport:
        """Everything counted, in a compact picklable form (for merging scans of many files)."""
        return LedgerExport(self._keys, self._times, self._tokens, self._model_of,
                            self._model_names, list(self.stops.values()))

    def merge(self, other: LedgerExport) -> None:
        """Add another ledger's responses and stops (responses seen here are skipped)."""
        for stop in other.stops:
            self.add_stop(stop)
        if not self._keys:  # the first part of a parallel scan: take it as it is
            self._adopt(other)
            return
        tokens, names = other.tokens, other.model_names
        for i, key in enumerate(other.keys):
            base = 4 * i
            self.add(key, other.times[i], names[other.model_of[i]],
                     (tokens[base], tokens[base + 1], tokens[base + 2], tokens[base + 3]))

    def _adopt(self, other: LedgerExport) -> None:
        self._keys = list(other.keys)
        self._seen = set(self._keys)
        self._times = array("d", other.times)
        self._tokens = array("q", other.tokens)
        self._model_names = list(other.model_names)
        self._model_index = {name: i for i, name in enumerate(self._model_names)}
        self._model_of = array("H", other.model_of)
        self._blocks = []
        self._dirty = True

    def add_stop(self, stop: LimitStopRecord) -> None:
        self.stops.setdefault(stop.key, stop)

    def _extend(self, at: float, tokens: tuple[int, int, int, int]) -> None:
        last = self._blocks[-1] if self._blocks else None
        if last is not None and at < last.last:
            self._dirty = True  # out of order: rebuild lazily
            return
        if last is None or not last.fits(at):
            last = _OpenBlock(at)
            self._blocks.append(last)
        last.add(at, tokens)

    def totals(self) -> dict[str, int]:
        sums = [0, 0, 0, 0]
        tokens = self._tokens
        for i in range(4):
            sums[i] = sum(tokens[i::4])
        return {"input_tokens": sums[0], "output_tokens": sums[1],
                "cache_creation_input_tokens": sums[2], "cache_read_input_tokens": sums[3],
                "total_tokens": sum(sums), "responses": len(self._times)}

    def blocks(self) -> list[UsageBlock]:
        if self._dirty:
            self._rebuild()
        return [b.freeze() for b in self._blocks]

    def _rebuild(self) -> None:
        self._blocks = []
        self._dirty = False
        tokens = self._tokens
        for index in sorted(range(len(self._times)), key=self._times.__getitem__):
            base = 4 * index
            quad = (tokens[base], tokens[base + 1], tokens[base + 2], tokens[base + 3])
            self._extend(self._times[index], quad)


def _utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)
