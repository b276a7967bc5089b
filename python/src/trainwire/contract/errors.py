"""Exceptions shared by the writer, the reader and the stop control."""

from __future__ import annotations


class TrainwireError(Exception):
    """Base class of every error trainwire raises on purpose."""


class RunInterrupted(TrainwireError):
    """Raised at a phase boundary after a stop was honoured.

    The run turns it into `run.finished` with status `interrupted`; pipeline code lets it
    propagate so that no later phase promotes a half-trained model.
    """

    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__(message or f"run interrupted ({reason})")
        #: one of `control_file`, `sigint`, `sigterm`, `sigbreak`, `api`
        self.reason = reason


class StreamError(TrainwireError):
    """A reader in strict mode met a line it would otherwise skip with a diagnostic."""

    def __init__(self, line: int, code: str, message: str) -> None:
        super().__init__(f"line {line}: {code}: {message}")
        self.line = line
        self.code = code
