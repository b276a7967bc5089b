"""W&B offline runs read back record by record with W&B's own protocol messages
(`wandb_internal_pb2.Record`), without a server or the network."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from wandb.proto import wandb_internal_pb2

# a `.wandb` file is a LevelDB-style log: 32 KiB blocks of records, each with a 7-byte header
# (CRC32C, length, type), after W&B's own 7-byte file header
_BLOCK = 32 * 1024
_HEADER = 7
_FULL, _LAST = 1, 4


def records(offline_run: Path) -> list[Any]:
    """Every record of an offline run, parsed by W&B's protocol buffers."""
    (log,) = offline_run.glob("run-*.wandb")
    data = log.read_bytes()
    assert data[:4] == b":W&B"
    parsed, pending, offset = [], b"", _HEADER
    while offset + _HEADER <= len(data):
        if _BLOCK - offset % _BLOCK < _HEADER:  # a block's tail too short for a header is padding
            offset += _BLOCK - offset % _BLOCK
            continue
        _, length, kind = struct.unpack("<IHB", data[offset : offset + _HEADER])
        if length == 0 and kind == 0:
            break
        pending += data[offset + _HEADER : offset + _HEADER + length]
        offset += _HEADER + length
        if kind in (_FULL, _LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            parsed.append(record)
            pending = b""
    return parsed


def of_type(found: list[Any], kind: str) -> list[Any]:
    return [getattr(record, kind) for record in found if record.WhichOneof("record_type") == kind]


def summary(found: list[Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for update in of_type(found, "summary"):
        for item in update.update:
            values[item.key or "/".join(item.nested_key)] = json.loads(item.value_json)
    return values
