"""Where the runner cuts a stream into chunks, to test incremental decoding."""

from __future__ import annotations

import random
from dataclasses import dataclass

#: streams up to this size are also sent one byte at a time
BYTE_BY_BYTE_LIMIT = 4096
RANDOM_PLANS = 3


@dataclass(frozen=True)
class Plan:
    """A named way of splitting a stream: the offsets where chunks end."""

    name: str
    cuts: tuple[int, ...]

    def chunks(self, data: bytes) -> list[bytes]:
        edges = [0, *self.cuts, len(data)]
        return [data[start:end] for start, end in zip(edges, edges[1:], strict=False)]


def _plan(name: str, cuts: object, size: int) -> Plan:
    return Plan(name, tuple(sorted({cut for cut in cuts if 0 < cut < size})))  # type: ignore[attr-defined]


def _inside_characters(data: bytes) -> list[int]:
    # Offsets just after the lead byte of every multi-byte UTF-8 character.
    return [index + 1 for index, byte in enumerate(data) if byte >= 0xC0]


def plans_for(data: bytes, seed: int) -> list[Plan]:
    """Whole, at every line boundary, inside every multi-byte character, byte by byte
    (small streams), and a few random splits drawn from `seed`."""
    size = len(data)
    plans = [Plan("whole", ())]
    line_ends = [index + 1 for index, byte in enumerate(data) if byte == 0x0A]
    if line_ends:
        plans.append(_plan("line-by-line", line_ends, size))
    multibyte = _inside_characters(data)
    if multibyte:
        plans.append(_plan("inside-characters", multibyte, size))
    if 1 < size <= BYTE_BY_BYTE_LIMIT:
        plans.append(_plan("byte-by-byte", range(1, size), size))
    rng = random.Random(f"{seed}:{size}")
    for number in range(1, RANDOM_PLANS + 1):
        if size > 1:
            count = rng.randint(1, min(size - 1, 64))
            plans.append(_plan(f"random-{number}", rng.sample(range(1, size), count), size))
    return plans
