"""Fields of the run summary (`lines.summary`) taken whole from one line: the seeds of
`run.started.provenance` and the peak memory of `train.step.memory`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["peak_memory", "seeds"]


def seeds(provenance: Mapping[str, Any]) -> dict[str, int]:
    """`provenance.seed` as `seed`, and every integer of `provenance.seeds`, by name."""
    seeds: dict[str, int] = {}
    seed = provenance.get("seed")
    if isinstance(seed, int) and not isinstance(seed, bool):
        seeds["seed"] = seed
    more = provenance.get("seeds")
    if isinstance(more, Mapping):
        seeds.update(
            (str(name), value) for name, value in more.items() if isinstance(value, int) and not isinstance(value, bool)
        )
    return dict(sorted(seeds.items()))


def peak_memory(peaks: dict[str, int], memory: Any) -> None:
    """The highest `peak_bytes` (else `allocated_bytes`) of each device of `train.step.memory`."""
    if not isinstance(memory, Mapping):
        return
    for device, figures in memory.items():
        if not isinstance(figures, Mapping):
            continue
        peak = figures.get("peak_bytes")
        if not isinstance(peak, int) or isinstance(peak, bool):
            peak = figures.get("allocated_bytes")
        if isinstance(peak, int) and not isinstance(peak, bool) and peak > peaks.get(str(device), -1):
            peaks[str(device)] = peak
