"""A tiny GPT-2 and a synthetic text corpus for the demo and the tests: CPU, no downloads."""

from __future__ import annotations

import os
import random
import time
from typing import Any

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, PrinterCallback, Trainer, TrainerCallback, TrainingArguments

__all__ = ["ALPHABET", "CharDataset", "StepDelay", "build_model", "build_trainer", "synthetic_corpus"]

#: the character vocabulary (id 0 is padding, never produced by the corpus)
ALPHABET = "\0abcdefghijklmnopqrstuvwxyz .,"
_SUBJECTS = ("the model", "a loss", "every step", "the stream", "a reader", "the trainer")
_VERBS = ("learns", "writes", "follows", "counts", "stops", "resumes")
_OBJECTS = ("a line", "the run", "each epoch", "its checkpoint", "the contract", "a token")


def synthetic_corpus(count: int, *, seed: int = 0) -> list[str]:
    """`count` short sentences from a fixed grammar: easy enough to learn in a few steps."""
    rng = random.Random(seed)
    return [f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}." for _ in range(count)]


class CharDataset(Dataset[dict[str, torch.Tensor]]):
    """Character-level causal-LM examples of a fixed length (labels are the inputs)."""

    def __init__(self, texts: list[str], length: int = 32) -> None:
        index = {char: i for i, char in enumerate(ALPHABET)}
        self._rows = [
            torch.tensor([index[char] for char in text[:length].ljust(length, "\0")], dtype=torch.long)
            for text in texts
        ]

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        row = self._rows[i]
        padding = row == 0
        return {"input_ids": row, "attention_mask": (~padding).long(), "labels": row.masked_fill(padding, -100)}


def build_model(*, seed: int = 0, **overrides: Any) -> GPT2LMHeadModel:
    """A one-layer GPT-2 with random weights (about 20k parameters)."""
    torch.manual_seed(seed)
    config = GPT2Config(
        n_layer=1,
        n_head=2,
        n_embd=32,
        n_positions=64,
        vocab_size=len(ALPHABET),
        pad_token_id=0,
        bos_token_id=0,
        eos_token_id=0,
        **overrides,
    )
    return GPT2LMHeadModel(config)


def build_trainer(
    output_dir: str | os.PathLike[str],
    *,
    model: torch.nn.Module | None = None,
    train_size: int = 128,
    eval_size: int = 32,
    **arguments: Any,
) -> Trainer:
    """A `Trainer` for the tiny model on the synthetic corpus; `arguments` override the defaults."""
    # A model this small gains nothing from intra-op threads; on a busy machine they only contend.
    torch.set_num_threads(1)
    defaults: dict[str, Any] = {
        "max_steps": 20,
        "per_device_train_batch_size": 8,
        "per_device_eval_batch_size": 16,
        "learning_rate": 3e-3,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "disable_tqdm": True,
        "use_cpu": True,
        "dataloader_num_workers": 0,
        "seed": 0,
    }
    args = TrainingArguments(output_dir=os.fspath(output_dir), **{**defaults, **arguments})
    corpus = synthetic_corpus(train_size + eval_size)
    trainer = Trainer(
        model=model if model is not None else build_model(),
        args=args,
        train_dataset=CharDataset(corpus[:train_size]),
        eval_dataset=CharDataset(corpus[train_size:]) if eval_size else None,
    )
    # Without tqdm, transformers prints every log dict to stdout: keep stdout quiet.
    trainer.remove_callback(PrinterCallback)
    return trainer


class StepDelay(TrainerCallback):
    """Sleeps after every step: a demo slow enough to watch, a test slow enough to stop."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        time.sleep(self.seconds)
