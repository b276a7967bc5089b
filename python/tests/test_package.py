"""The top-level package: its public names, and what importing it costs."""

from __future__ import annotations

import subprocess
import sys

import pytest

import trainwire


def test_public_names_resolve_to_their_modules() -> None:
    from trainwire.reader.state import read_state
    from trainwire.stop import request_stop
    from trainwire.writer.run import Run

    assert trainwire.Run is Run
    assert trainwire.read_state is read_state
    assert trainwire.request_stop is request_stop
    assert set(trainwire.__all__) <= set(dir(trainwire)) | {"__version__"}


def test_every_event_has_a_typed_model_and_lines_validate_through_the_union() -> None:
    from trainwire import EVENT_ADAPTER, EVENT_NAMES, TrainStep, UnknownEvent

    assert len(EVENT_NAMES) == 13
    line = (
        b'{"schema_version":1,"seq":1,"ts":"2026-11-29T10:00:00Z","run_id":"r1","event":"train.step",'
        b'"step":1,"total_steps":2,"epoch":null,"loss":1.5,"learning_rate":null,"elapsed_s":0.5,"eta_s":null,"progress":0.5}'
    )
    assert isinstance(EVENT_ADAPTER.validate_json(line, strict=True), TrainStep)
    unknown = line.replace(b'"train.step"', b'"model.exported"')
    assert isinstance(EVENT_ADAPTER.validate_json(unknown, strict=True), UnknownEvent)


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
