"""A run's journal documents fed from its own files: the stream's lines as a reader decodes
them, each record of the step file put back after the line its `after` names. The writer's
journal feeds it, on a thread of its own, the lines its run wrote since the last save; the
records are its own (`lines.kept_steps.kept_records`), so none is checked again.
`trainwire journal rebuild` folds the same documents from files it treats as hostile, through
the readers' merge (`reader.kept_steps`): same rule, same documents, byte for byte."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from trainwire.lines.kept_steps import kept_step_line
from trainwire.lines.run_journal import RunJournalFold

__all__ = ["JournalReplay", "KeptRecords"]

#: records of a step file in order, each with the offset just past its line
KeptRecords = Iterator[tuple[dict[str, Any], int]]


class JournalReplay:
    """Folds one run's stream lines into `fold`, putting each kept record back after the line
    whose `seq` its `after` names (and before the next one)."""

    def __init__(self, fold: RunJournalFold) -> None:
        self.fold = fold
        #: the `seq` of the last stream line folded (None before the first)
        self.last_seq: int | None = None
        #: the step file's bytes folded: just past the last record put back
        self.kept_offset = 0
        self._kept: KeptRecords = iter(())
        self._next: tuple[dict[str, Any], int] | None = None

    def offer_kept(self, records: KeptRecords) -> None:
        """The step file's records from `kept_offset` on: each is folded once the stream line
        it came after has been."""
        self._kept = records
        self._next = next(records, None)

    def add(self, lines: Iterable[dict[str, Any]]) -> None:
        """Folds consecutive stream lines of the run, the kept records in their places (a
        record offered late, after the line it came after was folded, still goes before the
        next line); the lines between two records go to the fold in one batch."""
        batch: list[dict[str, Any]] = []
        for line in lines:
            seq = line.get("seq")
            if type(seq) is int:
                if self._next is not None and self._next[0]["after"] < seq:
                    self._fold(batch)
                    batch = []
                    self.put_back(seq - 1)
                self.last_seq = seq
            batch.append(line)
        self._fold(batch)

    def put_back(self, seq: int | None) -> None:
        """Folds the kept records that came after line `seq` (None: every one offered)."""
        run_id = self.fold.run_id
        kept = []
        while self._next is not None and (seq is None or self._next[0]["after"] <= seq):
            record, self.kept_offset = self._next
            kept.append(kept_step_line(record, run_id))
            self._next = next(self._kept, None)
        if kept:
            self.fold.add_lines(kept)

    def _fold(self, batch: list[dict[str, Any]]) -> None:
        if batch:
            self.fold.add_lines(batch)
            self.fold.add_stream_lines(batch)
