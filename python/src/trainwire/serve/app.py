"""The dashboard's HTTP side: the page, the runs list, each run's stream by Range, its opening
(every run's state, series and view events from the journal snapshots, to open it at once),
and stop. This module assembles them; each job has its module: the handlers (`routes`), the
stream's answer (`file_response`), the file threads (`file_work`), the opening's answer
(`opening_answer`), the stop body (`stop_body`), the answers other than 200 (`problems`).

Every file system call runs in a worker thread under a deadline (never on the event loop),
so a slow disk, a huge tree or a hostile file can delay one answer, not the server.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from trainwire.reader.state import StreamReader
from trainwire.serve.index import RunIndex
from trainwire.serve.opening_answer import opening_answer
from trainwire.serve.problems import Problem, answer_problem
from trainwire.serve.routes import STREAM_ROUTE, RunRoutes, static_dir
from trainwire.serve.run_list import RunList
from trainwire.serve.security import Guard
from trainwire.serve.stop_body import BODY_LIMIT_BYTES

__all__ = ["BODY_LIMIT_BYTES", "create_app", "opening_answer", "static_dir"]

#: the rows read stream tails with the reader, whose first import builds the event models for
#: a second: done when the server starts, not under the GIL while the first clients wait
_READER = StreamReader


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
    answers = RunRoutes(index, run_list, deadline_s=deadline_s, read_only=read_only)
    routes = [
        Route("/", answers.page),
        Route("/favicon.ico", answers.favicon),
        Route("/api/config", answers.config),
        Route("/api/runs", answers.runs),
        Route("/api/runs/{key:path}/opening", answers.opening),
        Route(STREAM_ROUTE, answers.stream),
        Mount("/assets", app=StaticFiles(directory=static_dir(), check_dir=False), name="assets"),
    ]
    if not read_only:
        routes.append(Route("/api/runs/{key:path}/stop", answers.stop, methods=["POST"]))
    app = Starlette(routes=routes, exception_handlers={Problem: answer_problem})
    return Guard(app, token=token, hosts=hosts)
