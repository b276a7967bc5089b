"""The dashboard's HTTP side: the page, the runs list, each run's stream by Range, its opening
(every run's state, series and view events from the journal snapshots, to open it at once),
and stop.

Every file system call runs in a worker thread under a deadline (never on the event loop),
so a slow disk, a huge tree or a hostile file can delay one answer, not the server.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import IO, Any, TypeVar

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from trainwire._version import __version__
from trainwire.contract.canonical import dumps
from trainwire.contract.clock import format_ts, parse_timestamp_us
from trainwire.contract.files import open_regular
from trainwire.contract.layout import STREAM_FILE
from trainwire.contract.limits import clip
from trainwire.contract.status import EXIT_CODES
from trainwire.journal.opening import OpenedStream, OpeningCancelled, open_from_snapshots
from trainwire.reader.catalog import run_row
from trainwire.reader.state import StreamReader
from trainwire.serve.index import IndexedStream, RunIndex
from trainwire.serve.openings import OpeningRefused, Openings
from trainwire.serve.run_list import RunList
from trainwire.serve.runs_query import runs_query
from trainwire.serve.security import Guard
from trainwire.stop import STOP_FILE, request_stop

__all__ = ["BODY_LIMIT_BYTES", "create_app", "opening_answer", "static_dir"]

logger = logging.getLogger("trainwire.serve")

_NO_STORE = {"cache-control": "no-store"}
#: a stop body is `{"reason": ..., "requested_by": ...}`: a few hundred bytes
BODY_LIMIT_BYTES = 4096
_BODY_DEPTH_LIMIT = 4
#: worker threads for file work: a stuck disk holds these, not the event loop
_FILE_WORKERS = 8

T = TypeVar("T")

#: the rows read stream tails with the reader, whose first import builds the event models for
#: a second: done when the server starts, not under the GIL while the first clients wait
_READER = StreamReader


def static_dir() -> Path:
    """The built page (index.html, dashboard.js, dashboard.css, favicon.svg) inside the package."""
    return Path(str(resources.files("trainwire.serve").joinpath("static")))


class _Problem(Exception):
    """An answer other than 200, with its status and message."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


def create_app(
    index: RunIndex,
    run_list: RunList,
    *,
    token: str,
    hosts: frozenset[str],
    deadline_s: float,
    read_only: bool = False,
) -> Guard:
    """The ASGI application behind `trainwire serve`. `index` and `run_list` must have been started.
    `deadline_s`: how long an answer may wait for the file system, and an opening may work,
    before it is a 503."""
    files = _FileWork(deadline_s)
    openings = Openings(_opening, files.until_deadline)

    async def page(request: Request) -> Response:
        return FileResponse(static_dir() / "index.html", headers=_NO_STORE)

    async def favicon(request: Request) -> Response:
        return FileResponse(static_dir() / "favicon.svg", media_type="image/svg+xml")

    async def config(request: Request) -> Response:
        return JSONResponse(
            {"version": __version__, "read_only": read_only, "roots": index.root_names}, headers=_NO_STORE
        )

    async def runs(request: Request) -> Response:
        listing = run_list.listing()  # no file system work: what the runs list's thread read so far
        body = listing.page_json(runs_query(request.query_params))
        return Response(body, media_type="application/json", headers=_NO_STORE)

    async def stream(request: Request) -> Response:
        found = index.stream(request.path_params["key"])
        if found is None:
            raise _Problem(404, "no such run")
        try:
            file = await files.run(open_regular, found.path, within=found.root)
        except OSError:
            raise _Problem(404, "no such run") from None
        # Range, If-Range, ETag and Last-Modified come with FileResponse: a poll reads new bytes only
        return _OpenedFileResponse(file, media_type="application/x-ndjson", headers={"cache-control": "no-cache"})

    async def opening(request: Request) -> Response:
        found = index.stream(request.path_params["key"])
        if found is None:
            raise _Problem(404, "no such run")
        try:
            answer = await openings.get(request.path_params["key"], found)
        except OpeningRefused as refused:
            raise _Problem(503, str(refused), {"retry-after": str(refused.retry_after_s)}) from None
        if answer is None:  # the page reads the whole stream instead
            raise _Problem(404, "no snapshot to open this run from")
        return Response(answer, media_type="application/json", headers=_NO_STORE)

    async def stop(request: Request) -> Response:
        key = request.path_params["key"]
        found = index.stream(key)
        if found is None:
            raise _Problem(404, "no such run")
        reason, requested_by = _stop_fields(await _limited_body(request))
        row = await files.run(_latest_row, found)
        if row is not None and row["status"] in EXIT_CODES:
            raise _Problem(409, f"the latest run here has ended ({row['status']}): nothing to stop")
        await files.run(lambda: request_stop(found.path.parent, reason=reason, requested_by=requested_by))
        return JSONResponse({"stop_file": f"{key}/{STOP_FILE}"}, headers=_NO_STORE)

    routes = [
        Route("/", page),
        Route("/favicon.ico", favicon),
        Route("/api/config", config),
        Route("/api/runs", runs),
        Route("/api/runs/{key:path}/opening", opening),
        Route(f"/runs/{{key:path}}/{STREAM_FILE}", stream),
        Mount("/assets", app=StaticFiles(directory=static_dir(), check_dir=False), name="assets"),
    ]
    if not read_only:
        routes.append(Route("/api/runs/{key:path}/stop", stop, methods=["POST"]))
    app = Starlette(routes=routes, exception_handlers={_Problem: _answer_problem})
    return Guard(app, token=token, hosts=hosts)


