"""A stream file's answer: the bytes of a file already opened and checked (`open_regular`), whole
or by one `Range`, with the validators the page's reader follows (`ETag`, `Last-Modified`).

Written on Starlette's public `StreamingResponse`, not on `FileResponse` (whose sending methods
are private and reopen the file by its path): what is sent is the file that was checked, even
when its path is replaced by a link or a FIFO afterwards, and never more than its size when it
was opened (the writer appends while it is sent; the page reads on with a Range request).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator, Mapping
from email.utils import formatdate
from typing import IO

import anyio.to_thread
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

__all__ = ["CHUNK_BYTES", "OpenedFileResponse", "file_answer"]

#: read in 1 MiB chunks, not Starlette's 64 KiB: each chunk is a hop to a worker thread, and
#: fifty tabs opening a large stream at once spend their time in those hops
CHUNK_BYTES = 1 << 20


class OpenedFileResponse(StreamingResponse):
    """`length` bytes of `file` from `start`, as `status` (200, or 206 for a range); the file
    is closed once the answer is sent or abandoned."""

    def __init__(
        self, file: IO[bytes], start: int, length: int, *, status_code: int, headers: Mapping[str, str], head: bool
    ) -> None:
        self._file = file
        body = _no_body() if head else _chunks(file, start, length)
        super().__init__(body, status_code=status_code, headers={**headers, "content-length": str(length)})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._file.close()


def file_answer(file: IO[bytes], scope: Scope, *, media_type: str, headers: Mapping[str, str]) -> Response:
    """The answer to a GET or HEAD of `file` (opened and checked; this answer owns it): the whole
    file as measured now (200), the one range asked (206, when an `If-Range` names this file),
    416 for a range past its end, 400 for a `Range` that is not one of bytes. Several ranges
    are answered with the whole file (200), as a server may (RFC 9110, 14.2): the page never
    asks for more than one."""
    measured = os.fstat(file.fileno())
    size = measured.st_size
    answer = {
        **headers,
        "content-type": media_type,
        "accept-ranges": "bytes",
        "last-modified": formatdate(measured.st_mtime, usegmt=True),
        "etag": _etag(measured),
    }
    head = scope["method"].upper() == "HEAD"
    request = Headers(scope=scope)
    asked = request.get("range")
    if asked is None or not _same_file(request.get("if-range"), answer):
        return OpenedFileResponse(file, 0, size, status_code=200, headers=answer, head=head)
    try:
        span = _one_range(asked, size)
    except _BadRange as bad:
        file.close()
        if bad.unsatisfiable:
            return PlainTextResponse("", status_code=416, headers={"content-range": f"bytes */{size}"})
        return PlainTextResponse(str(bad), status_code=400)
    if span is None:
        return OpenedFileResponse(file, 0, size, status_code=200, headers=answer, head=head)
    start, end = span
    answer["content-range"] = f"bytes {start}-{end - 1}/{size}"
    return OpenedFileResponse(file, start, end - start, status_code=206, headers=answer, head=head)


class _BadRange(ValueError):
    def __init__(self, message: str, *, unsatisfiable: bool = False) -> None:
        super().__init__(message)
        self.unsatisfiable = unsatisfiable


def _etag(measured: os.stat_result) -> str:
    """Starlette's `FileResponse` form, so that a page's validator outlives the change of class."""
    base = f"{measured.st_mtime}-{measured.st_size}"
    return f'"{hashlib.md5(base.encode(), usedforsecurity=False).hexdigest()}"'


def _same_file(if_range: str | None, answer: Mapping[str, str]) -> bool:
    """Whether a range may be sent: no `If-Range`, or one naming this file (a strong validator)."""
    if if_range is None:
        return True
    return not if_range.startswith("W/") and if_range in (answer["etag"], answer["last-modified"])


def _one_range(asked: str, size: int) -> tuple[int, int] | None:
    """`[start, end)` of a `bytes=` range of a file of `size` bytes; None for several ranges."""
    units, _, spec = asked.partition("=")
    if units.strip().lower() != "bytes" or not spec:
        raise _BadRange("only a range of bytes is served")
    parts = [part.strip() for part in spec.split(",") if part.strip() not in ("", "-")]
    if len(parts) > 1:
        return None
    first, dash, last = parts[0].partition("-") if parts else ("", "", "")
    first, last = first.strip(), last.strip()
    if not dash or not (first or last) or not (first.isdigit() or not first) or not (last.isdigit() or not last):
        raise _BadRange("the range is not bytes=START-END, START- or -LENGTH")
    if not first:  # the last `last` bytes
        start, end = max(size - int(last), 0), size
    else:
        start = int(first)
        end = min(int(last) + 1, size) if last else size
    if start >= size:
        raise _BadRange("the range starts past the end", unsatisfiable=True)
    if start >= end:
        raise _BadRange("the range ends before it starts")
    return start, end


async def _chunks(file: IO[bytes], start: int, length: int) -> AsyncIterator[bytes]:
    """The file's bytes in chunks, read in worker threads; fewer when it shrank meanwhile."""
    await anyio.to_thread.run_sync(file.seek, start)
    left = length
    while left > 0:
        chunk = await anyio.to_thread.run_sync(file.read, min(CHUNK_BYTES, left))
        if not chunk:
            return
        left -= len(chunk)
        yield chunk


async def _no_body() -> AsyncIterator[bytes]:
    return
    yield  # an async generator that yields nothing: a HEAD's answer
