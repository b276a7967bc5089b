"""`python -m trainwire`: the same as the `trainwire` command."""

from __future__ import annotations

import sys

from trainwire.cli.commands import main

if __name__ == "__main__":
    sys.exit(main())
