"""The server's logs, one line per cause: no traceback, a cause written once an interval with
the count of those left out, causes told apart by template (uvicorn, asyncio) or by message
(the server's own lines, which name a run)."""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Iterator

import pytest

from trainwire.serve.connections import OneLinePerCause


@pytest.fixture
def logged() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    logger = logging.getLogger(f"trainwire.tests.log_lines.{time.monotonic_ns()}")
    logger.addHandler(handler)
    logger.propagate = False
    yield logger, written
    logger.removeHandler(handler)


def test_a_flood_of_one_cause_is_one_line_without_traceback(logged: tuple[logging.Logger, io.StringIO]) -> None:
    logger, written = logged
    logger.addFilter(OneLinePerCause())
    for socket_number in range(200):
        try:
            raise OSError(24, "Too many open files")
        except OSError:
            logger.exception("socket.accept() out of system resource\nsocket: <fd=%d>", socket_number)
    logger.warning("Invalid HTTP request received.")
    assert written.getvalue().splitlines() == [
        "socket.accept() out of system resource (OSError: [Errno 24] Too many open files)",
        "Invalid HTTP request received.",
    ]


def test_a_cause_comes_back_after_its_interval_with_the_count_left_out(
    logged: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, written = logged
    logger.addFilter(OneLinePerCause(interval_s=0.05))
    deadline = time.monotonic() + 10
    while len(written.getvalue().splitlines()) < 2 and time.monotonic() < deadline:
        logger.warning("a request's head did not arrive within %g s: connection closed", 10)
    first, second = written.getvalue().splitlines()
    assert first == "a request's head did not arrive within 10 s: connection closed"
    assert second.startswith(first + " (") and second.endswith(" more like it since the last)")


def test_by_message_the_server_s_own_lines_are_one_per_run(logged: tuple[logging.Logger, io.StringIO]) -> None:
    logger, written = logged
    logger.addFilter(OneLinePerCause(by_message=True))
    for _ in range(50):
        for key in ("a", "b"):
            try:
                raise ValueError("not a summary")
            except ValueError:
                logger.exception("trainwire serve: cannot read the run %s", key)
    assert written.getvalue().splitlines() == [
        "trainwire serve: cannot read the run a (ValueError: not a summary)",
        "trainwire serve: cannot read the run b (ValueError: not a summary)",
    ]
