"""How big each measurement is: `TRAINWIRE_BENCH_SCALE` = `tiny` (smoke test), `small`, `full`."""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["SCALES", "Scale", "scale_from_env"]

MB = 1_000_000


@dataclass(frozen=True)
class Scale:
    name: str
    #: events per emitter measurement, and how many interleaved rounds
    emitter_events: int
    emitter_rounds: int
    #: size of the stream the reader throughput figures read, and rounds
    reader_bytes: int
    reader_rounds: int
    #: the "large" stream of the fold and re-attach figures (1 GB in the contract) and the small one
    large_bytes: int
    small_bytes: int
    #: bytes read after re-attaching, and how many re-attaches are timed
    reattach_tail_bytes: int
    reattach_repeats: int
    #: tiny Trainer: steps per run, with/without pairs, stop-latency repeats
    trainer_steps: int
    trainer_pairs: int
    stop_repeats: int
    #: fresh processes timed for each cold start (the emitter's, the CLI's), and for its baseline
    start_rounds: int


SCALES = {
    "tiny": Scale("tiny", 500, 2, 1 * MB, 2, 4 * MB, 1 * MB, 64 * 1024, 3, 10, 1, 1, 3),
    "small": Scale("small", 10_000, 5, 16 * MB, 5, 100 * MB, 1 * MB, 256 * 1024, 11, 100, 5, 2, 11),
    "full": Scale("full", 50_000, 7, 64 * MB, 5, 1000 * MB, 1 * MB, 256 * 1024, 21, 300, 5, 3, 21),
}


def scale_from_env(default: str = "full") -> Scale:
    name = os.environ.get("TRAINWIRE_BENCH_SCALE", default)
    try:
        return SCALES[name]
    except KeyError:
        raise SystemExit(f"TRAINWIRE_BENCH_SCALE must be one of {', '.join(SCALES)}, not {name!r}") from None
