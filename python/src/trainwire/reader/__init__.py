"""The reading side: the line decoder, the run-state fold, live sources and the stream
invariants that `validate` checks."""
