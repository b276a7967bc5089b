"""The failures a command reports as one line on stderr (`trainwire: error: ...`), raised by
the command modules and caught once, in `commands.main`."""

from __future__ import annotations

__all__ = ["CommandError"]


class CommandError(Exception):
    """A failure to report as one line on stderr."""
