"""A TrainJob status server for the Kubeflow reporter's tests: HTTPS on 127.0.0.1 with a CA of
its own (`trustme`), the bearer token checked, and every body validated against the TrainJob
CRD's `trainerStatus` (vendored in `kubeflow_trainer/`, with its CEL rule) as the real
server's API server would.

`KubeflowJob` also writes the CA and token files and gives the three variables Kubeflow
Trainer injects into a trainer container.
"""

from __future__ import annotations

import json
import re
import ssl
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import trustme
import yaml

CRD_EXCERPT = Path(__file__).parent / "kubeflow_trainer" / "trainjob-trainer-status.yaml"
STATUS_PATH = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/team/trainjobs/bert/status"
#: the status server's body limit (pkg/statusserver/server.go, maxBodySize)
MAX_BODY = 1 << 16
_HAS = re.compile(r"^has\(self\.(\w+)\)$")


def trainer_status_schema() -> dict[str, Any]:
    """The vendored `trainerStatus` as JSON Schema: its OpenAPI schema with `int32` bounded,
    and each CEL rule it has turned into JSON Schema (only `has(self.X)`, required; another
    rule fails here, so a vendored CRD with a new rule is noticed)."""
    crd = yaml.safe_load(CRD_EXCERPT.read_text(encoding="utf-8"))["trainerStatus"]
    return _json_schema(crd)


def _json_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    schema = {key: _json_schema(value) for key, value in node.items() if not key.startswith("x-kubernetes-")}
    if node.get("format") == "int32":
        schema.setdefault("maximum", 2**31 - 1)
        schema.setdefault("minimum", -(2**31))
    for rule in node.get("x-kubernetes-validations", []):
        found = _HAS.match(rule["rule"])
        if found is None:
            raise AssertionError(f"a CEL rule the tests do not check: {rule['rule']!r}")
        schema.setdefault("required", []).append(found.group(1))
    if schema.get("type") == "object" and "properties" in schema:
        schema.setdefault("additionalProperties", False)  # a field the CRD lacks is pruned: a mapping error
    return schema


_VALIDATOR = jsonschema.Draft202012Validator(trainer_status_schema(), format_checker=jsonschema.FormatChecker())


def crd_errors(body: Any) -> list[str]:
    """Why `body` (a parsed POST body) is not a valid status update; [] when it is."""
    if not isinstance(body, dict) or set(body) != {"trainerStatus"}:
        return [f"not a {{trainerStatus}} object: {body!r:.200}"]
    return [error.message for error in _VALIDATOR.iter_errors(body["trainerStatus"])]


@dataclass
class Post:
    token: str | None
    body: Any
    size: int
    errors: list[str]
    answered: int


@dataclass
class StatusServer:
    """The server; `answer(post)` gives the HTTP code for each post (200 by default)."""

    token: str
    answer: Callable[[Post], int] = lambda post: 200
    hang: threading.Event = field(default_factory=threading.Event)  # set: requests hang until cleared
    posts: list[Post] = field(default_factory=list)

    def accepted(self) -> list[Post]:
        return [post for post in self.posts if post.answered == 200]

    def wait_for(self, condition: Callable[[list[Post]], bool], timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not condition(list(self.posts)):
            assert time.monotonic() < deadline, f"the server never saw what was awaited: {self.posts}"
            time.sleep(0.01)


class _QuietServer(ThreadingHTTPServer):
    """Prints no traceback for a client that refused the certificate or went away: the tests
    cause both, and what they check is what the server saw (`posts`)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ssl.SSLError, ConnectionError)):
            super().handle_error(request, client_address)


class KubeflowJob:
    """A TrainJob's server with its CA, token file and variables; `close()` stops it."""

    def __init__(self, directory: Path, token: str = "token-one") -> None:
        self.ca = trustme.CA()
        self.ca_file = directory / "ca.crt"
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        self.token_file = directory / "token"
        self.token_file.write_text(token + "\n", encoding="utf-8")
        self.server = StatusServer(token)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ca.issue_cert("127.0.0.1").configure_cert(context)
        self._http = _QuietServer(("127.0.0.1", 0), _handler(self.server))
        self._http.daemon_threads = True
        # the handshake in the handler's thread: a client that gives up on it holds up no other
        self._http.socket = context.wrap_socket(self._http.socket, server_side=True, do_handshake_on_connect=False)
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        self.url = f"https://127.0.0.1:{self._http.server_address[1]}{STATUS_PATH}"

    def rotate_token(self, token: str) -> None:
        """The kubelet's rotation: a new token in the file, the old one refused from now on."""
        self.server.token = token
        self.token_file.write_text(token + "\n", encoding="utf-8")

    def variables(self) -> dict[str, str]:
        return {
            "KUBEFLOW_TRAINER_SERVER_URL": self.url,
            "KUBEFLOW_TRAINER_SERVER_CA_CERT": str(self.ca_file),
            "KUBEFLOW_TRAINER_SERVER_TOKEN": str(self.token_file),
        }

    def close(self) -> None:
        self.server.hang.clear()
        self._http.shutdown()
        self._http.server_close()


def _handler(server: StatusServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            while server.hang.is_set():
                time.sleep(0.01)
            size = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(min(size, MAX_BODY + 1))
            auth = self.headers.get("Authorization", "")
            token = auth[len("Bearer ") :] if auth.startswith("Bearer ") else None
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            errors = crd_errors(body) + ([f"body of {size} bytes"] if size > MAX_BODY else [])
            post = Post(token, body, size, errors, 0)
            if token != server.token:
                post.answered = 403
            elif errors:
                post.answered = 422
            else:
                post.answered = server.answer(post)
            server.posts.append(post)
            self.send_response(post.answered)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps({"kind": "Status", "code": post.answered}).encode())

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


def job_in_environment(directory: Path, monkeypatch: Any, *, interval_s: float = 0.05) -> KubeflowJob:
    """A job whose variables this process has (as in a trainer container), with nothing that
    turns the reporting off or sends it elsewhere; the caller closes it."""
    job = KubeflowJob(directory)
    for name, value in job.variables().items():
        monkeypatch.setenv(name, value)
    for name in ("TRAINWIRE_KUBEFLOW_REPORTER", "TRAINWIRE_KUBEFLOW", "RANK", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRAINWIRE_KUBEFLOW_INTERVAL_S", str(interval_s))
    return job
