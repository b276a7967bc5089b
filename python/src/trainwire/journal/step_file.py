"""One run's step file (`steps.jsonl`) read back as `train.step` lines, each due before the
first line of the run past the one its `after` names: the one rule by which every kept step
goes back into its stream, for the readers (`journal.kept_steps`) and the writer's own journal
(`journal.replay`).

The file is read as hostile: a regular file only (inside `within` when given), in bounded
chunks, a torn last line left for later, a record that is not a `train.step` one diagnostic
and skipped, a record out of order left out. A file read to its end is looked at again only
after `look_again()`, and read only when it changed.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic_core import ValidationError

from trainwire.contract.clock import parse_timestamp_us
from trainwire.contract.files import open_regular
from trainwire.contract.known_event_dicts import KNOWN_EVENT_DICTS
from trainwire.contract.line_bytes import DEFAULT_MAX_LINE_BYTES
from trainwire.journal.step_records import header_run, kept_step_line

__all__ = ["KeptSteps", "ReadCancelled", "Report"]

#: the bytes read from a step file at once; a record longer than a stream line is refused
_CHUNK_BYTES = 1 << 20
#: the diagnostics one step file may give (then it is read on in silence)
_MAX_REPORTS = 10
#: records waiting for their line that are read past, to find one naming a line the run never wrote
_MAX_AHEAD = 8
#: how much of a step file's first line is read to learn whose it is, when reading starts later
_HEADER_BYTES = 4096

Report = Callable[[str], object]


class ReadCancelled(Exception):
    """The read was cancelled (its caller's deadline passed) before it was done."""


class KeptSteps:
    """One run's step file, read on from `offset` as the run's lines go by."""

    def __init__(
        self,
        path: Path,
        run_id: str,
        *,
        offset: int = 0,
        tail_bytes: int | None = None,
        within: Path | None = None,
        follow_links: bool = True,
        report: Report | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        """`follow_links=False`: a link in the file's place is not read (the writer's own
        journal); `cancelled` is asked before each chunk is read: once true, `ReadCancelled`."""
        self.path = path
        self.run_id = run_id
        #: the bytes of the file handed out (or skipped): where the next read starts
        self.offset = offset
        self._read_at = offset
        self._tail_bytes = tail_bytes
        self._within = within
        self._follow_links = follow_links
        self._report = report
        self._cancelled = cancelled
        self._reports = 0
        self._after = -1  # the `after` of the last record accepted: records go on in order
        self._taken_after = -1  # the `after` of the last record handed out
        self._skipping = False  # within a record longer than a stream line
        self._end_seen: _FileMark | None = None  # the file as it was when read to its end
        self._looked = False  # since `look_again()`: whether a dry read looked at the file
        self._ready: deque[tuple[int, dict[str, Any], int]] = deque()  # (after, line, offset past it)
        self._header_checked = False  # the first line looked at: whose file it is
        self._foreign = False  # the first line names another run: nothing of it is read

    def look_again(self) -> None:
        """Lets the next dry read look whether the file changed (once: a merge asks this per
        call, so a chunk of lines costs a stat, not one a line)."""
        self._looked = False

    def next_after(self) -> int | None:
        """The `after` of the next kept step, None while the file has none (yet)."""
        if not self._ready and not self._read():
            return None
        return self._ready[0][0]

    def before(self, seq: int) -> list[dict[str, Any]]:
        """The kept steps that came before the run's line `seq` (their `after` is lower)."""
        return self._take(lambda after: after < seq)

    def through(self, seq: int) -> list[dict[str, Any]]:
        """The kept steps that came after the run's line `seq` or earlier."""
        return self._take(lambda after: after <= seq)

    def _take(self, due: Callable[[int], bool]) -> list[dict[str, Any]]:
        taken: list[dict[str, Any]] = []
        while True:
            if not self._ready and not self._read():
                return taken
            after, line, end = self._ready[0]
            if not due(after):
                # a few records not due yet: read on, so one naming a line far ahead (that the
                # run never wrote) is found out by the records after it, not waited behind
                if len(self._ready) <= _MAX_AHEAD and self._read_chunk():
                    continue
                return taken
            self._ready.popleft()
            self.offset = end
            self._taken_after = after
            taken.append(line)

    def _read(self) -> bool:
        """Reads the next whole records into `_ready`; False when there are none yet."""
        while not self._ready:
            if not self._read_chunk():
                return False
        return True

    def _read_chunk(self) -> bool:
        """Reads the next chunk's whole records into `_ready`; False when nothing was read."""
        if self._cancelled is not None and self._cancelled():
            raise ReadCancelled(str(self.path))
        if self._foreign:
            return False
        if self._end_seen is not None:  # read to its end before
            if self._looked:
                return False
            self._looked = True
            if _file_mark(self.path) == self._end_seen:
                return False  # unchanged since: a stat, not an open and a read
        data = self._next_chunk()
        end = data.rfind(b"\n") + 1
        if end == 0:
            if len(data) < _CHUNK_BYTES:
                return False  # nothing new, or a torn last line (a writer appending, or killed mid-write)
            if not self._skipping:
                self._problem(f"a record at byte {self._read_at} is longer than {DEFAULT_MAX_LINE_BYTES} bytes")
            self._read_at += len(data)  # skipped up to the next newline, chunk by chunk
            if not self._ready:
                self.offset = self._read_at
            self._skipping = True
            return True
        position = self._read_at
        for raw in data[:end].split(b"\n")[:-1]:
            position += len(raw) + 1
            self._decode(raw, position)
        self._read_at += end
        if not self._ready:
            self.offset = self._read_at
        return True

    def _next_chunk(self) -> bytes:
        try:
            with open_regular(self.path, within=self._within, follow_links=self._follow_links) as file:
                if self._tail_bytes is not None:  # only the end: start at a line after it
                    size = os.fstat(file.fileno()).st_size
                    self._read_at = self.offset = max(self.offset, size - self._tail_bytes)
                    self._tail_bytes = None
                    if self._read_at > 0:
                        self._skip_to_line(file)
                if not self._header_checked:
                    self._check_header(file)
                file.seek(self._read_at)
                mark = _mark_of(os.fstat(file.fileno()))  # before the read: a later append changes it
                data = file.read(_CHUNK_BYTES)
                self._end_seen = mark if len(data) < _CHUNK_BYTES else None
                return data
        except FileNotFoundError:
            self._end_seen = _MISSING
            return b""
        except OSError as error:  # not a regular file, outside `within`, unreadable
            self._problem(f"not read ({error})")
            self._end_seen = _file_mark(self.path)  # tried again only once it changed, not once a line
            return b""

    def _check_header(self, file: Any) -> None:
        """Reading starts past the first line (a snapshot's offset, a cursor, a tail): the
        first line is read alone to learn whose file it is."""
        self._header_checked = True
        if self._read_at == 0:
            return  # the first line is decoded in its turn
        file.seek(0)
        first = file.readline(_HEADER_BYTES)
        try:
            record = _DECODE(first.decode("utf-8"))
        except (ValueError, RecursionError):
            return
        self._check_run(header_run(record))

    def _check_run(self, named: str | None) -> None:
        if named is not None and named != self.run_id:
            self._problem(f"the file keeps the steps of run {named}, not {self.run_id}; left out")
            self._foreign = True
            self._ready.clear()

    def _skip_to_line(self, file: Any) -> None:
        file.seek(self._read_at - 1)
        while chunk := file.read(65536):
            if self._cancelled is not None and self._cancelled():
                raise ReadCancelled(str(self.path))
            newline = chunk.find(b"\n")
            if newline >= 0:
                self._read_at += newline
                self.offset = self._read_at
                return
            self._read_at += len(chunk)
        self.offset = self._read_at

    def _decode(self, raw: bytes, end: int) -> None:
        if self._foreign:
            return
        if self._skipping:  # the end of a record too long to read: not one of its own
            self._skipping = False
            return
        try:
            record = _DECODE(raw.decode("utf-8"))
        except (ValueError, RecursionError):  # not UTF-8 nor JSON, NaN or Infinity (written null), nested too deep
            record = None
        if end == len(raw) + 1:  # the first line: the header naming the run (absent in older files)
            self._header_checked = True
            named = header_run(record)
            if named is not None:
                self._check_run(named)
                return
        after = record.get("after") if isinstance(record, dict) else None
        if type(after) is not int or after < 0:
            self._problem(f"the record ending at byte {end} is not a kept step; skipped")
            return
        if after < self._after and not self._drop_ahead(after):
            self._problem(
                f"the record ending at byte {end} comes after line {after}, before the one before it; skipped"
            )
            return
        try:
            line = KNOWN_EVENT_DICTS.validate_python(
                {"schema_version": 1, "seq": after + 1, **kept_step_line(record, self.run_id)}
            )
        except (ValidationError, TypeError) as error:
            first = error.errors()[0]["msg"] if isinstance(error, ValidationError) else str(error)
            self._problem(f"the record ending at byte {end} is not a valid train.step ({first}); skipped")
            return
        if line.get("event") != "train.step" or not _is_time(line["ts"]):
            self._problem(f"the record ending at byte {end} is not a train.step with its time; skipped")
            return
        del line["schema_version"], line["seq"]  # never written: a kept step has no place of its own
        self._after = after
        self._ready.append((after, line, end))

    def _drop_ahead(self, after: int) -> bool:
        """A record comes back to line `after`: when only the last few records waiting name
        lines past it (at most `_MAX_AHEAD`, none handed out), they are the ones out of place
        (a line the run had not written then, so never): each is dropped with one diagnostic,
        and True. Otherwise the record going back is the one out of place: False."""
        ahead = 0
        for waiting, _line, _end in reversed(self._ready):
            if waiting <= after:
                break
            ahead += 1
        if ahead == 0 or ahead > _MAX_AHEAD or (ahead == len(self._ready) and self._taken_after > after):
            return False
        for _ in range(ahead):
            named, _line, end = self._ready.pop()
            self._problem(f"the record ending at byte {end} names line {named}, past the records after it; skipped")
        self._after = self._ready[-1][0] if self._ready else self._taken_after
        return True

    def _problem(self, message: str) -> None:
        self._reports += 1
        if self._report is not None and self._reports <= _MAX_REPORTS:
            self._report(f"{self.path}: {message}")

    def left_over(self) -> int:
        """Drops the records read but never due (they name a line the run never wrote: a step
        file from another run); returns how many."""
        count = len(self._ready)
        if count:
            self._problem(f"{count} kept step(s) name a line past the run's last; left out")
            self.offset = self._ready[-1][2]
            self._ready.clear()
        return count


#: a step file's size and modification time: read again only when either changed
_FileMark = tuple[int, int]
_MISSING: _FileMark = (-1, -1)


def _mark_of(status: os.stat_result) -> _FileMark:
    return status.st_size, status.st_mtime_ns


def _file_mark(path: Path) -> _FileMark:
    try:
        return _mark_of(os.stat(path))
    except FileNotFoundError:
        return _MISSING
    except OSError:
        return (-2, -2)  # not even to stat: `_next_chunk` says why it cannot be read


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


#: one decoder for every record (a decoder made per call costs as much as the decoding)
_DECODE = json.JSONDecoder(parse_constant=_no_constant).decode


def _is_time(ts: Any) -> bool:
    try:
        parse_timestamp_us(ts)
    except (TypeError, ValueError):
        return False
    return True
