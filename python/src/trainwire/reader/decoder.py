"""The reader's lower layer, as documented: bytes in chunks -> typed events and diagnostics
(reader rules 1-2, no fold). Defined in `trainwire.lines.decoder`, below the writer and the
reader, because the writer checks each line it writes with the same code; this path stays
the reader's door to it."""

from __future__ import annotations

from trainwire.lines.decoder import DEFAULT_MAX_LINE_BYTES, Decoder, Diagnostic

__all__ = ["DEFAULT_MAX_LINE_BYTES", "Decoder", "Diagnostic"]
