"""The run journal: its files (summary, config, notes, step file, series snapshot) read as
hostile, the fold that writes its documents, the step file and its merge into a stream, the
lookup of a run's journal, the rebuild, and a stream opened from its snapshots. Between
`lines` (below) and the writer and reader (above): the writer keeps its sink and thread."""
