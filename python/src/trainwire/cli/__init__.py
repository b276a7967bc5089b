"""The `trainwire` command line: commands, `tail` and the demo."""

from trainwire.cli.commands import main

__all__ = ["main"]
