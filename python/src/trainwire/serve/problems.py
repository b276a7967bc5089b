"""The server's answers other than 200: one exception any handler raises (`Problem`), answered
as `{"error": message}` with its status and headers, never cached."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

__all__ = ["NO_STORE", "Problem", "answer_problem"]

#: the headers of an answer the browser must ask for again each time
NO_STORE = {"cache-control": "no-store"}


class Problem(Exception):
    """An answer other than 200, with its status and message."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


async def answer_problem(request: Request, error: Exception) -> Response:
    """The application's handler of `Problem`."""
    assert isinstance(error, Problem)
    return JSONResponse({"error": str(error)}, status_code=error.status, headers={**NO_STORE, **error.headers})
