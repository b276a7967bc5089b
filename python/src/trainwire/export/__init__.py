"""Bridges from a trainwire stream into the trackers teams already use.

`sync` reads a stream from a saved cursor and hands each event once to a tracker's exporter;
`mlflow`, `tensorboard` and `wandb` are the exporters (extras `trainwire[mlflow]`, `trainwire[tensorboard]`,
`trainwire[wandb]`); `kubeflow` posts to a Kubeflow TrainJob's status (no extra).
See docs/integrations.md.
"""
