"""A `trainwire serve` process on loopback over one run directory, for the dashboard figures."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from context import PYTHON, ROOT

__all__ = ["Served", "run_directory", "serving"]


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
