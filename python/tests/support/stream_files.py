"""Helpers for tests that read a stream a real training wrote, or start ranks."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from trainwire.contract.models import EVENT_ADAPTER


def stream_of(path: Path) -> list[dict[str, Any]]:
    """The lines of a stream file so far, each checked against its event's schema."""
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    for line in lines:
        EVENT_ADAPTER.validate_json(line, strict=True)
    return [json.loads(line) for line in lines]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def of(stream: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """The lines of one event, in stream order."""
    return [line for line in stream if line["event"] == name]
