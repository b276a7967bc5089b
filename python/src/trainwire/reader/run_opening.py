"""The door to a run's opening from its journal snapshots; it lives in `trainwire.journal.opening`."""

from trainwire.journal.opening import OpenedRun, OpenedStream, OpeningCancelled, open_from_snapshots, read_snapshot

__all__ = ["OpenedRun", "OpenedStream", "OpeningCancelled", "open_from_snapshots", "read_snapshot"]
