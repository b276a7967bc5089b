"""The runs list's walk (`reader.run_listing.streams_under` on `contract.run_walk`): the streams `os.walk` finds,
in its order, and signatures equal to the ones a `stat` of every file takes, from one listing
of each directory."""

from __future__ import annotations

import os
from pathlib import Path

from trainwire.contract.layout import STREAM_FILE
from trainwire.contract.run_walk import is_tracker_copy
from trainwire.reader.run_listing import streams_under
from trainwire.reader.run_signature import run_signature


def _walked(root: Path) -> list[Path]:
    """The streams `os.walk` finds, top-down, its subdirectories sorted, the trackers' copies left out."""
    streams = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(name for name in subdirectories if not is_tracker_copy(directory, name))
        if STREAM_FILE in files:
            streams.append(Path(directory, STREAM_FILE))
    return streams


def _tree(root: Path, elsewhere: Path) -> None:
    """Runs nested, a journal of every kind, a link in a journal directory's place and in
    `runs/`'s, a tracker's copy, a FIFO and a link named like a stream."""
    for relative in ("b", "a", "a/nested", "c/deeper/still", "z"):
        (root / relative).mkdir(parents=True)
        (root / relative / STREAM_FILE).write_text("{}\n")
    journal = root / "a" / "runs" / "r1"
    journal.mkdir(parents=True)
    for name in ("summary.json", "config.json", "notes.md"):
        (journal / name).write_text("{}")
    (root / "a" / "runs" / "r2").mkdir()
    (root / "a" / "runs" / "r2" / "steps.jsonl").write_text("")
    (root / "a" / "summary.json").write_text("{}")  # a 0.1 journal beside the stream
    (elsewhere / "journal").mkdir(parents=True)
    (elsewhere / "journal" / "summary.json").write_text("{}")
    (root / "a" / "runs" / "linked").symlink_to(elsewhere / "journal")  # not a journal: never read
    (root / "b" / "runs").symlink_to(elsewhere)  # `runs/` itself a link: read through it
    (elsewhere / "r9").mkdir()
    (elsewhere / "r9" / "notes.md").write_text("n")
    copy = root / "mlruns" / "1" / ("0" * 32) / "artifacts" / "trainwire"
    copy.mkdir(parents=True)
    (copy / STREAM_FILE).write_text("{}\n")  # an MLflow run's copy: not a run
    (root / "z" / "runs").mkdir()
    os.mkfifo(root / "z" / "runs" / STREAM_FILE)
    (root / "linkdir").symlink_to(root / "a")  # a link to a directory: not walked into
    (root / "c" / "runs").write_text("a file, not a directory")


def test_the_walk_finds_what_os_walk_finds_in_its_order(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _tree(root, tmp_path / "elsewhere")
    found = [stream.stream for stream in streams_under(root)]
    assert found == _walked(root)
    assert found[0] == root / "a" / STREAM_FILE and len(found) == 6  # the FIFO is one: a reader refuses it


def test_each_signature_is_the_one_a_stat_of_every_file_takes(tmp_path: Path) -> None:
    root = tmp_path / "root"
    _tree(root, tmp_path / "elsewhere")
    for stream in streams_under(root):
        assert stream.signature() == run_signature(stream.stream), stream.stream
    (a,) = [stream for stream in streams_under(root) if stream.stream.parent.name == "a"]
    names = [file[0] for file in a.signature() if len(file) > 1]
    assert names == [
        STREAM_FILE,
        "summary.json",
        "runs/r1/summary.json",
        "runs/r1/config.json",
        "runs/r1/notes.md",
        "runs/r2/steps.jsonl",
    ]
    (b,) = [stream for stream in streams_under(root) if stream.stream.parent.name == "b"]
    linked = [file[0] for file in b.signature() if len(file) > 1 and "/" in file[0]]
    assert linked == ["runs/journal/summary.json", "runs/r9/notes.md"]


def test_a_listed_directory_is_walked_once(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "root"
    _tree(root, tmp_path / "elsewhere")
    scanned: list[str] = []
    scandir = os.scandir

    def counted(path: str) -> object:
        scanned.append(os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counted)
    list(streams_under(root))
    assert len(scanned) == len(set(scanned))
