"""The conformance suite: golden cases, the harness runner, and the sanity check.

Kept light: `import trainwire.conformance` loads nothing until a command runs.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """`trainwire conformance ...`: see `trainwire.conformance.cli`."""
    from trainwire.conformance.cli import main as cli_main

    return cli_main(argv)
