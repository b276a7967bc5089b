"""Keras 3 with trainwire: `python examples/keras_train.py OUTPUT_DIR [--epochs N]`.

A tiny regression on random data, on the torch backend (CPU). The stream goes to
OUTPUT_DIR/progress.jsonl; `trainwire stop OUTPUT_DIR`, SIGTERM or Ctrl+C stop it after the
current step with a checkpoint, and the process exits 2. Needs `pip install 'trainwire[keras]'`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "torch")  # before keras is imported

import keras
import numpy as np

from trainwire import RunInterrupted
from trainwire.integrations.keras import attach


class SlowSteps(keras.callbacks.Callback):
    """Stands in for a real model's work: `delay_s` more per batch."""

    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s = delay_s

    def on_train_batch_end(self, batch: int, logs: object = None) -> None:
        time.sleep(self.delay_s)


def tiny_model(learning_rate: float = 0.05) -> keras.Model:
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(learning_rate), loss="mse", metrics=["mae"])
    return model


def data(samples: int = 64, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    inputs = np.random.default_rng(seed).normal(size=(samples, 4)).astype("float32")
    return inputs, inputs.sum(axis=1, keepdims=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output_dir")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--step-delay", type=float, default=0.0, help="seconds of extra work per step")
    options = parser.parse_args(argv)

    model = tiny_model()
    callback = attach(model, output_dir=options.output_dir, signals=True, step_interval_s=0)
    inputs, targets = data()
    model.fit(
        inputs,
        targets,
        batch_size=8,
        epochs=options.epochs,
        validation_data=data(16, seed=1),
        callbacks=[SlowSteps(options.step_delay)],
        verbose=0,
    )
    try:
        callback.raise_if_stopped()  # nothing below runs after a stop
        model.save(f"{options.output_dir}/final.keras")
    except RunInterrupted:
        pass
    return callback.run.exit_code if callback.run is not None else 0


if __name__ == "__main__":
    sys.exit(main())
