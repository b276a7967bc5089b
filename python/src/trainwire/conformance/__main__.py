"""`python -m trainwire.conformance ...`."""

from __future__ import annotations

import sys

from trainwire.conformance import main

sys.exit(main())
