"""The writing side: `Run` and what it writes through (sinks, encoding, redaction,
provenance, the rank that writes)."""
