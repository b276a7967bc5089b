"""The summary of a stream read whole (`trainwire journal rebuild`, `trainwire runs` without
a `summary.json`): the reader's rules pick the lines, the fold the writer runs live sums them
up, so both give the same document."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trainwire.journal.kept_steps import every_line
from trainwire.lines.summary import SummaryBuilder
from trainwire.reader.state import StreamReader

__all__ = ["summarise_stream"]


def summarise_stream(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The summary of the latest run of the stream at `path`, from its valid lines only
    (the reader's rules decide which lines count: the same lines a dashboard folds) and the
    steps each run's journal kept; None for a stream with no valid line."""
    reader = StreamReader()
    builder = SummaryBuilder()
    for line in every_line(Path(path), reader):
        builder.add(line)
    return builder.summary()
