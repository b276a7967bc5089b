"""`trainwire serve`: the live dashboard (extra `serve`: Starlette and Uvicorn)."""

from __future__ import annotations

import argparse
import errno
import logging
import secrets
import socket
import sys
from pathlib import Path
from typing import Any

from trainwire.contract.layout import STREAM_FILE

__all__ = ["register"]

DEFAULT_PORT = 8765
#: how long a request may wait for the file system, and an opening may work, before a 503
DEFAULT_DEADLINE_S = 10.0
#: how long answers being sent may go on after SIGTERM or Ctrl+C
_SHUTDOWN_GRACE_S = 5
#: ports tried with `--host localhost --port 0` for one free on both loopbacks
_PORT_ATTEMPTS = 20


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
        help="address to listen on (default 127.0.0.1: this machine only; localhost listens on 127.0.0.1 and [::1]); any other address needs --allow-host",
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
    serve.add_argument(
        "--deadline",
        type=_seconds,
        default=DEFAULT_DEADLINE_S,
        metavar="SECONDS",
        help=f"how long a request may wait for the file system, and a run's opening may work, before it is a 503 (default {DEFAULT_DEADLINE_S:g})",
    )
    serve.set_defaults(command=_serve)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return port


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < seconds <= 3600:
        raise argparse.ArgumentTypeError(f"not between 0 and 3600 seconds: {text!r}")
    return seconds


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
        from trainwire.serve.connections import bounded_protocol, connection_cap, quiet_server_logs
        from trainwire.serve.index import RunIndex
        from trainwire.serve.run_list import RunList
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
        listeners = _listen(options.host, options.port)
    except OSError as error:
        sys.stderr.write(f"trainwire serve: cannot listen on {error.strerror or error}\n")
        return 1
    port = listeners[0].getsockname()[1]
    _log_to_stderr()
    token = secrets.token_urlsafe(24)
    hosts = allowed_hosts(options.host, port, options.allow_host)
    index = RunIndex(options.dirs).start()
    run_list = RunList(index).start()
    app = create_app(
        index, run_list, token=token, hosts=hosts, read_only=options.read_only, deadline_s=options.deadline
    )
    shown = f"[{options.host}]" if ":" in options.host else options.host
    if not is_loopback(options.host):
        names = ", ".join(sorted(hosts))
        sys.stderr.write(
            f"trainwire serve: warning: listening on {shown}:{port}, beyond this machine: anyone who can reach it there and has the token can read every run and stop running ones (Host must be one of {names}; the connection is not encrypted)\n"
        )
    mode = " (read-only)" if options.read_only else ""
    sys.stdout.write(f"trainwire serve: http://{shown}:{port}/?token={token}{mode}\n")
    sys.stdout.flush()
    cap = connection_cap()
    # no access log: the page's first request carries the token in its query
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        http=bounded_protocol(cap),
        limit_concurrency=cap,
        timeout_graceful_shutdown=_SHUTDOWN_GRACE_S,  # a client that stops reading cannot hold the exit
    )
    quiet_server_logs()  # after the Config, which sets uvicorn's loggers up
    server = uvicorn.Server(config)
    try:
        server.run(sockets=listeners)
    finally:
        run_list.stop()
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


def _listen(host: str, port: int) -> list[socket.socket]:
    """The listening sockets: one for the address, or both loopbacks at one port for
    `localhost` (a browser tries `[::1]` first: it must be this server there too). Raises
    OSError naming the address that could not be bound."""
    if host != "localhost":
        return [_bind(host, port)]
    for _attempt in range(_PORT_ATTEMPTS):
        first = _bind("127.0.0.1", port)
        try:
            return [first, _bind("::1", first.getsockname()[1])]
        except OSError as error:
            if error.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                return [first]  # no IPv6 loopback here: nobody else can listen there either
            first.close()
            if port != 0 or error.errno != errno.EADDRINUSE:
                raise
    raise OSError(errno.EADDRINUSE, "no port is free on both 127.0.0.1 and [::1]")


def _bind(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:  # `::` serves both stacks; `::1` leaves 127.0.0.1 to its own socket
            listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0 if address == "::" else 1)
        listener.bind((address, port))
        listener.listen(128)
    except OSError as error:
        listener.close()
        shown = f"[{address}]" if ":" in address else address
        raise OSError(error.errno, f"{shown}:{port}: {error.strerror or error}") from None
    return listener
