"""Bridges from a trainwire stream into the trackers teams already use.

`sync` reads a stream from a saved cursor and hands each event once to a tracker's exporter;
`mlflow` and `tensorboard` are the exporters (extras `trainwire[mlflow]`, `trainwire[tensorboard]`).
See docs/integrations.md.
"""
