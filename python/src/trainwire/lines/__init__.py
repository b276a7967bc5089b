"""The lines of a stream as the writer and the reader both see them: what makes one line
valid (reader rules 1-2: the decoder and its exact checks) and what a run's lines add up
to (the summary fold). Below the writer and the reader, so both use the same code."""