async def _answer_problem(request: Request, error: Exception) -> Response:
    assert isinstance(error, _Problem)
    return JSONResponse({"error": str(error)}, status_code=error.status, headers={**_NO_STORE, **error.headers})


class _FileWork:
    """File system calls in a few worker threads, each under a deadline."""

    def __init__(self, deadline_s: float) -> None:
        self._deadline_s = deadline_s
        self._limiter: anyio.CapacityLimiter | None = None

    async def run(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            return await self.until_deadline(lambda: function(*args, **kwargs))
        except TimeoutError:
            raise _Problem(503, "the file system did not answer in time; try again") from None

    async def until_deadline(
        self, work: Callable[[], T], stop: threading.Event | None = None, limiter: anyio.CapacityLimiter | None = None
    ) -> T:
        """`work` in a worker thread (one of `limiter`'s, else of the file threads);
        TimeoutError at the deadline, after setting `stop` (the work that checks it ends; a
        call stuck in the file system is left behind)."""
        if self._limiter is None:  # made in the event loop that uses it
            self._limiter = anyio.CapacityLimiter(_FILE_WORKERS)
        try:
            with anyio.fail_after(self._deadline_s):
                return await anyio.to_thread.run_sync(work, limiter=limiter or self._limiter, abandon_on_cancel=True)
        except TimeoutError:
            if stop is not None:
                stop.set()
            raise


#: the form of the opening's answer; a change to its shape is a new version
OPENING_VERSION = 1


def _opening(found: IndexedStream, cancelled: Callable[[], bool]) -> str | None:
    """The stream's opening as canonical JSON (docs/dashboard.md), None when a run of it
    cannot be opened from its snapshot. Built in the worker thread: the answer can be large;
    the fold stops once `cancelled()` (its deadline passed)."""
    try:
        opened = open_from_snapshots(found.path, within=found.root, cancelled=cancelled)
    except OpeningCancelled:
        raise  # the deadline's: answered by the caller
    except Exception as error:  # a hostile journal costs its own opening (a 404), never a 500
        logger.warning("trainwire serve: cannot open %s from its journal (%s)", found.path, type(error).__name__)
        return None
    return None if opened is None else dumps(opening_answer(opened))


def opening_answer(opened: OpenedStream) -> dict[str, Any]:
    """The opening's answer: what the page's `checkOpening` (`dashboard/opening.ts`) takes."""
    return {
        "opening_version": OPENING_VERSION,
        "offset": opened.offset,
        "state": opened.state,
        "series": opened.series().to_dict(),
        "events": [line for run in opened.runs for line in run.events],
    }


def _latest_row(found: IndexedStream) -> dict[str, Any] | None:
    try:
        return run_row(found.path, parse_timestamp_us(format_ts(time.time())), within=found.root)
    except OSError:
        raise _Problem(404, "no such run") from None
    except Exception as error:  # a hostile file: the run cannot be told apart from none, never a 500
        logger.warning("trainwire serve: cannot read the run %s (%s)", found.path, type(error).__name__)
        raise _Problem(404, "no such run") from None


async def _limited_body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > BODY_LIMIT_BYTES):
        raise _Problem(413, f"the body is larger than {BODY_LIMIT_BYTES} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > BODY_LIMIT_BYTES:
            raise _Problem(413, f"the body is larger than {BODY_LIMIT_BYTES} bytes")
    return bytes(body)


def _stop_fields(body: bytes) -> tuple[str | None, str | None]:
    """`reason` and `requested_by` of a stop body: a JSON object of strings (or nulls)."""
    try:
        value = json.loads(body.decode("utf-8")) if body else {}
    except (ValueError, RecursionError):
        raise _Problem(400, "the body is not JSON") from None
    if _depth(value) > _BODY_DEPTH_LIMIT:
        raise _Problem(400, "the body is nested too deeply")
    if not isinstance(value, dict):
        raise _Problem(400, "the body is a JSON object {reason, requested_by}")
    fields = (value.get("reason"), value.get("requested_by"))
    if any(field is not None and not isinstance(field, str) for field in fields):
        raise _Problem(400, "reason and requested_by are strings")
    return clip(fields[0]), clip(fields[1])


def _depth(value: Any) -> int:
    """How deeply `value` nests, counted without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            pending.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
    return deepest


class _OpenedFileResponse(FileResponse):
    """A `FileResponse` of a file already opened and checked (`open_regular`): what is sent is
    that file, even when its path is replaced by a link or a FIFO after the check.

    Read in 1 MiB chunks, not Starlette's 64 KiB: each chunk is a hop to a worker thread, and
    fifty tabs opening a large stream at once spend their time in those hops."""

    chunk_size = 1 << 20

    def __init__(self, file: IO[bytes], **kwargs: Any) -> None:
        self._file = file
        measured = os.fstat(file.fileno())
        self._measured_size = measured.st_size
        super().__init__(f"/dev/fd/{file.fileno()}", stat_result=measured, **kwargs)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope = {
            **scope,
            "extensions": {
                name: value for name, value in scope.get("extensions", {}).items() if name != "http.response.pathsend"
            },
        }
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._file.close()

    async def _handle_simple(self, send: Send, send_header_only: bool, send_pathsend: bool) -> None:
        """The whole file as it was measured when opened: the writer appends while it is sent,
        and its Content-Length is that size (Starlette's own reads on to the end of the file)."""
        if send_header_only or send_pathsend:
            await super()._handle_simple(send, send_header_only, send_pathsend)
            return
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        left = self._measured_size
        async with self._open_file() as file:
            while True:
                chunk = await file.read(min(self.chunk_size, left))
                left -= len(chunk)
                more_body = bool(chunk) and left > 0
                await send({"type": "http.response.body", "body": chunk, "more_body": more_body})
                if not more_body:
                    return

    @asynccontextmanager
    async def _open_file(self) -> AsyncIterator[anyio.AsyncFile[bytes]]:
        duplicate = os.fdopen(os.dup(self._file.fileno()), "rb")
        file = anyio.wrap_file(duplicate)
        try:
            yield file
        finally:
            with anyio.CancelScope(shield=True):
                await file.aclose()
