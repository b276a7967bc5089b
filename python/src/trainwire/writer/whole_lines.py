"""Appending lines to a file descriptor so that each stays a line of its own (writer rules 1 and 3):
a short write is finished, and after a failed write the next line starts with
`\\n`, so the fragment stays one bad line instead of swallowing the next good one.

A fragment that lacked only its `\\n` is a whole line once that `\\n` lands: the line was
counted lost when its write failed, yet a reader finds it. `made_whole` counts such lines so
that the loss said at the run's end is what readers find missing."""

from __future__ import annotations

import os

__all__ = ["WholeLines"]


class WholeLines:
    """Writes lines (each ending in `\\n`) to `fd`; `mid_line` when the file already ends
    inside a line (a writer killed mid-line)."""

    def __init__(self, fd: int, where: str, *, mid_line: bool = False) -> None:
        self.fd = fd
        self.where = where
        #: lines whose write failed after all but their `\n` landed, made whole by a later write
        self.made_whole = 0
        self._mid_line = mid_line
        self._lacks_only_newline = False  # the fragment in the file is a whole line but its `\n`

    def write(self, line: bytes) -> None:
        after_fragment = self._mid_line
        if after_fragment:
            line = b"\n" + line
        landed = 0
        try:
            landed = os.write(self.fd, line)
            while landed < len(line):  # a short write (disk nearly full, signal): finish the line
                written = os.write(self.fd, memoryview(line)[landed:])
                if not written:
                    raise OSError(f"could not finish a line in {self.where}")
                landed += written
        except OSError:
            self._ended(after_fragment, landed, len(line))
            raise
        except BaseException:  # interrupted where what landed is unknown: assume a fragment
            self._mid_line, self._lacks_only_newline = True, False
            raise
        if after_fragment:  # else a whole line followed a whole line: nothing changes
            self._ended(after_fragment, landed, len(line))

    def _ended(self, after_fragment: bool, landed: int, length: int) -> None:
        if not landed:  # none counted, but a failing file system may have kept some: at worst a blank line
            self._mid_line = True
            return
        if after_fragment and self._lacks_only_newline:
            self.made_whole += 1  # the `\n` this line began with ended the fragment before it
        self._mid_line = landed < length
        self._lacks_only_newline = landed == length - 1
