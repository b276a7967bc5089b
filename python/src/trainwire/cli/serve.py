"""`trainwire serve`: the live dashboard (extra `serve`: Starlette and Uvicorn)."""

from __future__ import annotations

import argparse
import logging
import secrets
import socket
import sys
from pathlib import Path
from typing import Any

from trainwire.contract.layout import STREAM_FILE

__all__ = ["register"]

DEFAULT_PORT = 8765


def register(commands: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="a live dashboard of the runs under directories",
        description=f"Serve a live dashboard of every run ({STREAM_FILE}) found under DIR (default .), with a stop button. Listens on loopback; prints a URL with a per-server token. Needs: pip install 'trainwire[serve]'.",
    )
    serve.add_argument("dirs", nargs="*", type=Path, default=[Path(".")], metavar="DIR")
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only); any other address needs --allow-host",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        type=_host_name,
        metavar="NAME",
        help="a name (or address) clients use to reach the server, checked against the Host header; needed, once or more, with a --host beyond loopback",
    )
    serve.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)"
    )
    serve.add_argument("--read-only", action="store_true", help="no stop button: the server changes nothing")
    serve.set_defaults(command=_serve)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return port


def _host_name(text: str) -> str:
    name = text.strip().lower()
    if (
        not name
        or any(character in name for character in "/:@?# ")
        and not (name.startswith("[") and name.endswith("]"))
    ):
        raise argparse.ArgumentTypeError(f"not a host name or address (no scheme, port or path): {text!r}")
    return name


def _serve(options: argparse.Namespace) -> int:
    try:
        import uvicorn

        from trainwire.serve.app import create_app, static_dir
        from trainwire.serve.index import RunIndex
        from trainwire.serve.security import allowed_hosts, is_loopback
    except ImportError as error:
        sys.stderr.write(f"trainwire serve: needs the serve extra: pip install 'trainwire[serve]' ({error})\n")
        return 1
    for directory in options.dirs:
        if not directory.is_dir():
            sys.stderr.write(f"trainwire serve: {directory}: not a directory\n")
            return 2
    if not is_loopback(options.host) and not options.allow_host:
        sys.stderr.write(
            f"trainwire serve: --host {options.host} reaches beyond this machine: name the hosts clients use with --allow-host NAME (the Host check stays on)\n"
        )
        return 2
    if not (static_dir() / "index.html").is_file():
        sys.stderr.write("trainwire serve: the page is not built (from a checkout: make setup)\n")
        return 1
    try:
        listener = _listen(options.host, options.port)
    except OSError as error:
        sys.stderr.write(
            f"trainwire serve: cannot listen on {options.host}:{options.port}: {error.strerror or error}\n"
        )
        return 1
    port = listener.getsockname()[1]
    _log_to_stderr()
    token = secrets.token_urlsafe(24)
    hosts = allowed_hosts(options.host, port, options.allow_host)
    index = RunIndex(options.dirs).start()
    app = create_app(index, token=token, hosts=hosts, read_only=options.read_only)
    shown = f"[{options.host}]" if ":" in options.host else options.host
    if not is_loopback(options.host):
        names = ", ".join(sorted(hosts))
        sys.stderr.write(
            f"trainwire serve: warning: listening on {shown}:{port}, beyond this machine: anyone who can reach it there and has the token can read every run and stop running ones (Host must be one of {names}; the connection is not encrypted)\n"
        )
    mode = " (read-only)" if options.read_only else ""
    sys.stdout.write(f"trainwire serve: http://{shown}:{port}/?token={token}{mode}\n")
    sys.stdout.flush()
    # no access log: the page's first request carries the token in its query
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    try:
        server.run(sockets=[listener])
    finally:
        index.stop()
    return 0


def _log_to_stderr() -> None:
    """The server's own warnings (skipped files) on stderr, one line each."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    for name in ("trainwire.serve", "trainwire.files"):  # and journal files over their cap
        served = logging.getLogger(name)
        served.addHandler(handler)
        served.setLevel(logging.WARNING)
        served.propagate = False


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(128)
    return listener
