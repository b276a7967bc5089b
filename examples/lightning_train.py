"""Lightning with trainwire: `python examples/lightning_train.py OUTPUT_DIR [--max-steps N]`.

A tiny regression on random data, on CPU. The stream goes to OUTPUT_DIR/progress.jsonl;
`trainwire stop OUTPUT_DIR`, SIGTERM or Ctrl+C stop it after the current step with a
checkpoint, and the process exits 2. Needs `pip install 'trainwire[lightning]'`.
"""

from __future__ import annotations

import argparse
import sys
import time

import lightning.pytorch as pl
import torch
from torch.utils.data import DataLoader, TensorDataset

from trainwire import RunInterrupted
from trainwire.integrations.lightning import TrainwireCallback


class TinyRegression(pl.LightningModule):
    def __init__(self, lr: float = 0.05, step_delay_s: float = 0.0) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        time.sleep(self.hparams.step_delay_s)  # stands in for a real model's work
        inputs, targets = batch
        return torch.nn.functional.mse_loss(self.layer(inputs), targets)

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        inputs, targets = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(inputs), targets))

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


def loader(samples: int = 64, seed: int = 0) -> DataLoader:
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(samples, 4, generator=generator)
    targets = inputs.sum(dim=1, keepdim=True)
    return DataLoader(TensorDataset(inputs, targets), batch_size=8)


def trainer_for(output_dir: str, max_steps: int, callback: TrainwireCallback, **options: object) -> pl.Trainer:
    settings = dict(
        default_root_dir=output_dir,
        max_steps=max_steps,
        accelerator="cpu",
        devices=1,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        num_sanity_val_steps=0,
        callbacks=[callback],
    )
    settings.update(options)
    return pl.Trainer(**settings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output_dir")
    parser.add_argument("--max-steps", type=int, default=40)
    parser.add_argument("--step-delay", type=float, default=0.0, help="seconds of extra work per step")
    options = parser.parse_args(argv)

    callback = TrainwireCallback(signals=True, step_interval_s=0)
    trainer = trainer_for(options.output_dir, options.max_steps, callback, val_check_interval=4)
    trainer.fit(TinyRegression(step_delay_s=options.step_delay), loader(), loader(16, seed=1))
    try:
        callback.raise_if_stopped()  # nothing below runs after a stop
        trainer.save_checkpoint(f"{options.output_dir}/final.ckpt")
    except RunInterrupted:
        pass
    return callback.run.exit_code if callback.run is not None else 0


if __name__ == "__main__":
    sys.exit(main())
