"""Ray Train integration: the driver's side of the stop of a `TorchTrainer` job.

The workers need no integration: `train_loop_per_worker` is a plain torch.distributed loop
(Ray Train sets up the process group), so `Run(output_dir)` on every worker writes on global
rank 0 only, `StopControl(output_dir if run.active else None, run=run)` reads the control
file there, and `agreed_stop(stop)` at every step stops every worker at the same one. The
workers are Ray actors: a signal meant for the job reaches the driver, which hands it on.

```python
with TrainDriver(output_dir) as driver:
    driver.fit(trainer)
sys.exit(driver.exit_code)
```

A first SIGTERM or SIGINT on the driver writes the control file of `output_dir`, which rank
0 reads at its next check (`stop.requested` from `control_file`, reason "SIGTERM on the Ray
Train driver"); a second one ends the driver the hard way. The driver and rank 0 must see
the same output directory (one machine, or a shared filesystem). `driver.fit(trainer)` runs
`trainer.fit()` in a thread of its own, where Ray Train takes no SIGINT: called from the
main thread, `fit()` takes SIGINT as Ray Train's own abort, which kills the workers and
leaves their run unfinished.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Literal

from trainwire._generated.contract import NOT_FINISHED_EXIT_CODE
from trainwire.contract.layout import STREAM_FILE
from trainwire.reader.state import StreamReader
from trainwire.stop import request_stop

__all__ = ["TrainDriver"]

REQUESTED_BY = "the Ray Train driver"
#: the signals the driver hands on; SIGINT reaches it only around `driver.fit(trainer)`
_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class TrainDriver:
    """On the driver, around `driver.fit(trainer)`: SIGTERM and SIGINT become the run's
    control file, and `exit_code` is the code of the run the workers wrote (2 after a stop)."""

    def __init__(self, output_dir: str | os.PathLike[str], *, file_name: str = STREAM_FILE) -> None:
        self.output_dir = Path(output_dir)
        self.stream = self.output_dir / file_name
        self.signalled: str | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> TrainDriver:
        self.output_dir.mkdir(parents=True, exist_ok=True)  # the control file may come before rank 0 starts
        self._previous = {number: signal.signal(number, self._on_signal) for number in _SIGNALS}
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> Literal[False]:
        for number, previous in self._previous.items():
            signal.signal(number, previous if previous is not None else signal.SIG_DFL)
        return False

    def fit(self, trainer: Any) -> Any:
        """`trainer.fit()`, in a thread of its own: there Ray Train installs no SIGINT handler
        (its abort), so Ctrl+C stays the driver's and stops the run as SIGTERM does. The main
        thread waits, free to run the signal handlers; `fit()`'s result or error is this one's."""
        outcome: dict[str, Any] = {}

        def fit() -> None:
            try:
                outcome["result"] = trainer.fit()
            except BaseException as error:  # handed to the caller's thread below
                outcome["error"] = error

        thread = threading.Thread(target=fit, name="trainwire-ray-train-fit", daemon=True)
        thread.start()
        while thread.is_alive():
            thread.join(0.2)  # short waits: a signal's handler runs between them
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("result")

    @property
    def exit_code(self) -> int:
        """The exit code of the newest run in the stream; `NOT_FINISHED_EXIT_CODE` when it has
        not finished (a worker died) or there is none."""
        reader = StreamReader()
        try:
            reader.feed(self.stream.read_bytes())
        except FileNotFoundError:
            return NOT_FINISHED_EXIT_CODE
        reader.finish()
        run = reader.latest_run()
        code = run.exit_code if run is not None else None
        return NOT_FINISHED_EXIT_CODE if code is None else code

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        if self.signalled is not None:
            # Second signal: the user means it.
            signal.signal(number, signal.SIG_DFL)
            signal.raise_signal(number)
            return
        self.signalled = signal.Signals(number).name
        request_stop(self.output_dir, reason=f"{self.signalled} on the Ray Train driver", requested_by=REQUESTED_BY)
