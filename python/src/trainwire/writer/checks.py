"""What the writer does with input it cannot write as given: one warning per kind (writer
rule 3: training goes on), or, for tests, an error (`Run(strict=True)`)."""

from __future__ import annotations

import logging
import threading

__all__ = ["Complaints", "RejectedInput"]

logger = logging.getLogger("trainwire.writer")


class RejectedInput(ValueError):
    """Raised by a strict run (`Run(strict=True)`) where a lenient one converts or drops."""


class Complaints:
    """Reports bad input: the first time per kind as a WARNING (later ones at DEBUG), or
    raised as `RejectedInput` when strict."""

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, kind: str, message: str) -> None:
        if self.strict:
            raise RejectedInput(message)
        self.warn_once(kind, message)

    def warn_once(self, kind: str, message: str) -> None:
        """Logs without raising, even when strict: for what the writer does by design."""
        with self._lock:
            first = kind not in self._seen
            self._seen.add(kind)
        if first:
            logger.warning("trainwire: %s (warned once per kind: %s)", message, kind)
        else:
            logger.debug("trainwire: %s", message)

    def seen(self, kind: str) -> bool:
        return kind in self._seen
