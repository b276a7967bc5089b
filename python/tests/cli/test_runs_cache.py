"""`trainwire runs` over many runs: a directory whose files did not change is not read again
(the runs cache, `trainwire.reader.run_cache`), and the cache is never trusted: an entry is
used only when the files' signature holds and its values pass the files' own checks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.paths import ROOT

from trainwire.reader import catalog
from trainwire.reader.cache_seal import seal
from trainwire.reader.run_cache import cache_file
from trainwire.reader.run_listing import list_runs

_KILLED = """
import os, signal, sys
from trainwire import Run
run = Run(sys.argv[1], run_id="killed", step_interval_s=3600, heartbeat_interval_s=None)
run.start(total_steps=100_000, config={"lr": 0.1}, provenance=False)
for step in range(1, 1101):
    run.step(step, loss=1.0 / step)
run.close()  # the kept steps written, the run never finished: as if killed mid-way
"""


@pytest.fixture
def killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run directory whose run stopped mid-way with its steps in its step file."""
    monkeypatch.setenv("TRAINWIRE_CACHE_DIR", str(tmp_path / "cache"))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    subprocess.run([sys.executable, "-c", _KILLED, str(tmp_path / "runs" / "k")], env=env, check=True, timeout=120)
    return tmp_path / "runs"


def _listed(root: Path) -> list[dict[str, Any]]:
    return [read.row(0) for _stream, reads in list_runs([root], _raise) for read in reads]


def _raise(stream: Path, error: OSError) -> None:
    raise error


def _count_tail_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    reads: list[Path] = []
    window = catalog._window_summary

    def counted(stream: Path, *args: Any, **options: Any) -> Any:
        reads.append(stream)
        return window(stream, *args, **options)

    monkeypatch.setattr(catalog, "_window_summary", counted)
    return reads


def test_a_run_killed_mid_way_is_folded_once_then_read_from_the_cache(
    killed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tails = _count_tail_reads(monkeypatch)
    first = _listed(killed)
    assert first[0]["step"] > 1000 and len(tails) == 1  # the steps of its step file folded in
    assert _listed(killed) == first and len(tails) == 1  # nothing changed: no stream or step file read
    steps = killed / "k" / "runs" / "killed" / "steps.jsonl"
    with steps.open("ab") as file:  # the step file grew: read again
        file.write(b"\n")
    assert _listed(killed) == first and len(tails) == 2


def test_the_cli_lists_the_same_rows_with_the_cache_and_without(killed: Path) -> None:
    command = [sys.executable, "-m", "trainwire", "runs", str(killed), "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python" / "src")}
    without = subprocess.run(
        command, env={**env, "TRAINWIRE_CACHE_DIR": ""}, capture_output=True, text=True, check=True
    )
    cold = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    warm = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    rows = [json.loads(done.stdout) for done in (without, cold, warm)]
    for listed in rows:
        for row in listed:
            row.pop("duration_s")  # a run that never finished: its duration grows with the clock
            row["verdict"].pop("judged_at")  # the instant each listing judged it
            row["verdict"].pop("duration_s")
    assert rows[0] == rows[1] == rows[2] and rows[0][0]["step"] > 1000
    assert cache_file(killed) is not None and cache_file(killed).is_file()


def _forge(root: Path, change: Any, seal: bytes = b"") -> None:
    """The cache's entry changed by `change`, written back with `seal` as its first line (none: unsealed)."""
    path = cache_file(root)
    assert path is not None
    sealed, _, body = path.read_bytes().partition(b"\n")
    assert sealed.startswith(b"trainwire-seal ")  # this user's trainwire seals what it writes
    data = json.loads(body)
    (entry,) = data["runs"].values()
    change(entry)
    path.write_bytes(seal + json.dumps(data).encode())


def _summary(entry: dict[str, Any], **fields: Any) -> None:
    (read,) = entry["reads"]
    read["summary"] = {**read["summary"], **fields}


@pytest.mark.parametrize(
    "change",
    [
        lambda entry: _summary(entry, status=123),  # a summary its schema refuses
        lambda entry: _summary(entry, git_sha=12345),
        lambda entry: entry["reads"][0].update(status="succeeded"),  # a status its summary does not have
        lambda entry: entry["reads"][0].update(last_ts="yesterday"),
        lambda entry: entry["reads"][0].update(config=["lr"], notes=7),
        lambda entry: entry.update(signature=[["progress.jsonl", [1, 2, 3, 4, 5]]]),  # other files'
        lambda entry: entry.update(reads={"not": "a list"}),
    ],
)
def test_a_hostile_cache_entry_is_ignored_and_the_files_read(
    killed: Path, monkeypatch: pytest.MonkeyPatch, change: Any
) -> None:
    first = _listed(killed)
    _forge(killed, change)
    tails = _count_tail_reads(monkeypatch)
    assert _listed(killed) == first and len(tails) == 1


def test_a_forged_value_is_used_only_under_the_files_own_checks(killed: Path) -> None:
    """An entry whose signature holds and whose values pass every check is the cache's: the
    one who can write it can write the journal's summary as well, to the same effect."""
    _listed(killed)
    _forge(killed, lambda entry: _summary(entry, name="renamed in the cache"))
    assert _listed(killed)[0]["name"] == "renamed in the cache"


@pytest.mark.parametrize("kind", ["fifo", "garbage", "deep", "link"])
def test_a_cache_file_that_is_not_one_is_ignored(killed: Path, tmp_path: Path, kind: str) -> None:
    first = _listed(killed)
    path = cache_file(killed)
    assert path is not None
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)  # opened without blocking, refused as not a regular file
    elif kind == "garbage":
        path.write_bytes(b"\x00\xff{not json")
    elif kind == "deep":
        path.write_text("[" * 100_000)
    else:
        (tmp_path / "elsewhere.json").write_text("{}")
        path.symlink_to(tmp_path / "elsewhere.json")
    signal.alarm(60)  # a blocked open would hang the test: fail it instead
    try:
        assert _listed(killed) == first
    finally:
        signal.alarm(0)


def test_a_cache_sealed_by_anyone_else_is_held_to_every_check(killed: Path) -> None:
    """A seal spares the checks only under this user's own key: not a forged seal, not a key
    file that others could have written."""
    first = _listed(killed)
    path = cache_file(killed)
    assert path is not None
    _forge(killed, lambda entry: _summary(entry, status=123), seal=b"trainwire-seal " + b"0" * 64 + b"\n")
    assert _listed(killed) == first  # the forged seal does not hold: the entry is checked and refused
    _forge(killed, lambda entry: _summary(entry, status=123))
    unsealed = path.read_bytes()
    path.write_bytes(seal(path.parent, unsealed))  # a seal that holds under the key...
    (path.parent / "key").chmod(0o644)  # ...in a key file others may have written: not this user's
    assert _listed(killed) == first


def test_a_run_whose_process_is_gone_is_read_stale_once(killed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its host proved the run's process gone: no later listing asks again (a pid and start
    time name one process for ever), and its row no longer moves with the clock."""
    (first,) = [read for _stream, reads in list_runs([killed], _raise) for read in reads]
    assert first.status == "stale" and first.timeless
    asked: list[object] = []
    monkeypatch.setattr(catalog, "liveness_of", lambda process: asked.append(process) or "alive")
    (again,) = [read for _stream, reads in list_runs([killed], _raise) for read in reads]
    assert again.row(0)["status"] == "stale" and again.row(0) == first.row(0) and not asked
