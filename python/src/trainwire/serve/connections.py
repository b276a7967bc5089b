"""What the server's connections may cost, and what their failures may write.

- **A connection cap** under the open-file limit: a connection streaming a run holds three
  descriptors (its socket, the opened stream, the duplicate being read), and the file threads
  and the walk need some of their own, so connections alone never exhaust the limit. A
  connection beyond the cap is closed at once; the one at the cap is answered 503 (uvicorn's
  `limit_concurrency`).
- **A header timeout**: a request's head (its line and headers) must arrive within
  `HEADER_TIMEOUT_S` of the connection or of the previous answer, or the connection is
  closed: half-sent requests cannot hold the cap (uvicorn has no such timeout; its keep-alive
  timer is reset by every byte).
- **One log line per cause**: uvicorn's and asyncio's records (a refused accept, a malformed
  request, an application error) lose their tracebacks and are written once per cause a
  minute, with the count of those left out; a flood of bad connections writes a few lines.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEADER_TIMEOUT_S", "OneLinePerCause", "bounded_protocol", "connection_cap", "quiet_server_logs"]

#: its own logger, one line per cause; the server's handler writes its lines
logger = logging.getLogger("trainwire.serve.connections")

#: how long a request's head may take to arrive
HEADER_TIMEOUT_S = 10.0
#: descriptors a connection may hold: its socket, the stream opened for it, the duplicate read
_FILES_PER_CONNECTION = 3
#: descriptors kept for the rest: file threads, the walk, the listeners, standard streams
_RESERVED_FILES = 64
_MAX_CONNECTIONS = 1000
_MIN_CONNECTIONS = 8
#: how often one cause may write a line
_LINE_INTERVAL_S = 60.0


def connection_cap() -> int:
    """How many connections the server holds at once, under this process's open-file limit."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return _MAX_CONNECTIONS
    return max(_MIN_CONNECTIONS, min(_MAX_CONNECTIONS, (soft - _RESERVED_FILES) // _FILES_PER_CONNECTION))


def bounded_protocol(cap: int, header_timeout_s: float = HEADER_TIMEOUT_S) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, holding at most `cap` connections and closing those whose
    request head has not arrived within `header_timeout_s`."""

    class BoundedH11Protocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > cap:
                logger.warning("trainwire serve: %d connections are open: a new one is closed at once", cap)
                transport.close()
                return
            self._arm_head_timer()

        def on_response_complete(self) -> None:
            if not self.transport.is_closing():
                self._arm_head_timer()  # before uvicorn starts a pipelined request: its head has come
            super().on_response_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            super().connection_lost(exc)

        def _arm_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            self._head_timer = self.loop.call_later(header_timeout_s, self._head_timed_out)

        def _head_timed_out(self) -> None:
            self._head_timer = None
            waiting_for_a_request = self.cycle is None or self.cycle.response_complete
            if waiting_for_a_request and not self.transport.is_closing():
                logger.warning(
                    "trainwire serve: a request's head did not arrive within %g s: connection closed",
                    header_timeout_s,
                )
                self.transport.close()

    return BoundedH11Protocol


class OneLinePerCause(logging.Filter):
    """Makes each record one line (its message, and its exception's type and text instead of
    a traceback) and lets one record of a cause through a minute, with the count left out.

    A cause is the first line of the record's template (uvicorn's and asyncio's arguments name
    a client or a socket) or, `by_message`, of its message (the server's own name a run)."""

    def __init__(self, interval_s: float = _LINE_INTERVAL_S, *, by_message: bool = False) -> None:
        super().__init__()
        self._interval_s = interval_s
        self._by_message = by_message
        self._written_at: dict[tuple[str, str], float] = {}
        self._left_out: dict[tuple[str, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        # the first line: asyncio appends the socket to its message
        cause = (
            (record.getMessage() if self._by_message else str(record.msg)).partition("\n")[0],
            type(error).__name__,
        )
        now = time.monotonic()
        if now - self._written_at.get(cause, float("-inf")) < self._interval_s:
            self._left_out[cause] = self._left_out.get(cause, 0) + 1
            return False
        self._written_at[cause] = now
        line = record.getMessage().partition("\n")[0]
        if error is not None:
            line += f" ({type(error).__name__}: {error})"
        left_out = self._left_out.pop(cause, 0)
        if left_out:
            line += f" ({left_out} more like it since the last)"
        record.msg, record.args = " ".join(line.split()), None
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def quiet_server_logs() -> None:
    """One line per cause from uvicorn, asyncio, the server's connections and the server
    itself (a hostile file met at every refresh of the runs list, once a minute)."""
    for name in ("uvicorn.error", "asyncio", logger.name):
        logging.getLogger(name).addFilter(OneLinePerCause())
    logging.getLogger("trainwire.serve").addFilter(OneLinePerCause(by_message=True))
