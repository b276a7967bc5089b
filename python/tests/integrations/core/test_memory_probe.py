"""The CUDA branch of `step_memory`, which no machine here can run: the real torch module
with its `torch.cuda` answers faked as two devices, written through a real `Run`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch

from trainwire.integrations.core.memory_probe import step_memory
from trainwire.writer.run import Run

GIB = 2**30


class FakeDevices:
    """Two CUDA devices whose figures the test sets; a reset of the peaks is recorded."""

    def __init__(self) -> None:
        self.allocated = [1 * GIB, 2 * GIB]
        self.peak = [3 * GIB, 4 * GIB]
        self.resets: list[Any] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        cuda = torch.cuda
        monkeypatch.setattr(cuda, "is_initialized", lambda: True)
        monkeypatch.setattr(cuda, "is_available", lambda: True)
        monkeypatch.setattr(cuda, "device_count", lambda: 2)
        monkeypatch.setattr(cuda, "memory_allocated", lambda index: self.allocated[index])
        monkeypatch.setattr(cuda, "memory_reserved", lambda index: self.allocated[index] + GIB)
        monkeypatch.setattr(cuda, "max_memory_allocated", lambda index: self.peak[index])
        monkeypatch.setattr(cuda, "reset_peak_memory_stats", lambda *args: self.resets.append(args))


def written_memory(tmp_path: Path, steps: int, between: Any) -> list[dict[str, Any]]:
    with Run(tmp_path, step_interval_s=0, heartbeat_interval_s=None) as run:
        run.start(total_steps=steps)
        for step in range(1, steps + 1):
            run.step(step, loss=1.0, memory=step_memory())
            between(step)
    lines = [json.loads(line) for line in (tmp_path / "progress.jsonl").read_text().splitlines()]
    return [line["memory"] for line in lines if line["event"] == "train.step"]


def test_each_cuda_device_is_written_with_its_figures_and_the_peak_is_never_reset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    devices = FakeDevices()
    devices.install(monkeypatch)

    def free_memory_on_device_0(step: int) -> None:
        devices.allocated[0] = GIB // 2  # the peak stays what torch says it was

    memory = written_memory(tmp_path, 2, free_memory_on_device_0)
    assert memory == [
        {
            "cuda:0": {"allocated_bytes": GIB, "reserved_bytes": 2 * GIB, "peak_bytes": 3 * GIB},
            "cuda:1": {"allocated_bytes": 2 * GIB, "reserved_bytes": 3 * GIB, "peak_bytes": 4 * GIB},
        },
        {
            "cuda:0": {"allocated_bytes": GIB // 2, "reserved_bytes": GIB // 2 + GIB, "peak_bytes": 3 * GIB},
            "cuda:1": {"allocated_bytes": 2 * GIB, "reserved_bytes": 3 * GIB, "peak_bytes": 4 * GIB},
        },
    ]
    assert devices.resets == []  # the training's own peak statistics are left alone


def test_cuda_not_initialised_is_never_asked_and_the_process_peak_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    FakeDevices().install(monkeypatch)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)

    asked: list[int] = []  # asking a figure of an uninitialised CUDA would initialise it
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda index: asked.append(index) or 0)
    (memory,) = written_memory(tmp_path, 1, lambda step: None)
    assert set(memory) == {"cpu"} and memory["cpu"]["peak_bytes"] > 10_000_000
    assert asked == []


def test_a_driver_that_raises_costs_the_step_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    FakeDevices().install(monkeypatch)

    def broken(index: int) -> int:
        raise RuntimeError("CUDA driver error: unknown error")

    monkeypatch.setattr(torch.cuda, "max_memory_allocated", broken)
    (memory,) = written_memory(tmp_path, 1, lambda step: None)
    assert set(memory) == {"cpu"}
