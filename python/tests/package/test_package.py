"""The top-level package: its public names, and what importing it costs."""

from __future__ import annotations

import subprocess
import sys

import pytest

import trainwire
from trainwire._generated import contract
from trainwire.contract import models


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

    assert frozenset(contract.EVENT_NAMES) == EVENT_NAMES
    line = (
        b'{"schema_version":1,"seq":1,"ts":"2026-11-29T10:00:00Z","run_id":"r1","event":"train.step",'
        b'"step":1,"total_steps":2,"epoch":null,"loss":1.5,"learning_rate":null,"elapsed_s":0.5,"eta_s":null,"progress":0.5}'
    )
    assert isinstance(EVENT_ADAPTER.validate_json(line, strict=True), TrainStep)
    unknown = line.replace(b'"train.step"', b'"model.exported"')
    assert isinstance(EVENT_ADAPTER.validate_json(unknown, strict=True), UnknownEvent)


def test_the_event_models_are_the_generated_events_in_contract_order() -> None:
    assert [(name, model.__name__) for name, model in models.EVENT_MODELS.items()] == list(
        contract.EVENT_TITLES.items()
    )


def test_every_generated_event_model_is_exported_by_models_and_the_package() -> None:
    # the export lists take the event models from the generated ones: a new event's model
    # is public with `make generate`, each name the very class the `Line` union holds
    for name, title in contract.EVENT_TITLES.items():
        assert title in models.__all__ and title in trainwire.__all__
        assert getattr(trainwire, title) is getattr(models, title) is models.EVENT_MODELS[name]
    assert trainwire.__all__.count("RunStarted") == 1


def test_importing_the_package_imports_no_model_until_one_is_used() -> None:
    code = (
        "import sys, trainwire\n"
        "before = 'trainwire._generated.events' in sys.modules\n"
        "trainwire.TrainStep\n"
        "print(before, 'trainwire._generated.events' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]


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


def test_a_run_starts_steps_and_finishes_without_building_pydantic_models(tmp_path) -> None:
    # the lines are checked by the generated dict validator (pydantic-core alone): the cost
    # of a run's start is the `emitter, cold start` figure of docs/performance.md
    code = (
        "import sys\n"
        "from trainwire.writer.run import Run\n"
        f"run = Run({str(tmp_path / 'out')!r}, heartbeat_interval_s=None)\n"
        "run.start(total_steps=2, config={'lr': 0.1})\n"
        "run.step(1, loss=1.5)\n"
        "run.eval(1, {'accuracy': 0.5})\n"
        "run.finish()\n"
        "loaded = ('pydantic', 'trainwire._generated.events', 'trainwire.lines.decoder')\n"
        "print(','.join(m for m in loaded if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert result.stdout.strip() == ""
    lines = (tmp_path / "out" / "progress.jsonl").read_bytes().splitlines()
    assert [line.split(b'"event":"')[1].split(b'"')[0] for line in lines] == [
        b"run.started",
        b"train.step",
        b"eval.completed",
        b"run.finished",
    ]


def test_reading_valid_lines_and_listing_runs_import_no_event_model(tmp_path) -> None:
    # valid lines pass the generated dict validator; the typed models (~150 ms to import) are
    # built for the first line it does not vouch for, which is still read with its diagnostic
    with trainwire.Run(tmp_path / "out", heartbeat_interval_s=None) as run:
        run.start(total_steps=2)
        run.step(1, loss=1.5)
    stream = tmp_path / "out" / "progress.jsonl"
    code = (
        "import sys\n"
        "from trainwire.cli import main\n"
        "from trainwire.reader.state import StreamReader\n"
        f"main(['runs', {str(tmp_path)!r}])\n"
        "reader = StreamReader()\n"
        f"valid = reader.feed(open({str(stream)!r}, 'rb').read())\n"
        "before = 'trainwire._generated.events' in sys.modules\n"
        'bad = reader.feed(b\'{"schema_version": 1, "event": "train.step"}\\n\')\n'
        "print(len(valid.dicts), before, 'trainwire._generated.events' in sys.modules, len(bad), len(reader.diagnostics))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines()[-1].split() == ["3", "False", "True", "0", "1"]
