"""A `trainwire serve` process on loopback over one run directory, for the dashboard figures."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from context import PYTHON, ROOT, run_child

__all__ = ["Served", "open_page", "run_directory", "serving"]

#: typescript/bench/browser/dashboard-page.ts as `npm run build` compiles it
PAGE_SCRIPT = ROOT / "typescript" / "dist" / "test" / "bench" / "browser" / "dashboard-page.js"


@dataclass(frozen=True)
class Served:
    host: str
    port: int
    token: str
    #: the key of the one run served (its directory's name)
    key: str

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/?token={self.token}"


def run_directory(stream: Path, directory: Path) -> Path:
    """`directory` holding `stream` as its `progress.jsonl` (a hard link: the server refuses
    links leading outside what it serves; a copy where links are not possible)."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "progress.jsonl"
    try:
        os.link(stream, target)
    except OSError:
        shutil.copyfile(stream, target)
    return directory


@contextmanager
def serving(directory: Path) -> Iterator[Served]:
    """`trainwire serve DIRECTORY` on a free loopback port until the block ends."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    process = subprocess.Popen(
        [PYTHON, "-m", "trainwire", "serve", str(directory), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # printed before the server listens
        if not line.startswith("trainwire serve: http://"):
            raise RuntimeError(f"trainwire serve printed {line!r}")
        parts = urlsplit(line.split()[2])
        yield Served(parts.hostname or "127.0.0.1", parts.port or 0, parse_qs(parts.query)["token"][0], directory.name)
    finally:
        process.terminate()
        process.wait(timeout=30)


def open_page(served: Served, key: str, size: int) -> dict[str, Any]:
    """Run `key`'s page opened in headless Chromium by typescript/bench/browser/dashboard-page.ts,
    until `size` bytes of its stream are read: `{first_chart_s, loaded_s, longest_task_ms, long_tasks, ...}`."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH")
    if not PAGE_SCRIPT.is_file():
        raise RuntimeError(f"{PAGE_SCRIPT.relative_to(ROOT)} is missing: run `npm run build` in typescript/")
    done = run_child([node, str(PAGE_SCRIPT), served.url, key, str(size)], timeout=600)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
