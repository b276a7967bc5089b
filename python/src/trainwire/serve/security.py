"""Who may talk to the server: requests for another Host or from another Origin are refused
(DNS rebinding); a state-changing request must carry the server's token in a header (never
a cookie, so another site cannot make the browser send it)."""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["TOKEN_HEADER", "Guard", "allowed_hosts"]

TOKEN_HEADER = "x-trainwire-token"
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """The `Host` values the server answers: its own names with the port. None (any host)
    when it listens on every interface, where the token still guards every change."""
    if host in ("0.0.0.0", "::", ""):
        return None
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    names = {shown}
    if _is_loopback(host):
        names.update(_LOOPBACK_NAMES)
    return frozenset(f"{name}:{port}" for name in names)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class Guard:
    """ASGI middleware: 403 for a foreign Host or Origin, 403 for a change without the token."""

    def __init__(self, app: ASGIApp, *, token: str, hosts: frozenset[str] | None) -> None:
        self.app = app
        self.token = token
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        problem = self._problem(scope["method"], headers)
        if problem is not None:
            await _refuse(send, problem)
            return
        await self.app(scope, receive, send)

    def _problem(self, method: str, headers: dict[str, str]) -> str | None:
        host = headers.get("host", "")
        if self.hosts is not None and host.lower() not in self.hosts:
            return f"host {host!r} is not this server"
        origin = headers.get("origin")
        if origin is not None and origin.lower() != f"http://{host.lower()}":
            return f"origin {origin!r} is not this server"
        if method not in _SAFE_METHODS and not secrets.compare_digest(headers.get(TOKEN_HEADER, ""), self.token):
            return "a change needs the server's token in the X-Trainwire-Token header"
        return None


async def _refuse(send: Send, reason: str) -> None:
    body = reason.encode("utf-8")
    await send({"type": "http.response.start", "status": 403, "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
