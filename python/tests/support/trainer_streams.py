"""Helpers for tests of the transformers integration: read a stream strictly, build trainers."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from transformers import Trainer, TrainingArguments

from trainwire.cli.demo_model import CharDataset, build_model, synthetic_corpus
from trainwire.contract.models import EVENT_ADAPTER
from trainwire.reader.invariants import check_stream


def events(path: Path) -> list[dict[str, Any]]:
    """Every line of the stream, each valid against the contract, the whole file a valid stream."""
    data = path.read_bytes()
    assert [str(violation) for violation in check_stream(data)] == []
    lines = data.decode("utf-8").splitlines()
    for line in lines:
        EVENT_ADAPTER.validate_json(line, strict=True)
    return [json.loads(line) for line in lines]


def runs(stream: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The stream's runs in the order they started, each as its own lines."""
    order = list(dict.fromkeys(line["run_id"] for line in stream))
    return [[line for line in stream if line["run_id"] == run_id] for run_id in order]


def plain_trainer(output_dir: str | os.PathLike[str], *, model: Any = None, **arguments: Any) -> Trainer:
    """A `Trainer` as a new user writes it: `TrainingArguments` at their defaults but `arguments`.

    128 examples, batch 8 by default: 16 steps per epoch, 48 steps in the default 3 epochs.
    """
    corpus = synthetic_corpus(160)
    return Trainer(
        model=model if model is not None else build_model(),
        args=TrainingArguments(output_dir=os.fspath(output_dir), **arguments),
        train_dataset=CharDataset(corpus[:128]),
        eval_dataset=CharDataset(corpus[128:]),
    )
