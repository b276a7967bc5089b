"""`trainwire serve`: the live dashboard (extra `serve`: Starlette and Uvicorn)."""

from __future__ import annotations

import argparse
import secrets
import socket
import sys
from pathlib import Path
from typing import Any

from trainwire.contract.layout import STREAM_FILE

__all__ = ["register"]

DEFAULT_PORT = 8765


def register(commands: Any) -> None:
    serve = commands.add_parser("serve", help="a live dashboard of the runs under directories", description=f"Serve a live dashboard of every run ({STREAM_FILE}) found under DIR (default .), with a stop button. Listens on loopback; prints a URL with a per-server token. Needs: pip install 'trainwire[serve]'.")
    serve.add_argument("dirs", nargs="*", type=Path, default=[Path(".")], metavar="DIR")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=_port, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
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


def _serve(options: argparse.Namespace) -> int:
    try:
        import uvicorn

        from trainwire.serve.app import create_app, static_dir
        from trainwire.serve.index import RunIndex
        from trainwire.serve.security import allowed_hosts
    except ImportError as error:
        sys.stderr.write(f"trainwire serve: needs the serve extra: pip install 'trainwire[serve]' ({error})\n")
        return 1
    for directory in options.dirs:
        if not directory.is_dir():
            sys.stderr.write(f"trainwire serve: {directory}: not a directory\n")
            return 2
    if not (static_dir() / "index.html").is_file():
        sys.stderr.write("trainwire serve: the page is not built (from a checkout: make setup)\n")
        return 1
    try:
        listener = _listen(options.host, options.port)
    except OSError as error:
        sys.stderr.write(f"trainwire serve: cannot listen on {options.host}:{options.port}: {error.strerror or error}\n")
        return 1
    port = listener.getsockname()[1]
    token = secrets.token_urlsafe(24)
    app = create_app(RunIndex(options.dirs), token=token, hosts=allowed_hosts(options.host, port), read_only=options.read_only)
    shown = f"[{options.host}]" if ":" in options.host else options.host
    mode = " (read-only)" if options.read_only else ""
    sys.stdout.write(f"trainwire serve: http://{shown}:{port}/?token={token}{mode}\n")
    sys.stdout.flush()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    server.run(sockets=[listener])
    return 0


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(128)
    return listener
