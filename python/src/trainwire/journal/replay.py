"""A run's journal documents fed from its own files: the stream's lines as a reader decodes
them, each record of the step file put back by the readers' rule (`journal.step_file`).
The writer's journal feeds it, on a thread of its own, the lines its run wrote since the last
save; `trainwire journal rebuild` folds the same documents through the readers' merge
(`journal.kept_steps`): same rule, same documents, byte for byte."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trainwire.journal.fold import RunJournalFold
from trainwire.journal.step_file import KeptSteps

__all__ = ["JournalReplay"]


class JournalReplay:
    """Folds one run's stream lines into `fold`, each kept step of `step_file` put back before
    the first line past the one its `after` names."""

    def __init__(self, fold: RunJournalFold, step_file: Path, *, follow_links: bool = True) -> None:
        self.fold = fold
        #: the `seq` of the last stream line folded (None before the first)
        self.last_seq: int | None = None
        self._kept = KeptSteps(step_file, fold.run_id, follow_links=follow_links)

    @property
    def kept_offset(self) -> int:
        """The step file's bytes folded: just past the last record put back."""
        return self._kept.offset

    def add(self, lines: Iterable[dict[str, Any]]) -> None:
        """Folds consecutive stream lines of the run, the kept steps in their places (the step
        file looked at again once a call); the lines between two kept steps go to the fold in
        one batch."""
        self._kept.look_again()
        due = self._kept.next_after()  # the lines up to this one's need no look at the step file
        batch: list[dict[str, Any]] = []
        for line in lines:
            seq = line.get("seq")
            if type(seq) is int:
                if due is not None and due < seq:
                    kept = self._kept.before(seq)
                    if kept:
                        self._fold(batch)
                        batch = []
                        self.fold.add_lines(kept)
                    due = self._kept.next_after()
                self.last_seq = seq
            batch.append(line)
        self._fold(batch)

    def put_back_last(self) -> None:
        """Folds the kept steps that came after the last line folded."""
        if self.last_seq is None:
            return
        self._kept.look_again()
        kept = self._kept.through(self.last_seq)
        if kept:
            self.fold.add_lines(kept)

    def _fold(self, batch: list[dict[str, Any]]) -> None:
        if batch:
            self.fold.add_lines(batch)
            self.fold.add_stream_lines(batch)
