"""The Python tests: one folder per subpackage of `trainwire`, and `support/` shared by all.

This file's folder holds no `__init__.py`, so pytest puts it on `sys.path` when it loads this
file, before any test: `from support.stream_files import stream_of` works from every folder.
The same import mode needs each test file's name to be unique across the folders.
"""

import os
import signal
import tempfile
from collections.abc import Iterator

import pytest

# the runs cache (`trainwire.reader.run_cache`) of every test and its subprocesses in a folder
# of this session's, never the user's; a test of the cache points it elsewhere itself
os.environ["TRAINWIRE_CACHE_DIR"] = tempfile.mkdtemp(prefix="trainwire-test-cache-")


@pytest.fixture(autouse=True)
def _signal_handlers_restored() -> Iterator[None]:
    """Each test starts with the handlers the session had and leaves them so: a library that
    installs its own (Ray's `init` takes SIGTERM) must not change what a later test's `Run` sees."""
    held = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    yield
    for number, handler in held.items():
        if signal.getsignal(number) is not handler and handler is not None:
            signal.signal(number, handler)
