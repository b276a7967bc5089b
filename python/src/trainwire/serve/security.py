"""Who may talk to the server, and what every answer carries.

- A request for another `Host` or from another `Origin` is refused (DNS rebinding); the
  `Host` check is on for every bind address.
- Every data route (`/api/*`, the streams) needs the server's token in a header (never a
  cookie, so another site cannot make the browser send it); only the page and its assets are
  public, so the printed URL with `?token=` still opens.
- Every answer, refusals included, carries security headers: a Content-Security-Policy with
  no inline script or style and no framing, nosniff and no referrer.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

__all__ = ["SECURITY_HEADERS", "TOKEN_HEADER", "Guard", "allowed_hosts", "is_loopback"]

TOKEN_HEADER = "x-trainwire-token"
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
#: the loopback names a wildcard address covers (`::` listens on both stacks)
_HOSTS_OF_WILDCARD = {"0.0.0.0": ("127.0.0.1",), "": ("127.0.0.1",), "::": _LOOPBACK_NAMES}
#: paths anyone may read: the page itself and what it loads before it has the token
_PUBLIC_PATHS = ("/", "/favicon.ico")
_PUBLIC_PREFIX = "/assets/"

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; worker-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        b"base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def allowed_hosts(host: str, port: int, extra: Iterable[str] = ()) -> frozenset[str]:
    """The `Host` values the server answers, with the port: the names of the addresses it
    listens on (a rebinding page cannot send them) and the names in `extra`.

    A loopback name is answered only when the server listens on every address it leads to:
    `localhost` is first `[::1]` to a browser, so while the server holds `127.0.0.1` alone,
    another local user listening on `[::1]` at the same port would receive the page's token.
    `--host localhost` and `::` (both stacks) listen on both loopbacks; `0.0.0.0` covers
    `127.0.0.1` only."""
    names = {name.lower() for name in extra}
    names.update(_HOSTS_OF_WILDCARD.get(host, ()))
    if host not in _HOSTS_OF_WILDCARD:
        names.add(f"[{host}]" if ":" in host and not host.startswith("[") else host)
    if host == "localhost":
        names.update(_LOOPBACK_NAMES)
    return frozenset(f"{name}:{port}" for name in names)


def is_loopback(host: str) -> bool:
    """Whether binding to `host` keeps the server to this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Guard:
    """ASGI middleware: 403 for a foreign Host or Origin, 403 for a data route without the
    token; the security headers on every answer."""

    def __init__(self, app: ASGIApp, *, token: str, hosts: frozenset[str]) -> None:
        self.app = app
        self.token = token
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        problem = self._problem(scope["path"], headers)
        if problem is not None:
            await _refuse(send_with_headers, problem)
            return
        await self.app(scope, receive, send_with_headers)

    def _problem(self, path: str, headers: dict[str, str]) -> str | None:
        host = headers.get("host", "")
        if host.lower() not in self.hosts:
            return f"host {host!r} is not this server"
        origin = headers.get("origin")
        if origin is not None and origin.lower() != f"http://{host.lower()}":
            return f"origin {origin!r} is not this server"
        public = path in _PUBLIC_PATHS or path.startswith(_PUBLIC_PREFIX)
        if not public and not secrets.compare_digest(headers.get(TOKEN_HEADER, "").encode(), self.token.encode()):
            return (
                "this needs the server's token in the X-Trainwire-Token header: open the URL `trainwire serve` printed"
            )
        return None


async def _refuse(send: Send, reason: str) -> None:
    body = reason.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": 403,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
