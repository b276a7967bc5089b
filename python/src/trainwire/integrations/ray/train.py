"""Ray Train integration: the driver's side of the stop of a `TorchTrainer` job.

The workers need no integration: `train_loop_per_worker` is a plain torch.distributed loop
(Ray Train sets up the process group), so `Run(output_dir)` on every worker writes on global
rank 0 only, `StopControl(output_dir if run.active else None, run=run)` reads the control
file there, and `agreed_stop(stop)` at every step stops every worker at the same one. The
workers are Ray actors: a signal meant for the job reaches the driver, which hands it on.

```python
with TrainDriver(output_dir) as driver:
    trainer.fit()
sys.exit(driver.exit_code)
```

A first SIGTERM on the driver writes the control file of `output_dir`, which rank 0 reads
at its next check (`stop.requested` from `control_file`, reason "SIGTERM on the Ray Train
driver"); a second one ends the driver the hard way. The driver and rank 0 must see the same
output directory (one machine, or a shared filesystem). SIGINT during `fit()` is Ray Train's
own abort, which kills the workers: their run is left unfinished.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, Literal

from trainwire._generated.contract import NOT_FINISHED_EXIT_CODE
from trainwire.contract.layout import STREAM_FILE
from trainwire.reader.state import StreamReader
from trainwire.stop import request_stop

__all__ = ["TrainDriver"]

REQUESTED_BY = "the Ray Train driver"


class TrainDriver:
    """On the driver, around `trainer.fit()`: SIGTERM becomes the run's control file, and
    `exit_code` is the code of the run the workers wrote (2 after a stop)."""

    def __init__(self, output_dir: str | os.PathLike[str], *, file_name: str = STREAM_FILE) -> None:
        self.output_dir = Path(output_dir)
        self.stream = self.output_dir / file_name
        self.signalled: str | None = None
        self._previous: Any = None

    def __enter__(self) -> TrainDriver:
        self.output_dir.mkdir(parents=True, exist_ok=True)  # the control file may come before rank 0 starts
        self._previous = signal.signal(signal.SIGTERM, self._on_signal)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> Literal[False]:
        signal.signal(signal.SIGTERM, self._previous if self._previous is not None else signal.SIG_DFL)
        return False

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
