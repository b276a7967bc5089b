"""The dashboard's HTTP side: the page, the runs list, each run's stream by Range, and stop."""

from __future__ import annotations

import time
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from trainwire import __version__
from trainwire.contract.clock import format_ts, parse_timestamp_us
from trainwire.contract.layout import STREAM_FILE
from trainwire.contract.limits import clip
from trainwire.reader.catalog import run_row
from trainwire.serve.index import RunIndex
from trainwire.serve.security import Guard
from trainwire.stop import request_stop

__all__ = ["create_app", "static_dir"]

_NO_STORE = {"cache-control": "no-store"}


def static_dir() -> Path:
    """The built page (index.html, dashboard.js, dashboard.css) inside the package."""
    return Path(str(resources.files("trainwire.serve").joinpath("static")))


def create_app(index: RunIndex, *, token: str, hosts: frozenset[str] | None, read_only: bool = False) -> Guard:
    """The ASGI application behind `trainwire serve`."""

    async def page(request: Request) -> Response:
        return FileResponse(static_dir() / "index.html", headers=_NO_STORE)

    async def config(request: Request) -> Response:
        return JSONResponse({"version": __version__, "read_only": read_only, "roots": [str(root) for root in index.roots]}, headers=_NO_STORE)

    async def runs(request: Request) -> Response:
        now_us = parse_timestamp_us(format_ts(time.time()))
        rows = []
        for key, stream in sorted(index.streams().items()):
            try:
                row = run_row(stream, now_us)
            except OSError:
                continue  # removed while listing
            if row is not None:
                rows.append({"key": key, **{name: value for name, value in row.items() if name != "path"}})
        return JSONResponse(rows, headers=_NO_STORE)

    async def stream(request: Request) -> Response:
        path = index.stream(request.path_params["key"])
        if path is None:
            return JSONResponse({"error": "no such run"}, status_code=404, headers=_NO_STORE)
        # Range, If-Range, ETag and Last-Modified come with FileResponse: a poll reads new bytes only
        return FileResponse(path, media_type="application/x-ndjson", headers={"cache-control": "no-cache"})

    async def stop(request: Request) -> Response:
        path = index.stream(request.path_params["key"])
        if path is None:
            return JSONResponse({"error": "no such run"}, status_code=404, headers=_NO_STORE)
        body: Any = await _json_body(request)
        if not isinstance(body, dict):
            return JSONResponse({"error": "the body is a JSON object {reason, requested_by}"}, status_code=400, headers=_NO_STORE)
        control = request_stop(path.parent, reason=clip(body.get("reason")), requested_by=clip(body.get("requested_by")))
        return JSONResponse({"stop_file": str(control)}, headers=_NO_STORE)

    routes = [
        Route("/", page),
        Route("/api/config", config),
        Route("/api/runs", runs),
        Route(f"/runs/{{key:path}}/{STREAM_FILE}", stream),
        Mount("/assets", app=StaticFiles(directory=static_dir(), check_dir=False), name="assets"),
    ]
    if not read_only:
        routes.append(Route("/api/runs/{key:path}/stop", stop, methods=["POST"]))
    return Guard(Starlette(routes=routes), token=token, hosts=hosts)


async def _json_body(request: Request) -> Any:
    try:
        return await request.json()
    except ValueError:
        return None
