"""A run's stream as `trainwire serve` answers it, from a real process: the whole file, one
range of it, HEAD, If-Range and the ranges it cannot serve; and the answer is a response of the
project's own, overriding no private method of Starlette's (which `starlette>=0.40` may change)."""

from __future__ import annotations

import inspect
from pathlib import Path

import starlette
from support.serve_process import make_run, serve

import trainwire.serve.app  # noqa: F401  (loads every module of the server)
from trainwire import serve as serve_package


def test_the_stream_is_answered_whole_by_range_and_by_head(tmp_path: Path) -> None:
    make_run(tmp_path / "a")
    stream = (tmp_path / "a" / "progress.jsonl").read_bytes()
    size = len(stream)
    with serve(str(tmp_path)) as server:
        path = "/runs/a/progress.jsonl"
        status, whole, body = server.request(path)
        assert (status, body) == (200, stream)
        assert whole["content-length"] == str(size) and whole["accept-ranges"] == "bytes"
        assert whole["content-type"] == "application/x-ndjson" and whole["cache-control"] == "no-cache"
        etag, modified = whole["etag"], whole["last-modified"]

        status, headers, body = server.request(path, method="HEAD")
        assert (status, body, headers["content-length"], headers["etag"]) == (200, b"", str(size), etag)

        status, headers, body = server.request(path, headers={"Range": "bytes=5-9"})
        assert (status, body, headers["content-range"]) == (206, stream[5:10], f"bytes 5-9/{size}")
        status, headers, body = server.request(path, headers={"Range": "bytes=-3"})
        assert (status, body, headers["content-range"]) == (206, stream[-3:], f"bytes {size - 3}-{size - 1}/{size}")
        status, headers, body = server.request(path, method="HEAD", headers={"Range": "bytes=10-"})
        assert (status, body, headers["content-length"]) == (206, b"", str(size - 10))

        for validator in (etag, modified):
            status, _, body = server.request(path, headers={"Range": "bytes=10-", "If-Range": validator})
            assert (status, body) == (206, stream[10:])
        status, _, body = server.request(path, headers={"Range": "bytes=10-", "If-Range": '"another file"'})
        assert (status, body) == (200, stream)

        status, headers, body = server.request(path, headers={"Range": "bytes=0-1,5-6"})  # several: all of it
        assert (status, body, headers["content-length"]) == (200, stream, str(size))

        status, headers, _ = server.request(path, headers={"Range": f"bytes={size}-"})
        assert (status, headers["content-range"]) == (416, f"bytes */{size}")
        status, _, _ = server.request(path, headers={"Range": "lines=1-2"})
        assert status == 400


def _serve_classes() -> list[type]:
    modules = [module for name, module in inspect.getmembers(serve_package, inspect.ismodule)]
    return [
        cls
        for module in modules
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if cls.__module__ == module.__name__
    ]


def test_no_server_class_overrides_a_private_starlette_method() -> None:
    overridden = []
    for cls in _serve_classes():
        for base in cls.__mro__[1:]:
            if not base.__module__.startswith(starlette.__name__):
                continue
            overridden += [
                f"{cls.__name__}.{name} ({base.__module__}.{base.__name__})"
                for name in vars(cls)
                if name.startswith("_") and not name.startswith("__") and name in vars(base)
            ]
    assert len(_serve_classes()) > 5 and overridden == []
