"""TRL's trainers with `attach()`, on a tiny GPT-2 built from a config (CPU).

TRL 1.16 (the version pinned) exports `SFTTrainer`, `GRPOTrainer`, `DPOTrainer` and
`KTOTrainer`; `ORPOTrainer` moved to `trl.experimental.orpo`, where it is tested. The
preference trainers get a reference model of their own: without one they would load the
model's name from a hub.
"""

from __future__ import annotations

import logging
import signal
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset
from support.stream_files import stream_of
from tokenizers import Regex, Tokenizer, models, pre_tokenizers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast, TrainerCallback
from trl import DPOConfig, DPOTrainer, GRPOConfig, GRPOTrainer, KTOConfig, KTOTrainer, SFTConfig, SFTTrainer
from trl.experimental.orpo import ORPOConfig, ORPOTrainer

from trainwire.cli.demo_model import ALPHABET, synthetic_corpus
from trainwire.integrations.transformers import TrainwireCallback, attach
from trainwire.reader.invariants import check_stream
from trainwire.stop import request_stop

VOCABULARY = {token: index for index, token in enumerate(["<pad>", "<eos>", *ALPHABET[1:]])}
STEPS = 4


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerFast:
    """A character tokenizer made in memory: nothing is downloaded."""
    core = Tokenizer(models.WordLevel(VOCABULARY, unk_token="<pad>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", bos_token="<eos>")


def tiny_model() -> GPT2LMHeadModel:
    config = GPT2Config(
        vocab_size=len(VOCABULARY), n_positions=64, n_embd=16, n_layer=1, n_head=2, pad_token_id=0, eos_token_id=1
    )
    return GPT2LMHeadModel(config)


def settings(output_dir: Path, max_steps: int = STEPS) -> dict[str, Any]:
    return dict(
        output_dir=str(output_dir),
        max_steps=max_steps,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        per_device_train_batch_size=4,
        disable_tqdm=True,
    )


def sft_trainer(
    output_dir: Path, tokenizer: PreTrainedTokenizerFast, *callbacks: TrainerCallback, **more: Any
) -> SFTTrainer:
    return SFTTrainer(
        model=tiny_model(),
        args=SFTConfig(max_length=32, **settings(output_dir, **more)),
        train_dataset=Dataset.from_dict({"text": synthetic_corpus(32)}),
        processing_class=tokenizer,
        callbacks=list(callbacks),
    )


def longer_is_better(completions: list[str], **_: Any) -> list[float]:
    return [float(len(completion)) for completion in completions]


def grpo_trainer(
    output_dir: Path, tokenizer: PreTrainedTokenizerFast, *callbacks: TrainerCallback, **more: Any
) -> GRPOTrainer:
    return GRPOTrainer(
        model=tiny_model(),
        reward_funcs=longer_is_better,
        args=GRPOConfig(num_generations=2, max_completion_length=8, **settings(output_dir, **more)),
        train_dataset=Dataset.from_dict({"prompt": ["the model", "a loss"] * 8}),
        processing_class=tokenizer,
        callbacks=list(callbacks),
    )


PREFERENCES = {"prompt": ["the model", "a loss"] * 8, "chosen": [" learns", " falls"] * 8, "rejected": [" x", " y"] * 8}


def dpo_trainer(output_dir: Path, tokenizer: PreTrainedTokenizerFast) -> DPOTrainer:
    return DPOTrainer(
        model=tiny_model(),
        ref_model=tiny_model(),
        args=DPOConfig(max_length=32, **settings(output_dir)),
        train_dataset=Dataset.from_dict(PREFERENCES),
        processing_class=tokenizer,
    )


def kto_trainer(output_dir: Path, tokenizer: PreTrainedTokenizerFast) -> KTOTrainer:
    labelled = {"prompt": PREFERENCES["prompt"], "completion": [" learns", " y"] * 8, "label": [True, False] * 8}
    return KTOTrainer(
        model=tiny_model(),
        ref_model=tiny_model(),
        args=KTOConfig(max_length=32, **settings(output_dir)),
        train_dataset=Dataset.from_dict(labelled),
        processing_class=tokenizer,
    )


def orpo_trainer(output_dir: Path, tokenizer: PreTrainedTokenizerFast) -> ORPOTrainer:
    return ORPOTrainer(
        model=tiny_model(),
        args=ORPOConfig(max_length=32, **settings(output_dir)),
        train_dataset=Dataset.from_dict(PREFERENCES),
        processing_class=tokenizer,
    )


class AtStep(TrainerCallback):  # type: ignore[misc]
    """Runs `action` once, at the end of global step `step` (before trainwire's callback)."""

    def __init__(self, step: int, action: Any) -> None:
        self.step, self.action = step, action

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == self.step:
            self.action()


def assert_trained(output_dir: Path, status: str = "succeeded") -> list[dict[str, Any]]:
    stream = stream_of(output_dir / "progress.jsonl")
    assert check_stream((output_dir / "progress.jsonl").read_bytes()) == []
    assert stream[0]["event"] == "run.started" and stream[-1]["event"] == "run.finished"
    assert stream[-1]["status"] == status
    return stream


@pytest.mark.parametrize(
    ("build", "metric"),
    [
        (sft_trainer, "mean_token_accuracy"),
        (grpo_trainer, "reward"),
        (dpo_trainer, "rewards/margins"),
        (kto_trainer, "kl"),
        (orpo_trainer, "rewards/margins"),
    ],
)
def test_every_step_is_written_with_the_trainers_values(
    tmp_path: Path, tokenizer: PreTrainedTokenizerFast, build: Any, metric: str
) -> None:
    trainer = build(tmp_path, tokenizer)
    attach(trainer, step_interval_s=0)
    trainer.train()
    steps = [line for line in assert_trained(tmp_path) if line["event"] == "train.step"]
    assert [line["step"] for line in steps] == list(range(1, STEPS + 1))
    assert all(line["loss"] is not None and metric in line["metrics"] for line in steps)


@pytest.mark.parametrize(
    ("build", "stop", "reason"),
    [
        (sft_trainer, "control_file", "control_file"),
        (sft_trainer, "sigterm", "sigterm"),
        (grpo_trainer, "control_file", "control_file"),
        (grpo_trainer, "sigterm", "sigterm"),
    ],
)
def test_a_stop_ends_the_training_interrupted_with_a_checkpoint(
    tmp_path: Path, tokenizer: PreTrainedTokenizerFast, build: Any, stop: str, reason: str
) -> None:
    def ask() -> None:
        if stop == "sigterm":
            signal.raise_signal(signal.SIGTERM)  # trainwire's handler, installed by attach(signals=True)
        else:
            request_stop(tmp_path, reason="enough")

    trainer = build(tmp_path, tokenizer, AtStep(2, ask), max_steps=50)
    callback = attach(trainer, signals=True, step_interval_s=0, check_interval_s=0)
    trainer.train()
    assert callback.run is not None and callback.run.exit_code == 2
    stream = assert_trained(tmp_path, "interrupted")
    saved = [line for line in stream if line["event"] == "checkpoint.saved"]
    assert [(line["step"], line["reason"]) for line in saved] == [(2, "stop")]
    assert (tmp_path / saved[0]["path"]).is_dir()
    assert (stream[-1]["reason"], stream[-1]["step"], stream[-1]["checkpoint"]) == (reason, 2, saved[0]["path"])


def test_a_replaced_callback_list_warns_how_to_attach_again(
    tmp_path: Path, tokenizer: PreTrainedTokenizerFast, caplog: pytest.LogCaptureFixture
) -> None:
    trainer = grpo_trainer(tmp_path, tokenizer)
    callback = attach(trainer, step_interval_s=0)
    # What a setup that rebuilds the callback list does: trainwire's callback is gone.
    handler = trainer.callback_handler
    handler.callbacks = [each for each in handler.callbacks if not isinstance(each, TrainwireCallback)]
    with caplog.at_level(logging.WARNING, logger="trainwire.integrations.transformers"):
        trainer.train()
    warnings = [
        record.getMessage() for record in caplog.records if "not in trainer.callback_handler" in record.getMessage()
    ]
    assert len(warnings) == 1 and "attach(trainer, callback=" in warnings[0]
    assert stream_of(tmp_path / "progress.jsonl") == []  # nothing written

    attach(trainer, callback=callback)  # the fix the warning names
    trainer.train()
    assert [line["step"] for line in assert_trained(tmp_path) if line["event"] == "train.step"] == list(
        range(1, STEPS + 1)
    )
