"""`Run` is one class holding a core and its collaborators: a type checker names `Run` in
its errors, and no collaborator can be made without the core it writes through."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import mypy.api
import pytest
from support.paths import SOURCES

from trainwire.writer.phase_events import PhaseEvents
from trainwire.writer.run import Run
from trainwire.writer.run_lifetime import RunLifetime
from trainwire.writer.training_events import TrainingEvents
from trainwire.writer.trial_events import TrialEvents

SNIPPET = """\
from trainwire.writer.run import Run
from trainwire.writer.training_events import TrainingEvents

run = Run(None)
run.step(step="x")
with run.phase("train") as same:
    reveal_type(same)
TrainingEvents(None)
"""


def test_mypy_names_run_in_its_errors_on_run_methods(tmp_path: Path) -> None:
    (tmp_path / "snippet.py").write_text(SNIPPET, encoding="utf-8")
    # this tree's sources, not whichever trainwire the interpreter has installed
    config = f"[mypy]\nmypy_path = {SOURCES.parent}\nfollow_imports = silent\ncache_dir = {tmp_path / 'cache'}\n"
    (tmp_path / "mypy.ini").write_text(config, encoding="utf-8")
    report, errors, _ = mypy.api.run(["--config-file", str(tmp_path / "mypy.ini"), str(tmp_path / "snippet.py")])
    lines = [line.split(": ", 1)[1] for line in report.splitlines() if "snippet.py:" in line]
    assert lines == [
        'error: Argument "step" to "step" of "Run" has incompatible type "str"; expected "int"  [arg-type]',
        'note: Revealed type is "trainwire.writer.run.Run"',
        'error: Argument 1 to "TrainingEvents" has incompatible type "None"; expected "RunCore"  [arg-type]',
    ], report + errors


@pytest.mark.parametrize("collaborator", [TrainingEvents, PhaseEvents, TrialEvents, RunLifetime])
def test_a_collaborator_cannot_be_made_without_a_core(collaborator: type) -> None:
    with pytest.raises(TypeError, match="missing .*required positional argument.*'core'"):
        collaborator()


class RecordedEndings(Run):
    """A host's `Run` that records each ending asked of it, as a subclass would to log it."""

    endings: list[tuple[str, dict[str, Any]]]

    def finish(self, status: str = "succeeded", **details: Any) -> None:
        self.endings = [*getattr(self, "endings", []), (status, details)]
        super().finish(status, **details)


@pytest.mark.parametrize(
    ("raised", "ending"),
    [
        (None, ("succeeded", {})),
        (KeyboardInterrupt(), ("interrupted", {"reason": "sigint"})),
    ],
)
def test_a_with_block_ends_through_an_overridden_finish(
    tmp_path: Path, raised: BaseException | None, ending: tuple[str, dict[str, Any]]
) -> None:
    run = RecordedEndings(tmp_path, heartbeat_interval_s=None)
    with contextlib.suppress(KeyboardInterrupt), run:
        run.start(provenance=False)
        if raised is not None:
            raise raised
    assert run.endings == [ending]
    assert run.status == ending[0]


def test_a_block_ended_after_a_stop_ends_interrupted_through_an_overridden_finish(tmp_path: Path) -> None:
    run = RecordedEndings(tmp_path, heartbeat_interval_s=None)
    with run:
        run.start(provenance=False)
        run.stop_for("loss > 10 after step 500")
    assert run.endings == [("interrupted", {"reason": "api"})]
