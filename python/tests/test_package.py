"""The top-level package: its public names, and what importing it costs."""

from __future__ import annotations

import subprocess
import sys

import pytest

import trainwire


def test_public_names_resolve_to_their_modules() -> None:
    from trainwire.run import Run
    from trainwire.state import read_state
    from trainwire.stop import request_stop

    assert trainwire.Run is Run
    assert trainwire.read_state is read_state
    assert trainwire.request_stop is request_stop
    assert set(trainwire.__all__) <= set(dir(trainwire)) | {"__version__"}


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Runner'"):
        trainwire.Runner  # noqa: B018


def test_importing_the_package_and_the_reader_imports_neither_torch_nor_transformers() -> None:
    code = (
        "import sys, trainwire\n"
        "from trainwire import Run, StreamReader, read_state, request_stop\n"
        "heavy = [m for m in ('torch', 'transformers', 'accelerate') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
