"""Writer rule 3 for `run.started.config`: a mapping or a sequence of any type (OmegaConf's
`DictConfig` and `ListConfig` are a `MutableMapping` and a `MutableSequence`; OmegaConf is
not installed here, so these stand in for them) is written as a JSON object or array."""

from __future__ import annotations

import json
from collections import OrderedDict, UserDict, UserList
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from trainwire.writer.run import Run


class Settings(Mapping[str, Any]):
    """A read-only mapping that is no dict, as a config library hands over; `missing`
    raises when read, as OmegaConf's `???` does."""

    def __init__(self, values: dict[str, Any], missing: str | None = None) -> None:
        self._values, self._missing = values, missing

    def __getitem__(self, key: str) -> Any:
        if key == self._missing:
            raise LookupError(f"{key} was never set")
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


class Layers(Sequence[int]):
    """A sequence that is no list."""

    def __init__(self, *sizes: int) -> None:
        self._sizes = sizes

    def __getitem__(self, index: Any) -> Any:
        return self._sizes[index]

    def __len__(self) -> int:
        return len(self._sizes)


class BrokenList(UserList[int]):
    def __iter__(self) -> Iterator[int]:
        raise RuntimeError("cannot be read")

    def __str__(self) -> str:
        return "BrokenList with hf_token=hf_abc"


def written_config(tmp_path: Path, config: Any) -> Any:
    with Run(tmp_path, heartbeat_interval_s=None) as run:
        run.start(config=config)
    first = (tmp_path / "progress.jsonl").read_text(encoding="utf-8").splitlines()[0]
    return json.loads(first)["config"]


def test_mappings_and_sequences_of_any_type_are_json_objects_and_arrays(tmp_path: Path) -> None:
    config = UserDict(
        {
            "layers": UserList([1, 2]),
            "model": Settings({"widths": Layers(64, 32), "dropout": 0.1, "hub": UserDict({"hf_token": "hf_abc"})}),
            "schedule": OrderedDict(warmup=10),
            "pairs": (UserList(["a"]), [Layers(3)]),
            "span": range(2),
            "raw": b"bytes",
        }
    )
    assert written_config(tmp_path, config) == {
        "layers": [1, 2],
        "model": {"widths": [64, 32], "dropout": 0.1, "hub": {"hf_token": "<redacted>"}},
        "schedule": {"warmup": 10},
        "pairs": [["a"], [[3]]],
        "span": "range(0, 2)",
        "raw": "b'bytes'",
    }


def test_a_value_that_raises_when_read_leaves_the_rest_of_the_config_written(tmp_path: Path) -> None:
    config = {"model": Settings({"lr": 0.1, "data": "???"}, missing="data"), "broken": BrokenList([1])}
    assert written_config(tmp_path, config) == {
        "model": {"lr": 0.1, "data": "<unreadable: LookupError>"},
        "broken": "BrokenList with hf_token=<redacted>",
    }


def test_the_journals_config_is_the_streams(tmp_path: Path) -> None:
    written = written_config(tmp_path, {"layers": UserList([1, 2])})
    journals = list(tmp_path.glob("runs/*/config.json"))
    assert written == {"layers": [1, 2]} and len(journals) == 1
    assert json.loads(journals[0].read_text(encoding="utf-8")) == written
