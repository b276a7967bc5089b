"""The `memory` of `train.step` as the contract takes it: by device name, each device's
allocated, reserved and peak bytes (null where the device cannot tell)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trainwire.writer.checks import Complaints
from trainwire.writer.values import BAD, integer

__all__ = ["DEVICE_FIGURES", "device_memory"]

#: the figures of one device, in the schema's order
DEVICE_FIGURES = ("allocated_bytes", "reserved_bytes", "peak_bytes")


def device_memory(memory: Any, complain: Complaints) -> dict[str, dict[str, int | None]] | None:
    """`memory` as written: a figure that is not a byte count is null, a device that is not
    a named mapping is left out, and a `memory` that is not a mapping is left out (None);
    each with a complaint."""
    if not isinstance(memory, Mapping):
        complain("train.step.memory", f"memory={memory!r} is not a mapping of device name to figures; left out")
        return None
    devices: dict[str, dict[str, int | None]] = {}
    for device, figures in memory.items():
        if not isinstance(device, str) or not device or not isinstance(figures, Mapping):
            complain(
                "train.step.memory", f"memory[{device!r}] is not a device name with a mapping of figures; left out"
            )
            continue
        devices[device] = {name: _bytes(device, name, figures.get(name), complain) for name in DEVICE_FIGURES}
    return devices


def _bytes(device: str, name: str, value: Any, complain: Complaints) -> int | None:
    checked = integer(value, 0)
    if checked is BAD:
        complain("train.step.memory", f"memory[{device!r}].{name}={value!r} is not a byte count; written as null")
        return None
    return checked
