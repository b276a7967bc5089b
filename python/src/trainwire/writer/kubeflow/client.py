"""One POST of a TrainJob's status, with the standard library (docs/decisions.md: not the
Kubeflow SDK): TLS verified with the injected CA file, loaded again for each post (the
controller rotates its certificate); the bearer token read from its file for each post (it
rotates); a timeout; no redirect followed (it would carry the token elsewhere); the proxy
variables (`HTTPS_PROXY`, `NO_PROXY`) honoured as `urllib` does. Retried with backoff on a
5xx answer, a timeout or a broken connection. The token never appears in what is returned,
logged or raised.
"""

from __future__ import annotations

import http.client
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trainwire.writer.kubeflow.environment import StatusEndpoint

__all__ = ["Posted", "StatusClient"]

#: seconds before a request is given up, and the waits before each retry
TIMEOUT_S = 5.0
RETRY_WAITS_S = (0.5, 2.0)


@dataclass(frozen=True)
class Posted:
    """How a post went: `ok`, else why not (an HTTP code, or what failed), and whether
    another post could go better (`transient`: 5xx, timeouts, broken connections)."""

    ok: bool
    why: str = ""
    transient: bool = False


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the answer is the 3xx itself: the token goes nowhere else


class StatusClient:
    """Posts bodies to one endpoint; `post` never raises."""

    def __init__(
        self,
        endpoint: StatusEndpoint,
        *,
        timeout_s: float = TIMEOUT_S,
        retry_waits_s: tuple[float, ...] = RETRY_WAITS_S,
        sleep: Callable[[float], bool] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.timeout_s = timeout_s
        self.retry_waits_s = retry_waits_s
        #: waits between retries; returns True to give up early (the run is closing)
        self._sleep = sleep if sleep is not None else _sleep

    def post(self, body: bytes, *, retries: bool = True) -> Posted:
        """POST `body`, retried on transient failures while `retries`."""
        outcome = self._post_once(body)
        for wait in self.retry_waits_s if retries else ():
            if outcome.ok or not outcome.transient or self._sleep(wait):
                break
            outcome = self._post_once(body)
        return outcome

    def _post_once(self, body: bytes) -> Posted:
        if not self.endpoint.url.lower().startswith("https://"):
            return Posted(False, f"{self.endpoint.url} is not https: the token is sent over TLS only")
        try:
            with open(self.endpoint.token_file, encoding="utf-8") as file:
                token = file.read().strip()
        except (OSError, UnicodeDecodeError) as error:
            return Posted(False, f"the token file cannot be read ({type(error).__name__})", transient=True)
        if not token:
            return Posted(False, "the token file is empty", transient=True)
        try:
            context = ssl.create_default_context(cafile=self.endpoint.ca_file)
        except (OSError, ssl.SSLError) as error:
            return Posted(False, f"the CA file cannot be loaded ({error})", transient=True)
        opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context), _NoRedirect())
        request = urllib.request.Request(
            self.endpoint.url,
            data=body,
            method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        del token
        try:
            with opener.open(request, timeout=self.timeout_s) as answer:
                answer.read(1 << 16)
                return Posted(True)
        except urllib.error.HTTPError as error:
            with error:
                return Posted(False, f"HTTP {error.code} {error.reason}", transient=error.code >= 500)
        except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as error:
            reason = getattr(error, "reason", error)
            return Posted(False, f"{type(reason).__name__}: {reason}", transient=not isinstance(reason, ssl.SSLError))


def _sleep(seconds: float) -> bool:
    time.sleep(seconds)
    return False  # never gives up early
