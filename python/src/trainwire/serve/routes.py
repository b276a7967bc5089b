"""The handlers of `trainwire serve`'s routes, one method each, over the run index, the runs
list, the file threads and the openings of one application (`app.create_app` lists them)."""

from __future__ import annotations

import logging
import time
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from trainwire._version import __version__
from trainwire.contract.clock import format_ts, parse_timestamp_us
from trainwire.contract.files import open_regular
from trainwire.contract.layout import STREAM_FILE
from trainwire.contract.status import EXIT_CODES
from trainwire.reader.catalog import run_row
from trainwire.serve.file_response import file_answer
from trainwire.serve.file_work import FileWork
from trainwire.serve.index import IndexedStream, RunIndex
from trainwire.serve.opening_answer import opening_json
from trainwire.serve.openings import OpeningRefused, Openings
from trainwire.serve.problems import NO_STORE, Problem
from trainwire.serve.run_list import RunList
from trainwire.serve.runs_query import runs_query
from trainwire.serve.stop_body import stop_fields
from trainwire.stop import STOP_FILE, request_stop

__all__ = ["RunRoutes", "static_dir"]

logger = logging.getLogger("trainwire.serve")


def static_dir() -> Path:
    """The built page (index.html, dashboard.js, dashboard.css, favicon.svg) inside the package."""
    return Path(str(resources.files("trainwire.serve").joinpath("static")))


class RunRoutes:
    """The answers of one server; `deadline_s` bounds each wait for the file system and each
    opening's work (then a 503)."""

    def __init__(self, index: RunIndex, run_list: RunList, *, deadline_s: float, read_only: bool) -> None:
        self._index = index
        self._run_list = run_list
        self._read_only = read_only
        self._files = FileWork(deadline_s)
        self._openings = Openings(opening_json, self._files.until_deadline)

    async def page(self, request: Request) -> Response:
        return FileResponse(static_dir() / "index.html", headers=NO_STORE)

    async def favicon(self, request: Request) -> Response:
        return FileResponse(static_dir() / "favicon.svg", media_type="image/svg+xml")

    async def config(self, request: Request) -> Response:
        body = {"version": __version__, "read_only": self._read_only, "roots": self._index.root_names}
        return JSONResponse(body, headers=NO_STORE)

    async def runs(self, request: Request) -> Response:
        listing = self._run_list.listing()  # no file system work: what the runs list's thread read so far
        body = listing.page_json(runs_query(request.query_params))
        return Response(body, media_type="application/json", headers=NO_STORE)

    async def stream(self, request: Request) -> Response:
        """`/runs/{key}/progress.jsonl`: Range, If-Range, ETag and Last-Modified, so that a poll
        reads new bytes only."""
        found = self._found(request)
        try:
            file = await self._files.run(open_regular, found.path, within=found.root)
        except OSError:
            raise Problem(404, "no such run") from None
        headers = {"cache-control": "no-cache"}
        return file_answer(file, request.scope, media_type="application/x-ndjson", headers=headers)

    async def opening(self, request: Request) -> Response:
        found = self._found(request)
        try:
            answer = await self._openings.get(request.path_params["key"], found)
        except OpeningRefused as refused:
            raise Problem(503, str(refused), {"retry-after": str(refused.retry_after_s)}) from None
        if answer is None:  # the page reads the whole stream instead
            raise Problem(404, "no snapshot to open this run from")
        return Response(answer, media_type="application/json", headers=NO_STORE)

    async def stop(self, request: Request) -> Response:
        found = self._found(request)
        reason, requested_by = await stop_fields(request)
        row = await self._files.run(_latest_row, found)
        if row is not None and row["status"] in EXIT_CODES:
            raise Problem(409, f"the latest run here has ended ({row['status']}): nothing to stop")
        await self._files.run(lambda: request_stop(found.path.parent, reason=reason, requested_by=requested_by))
        return JSONResponse({"stop_file": f"{request.path_params['key']}/{STOP_FILE}"}, headers=NO_STORE)

    def _found(self, request: Request) -> IndexedStream:
        found = self._index.stream(request.path_params["key"])
        if found is None:
            raise Problem(404, "no such run")
        return found


#: the route of each run's stream, under its key
STREAM_ROUTE = f"/runs/{{key:path}}/{STREAM_FILE}"


def _latest_row(found: IndexedStream) -> dict[str, Any] | None:
    try:
        return run_row(found.path, parse_timestamp_us(format_ts(time.time())), within=found.root)
    except OSError:
        raise Problem(404, "no such run") from None
    except Exception as error:  # a hostile file: the run cannot be told apart from none, never a 500
        logger.warning("trainwire serve: cannot read the run %s (%s)", found.path, type(error).__name__)
        raise Problem(404, "no such run") from None
