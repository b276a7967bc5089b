"""The generated known-event dict validator against the models it is derived from: the
enums and patterns the writer reads from it are the models' own."""

from __future__ import annotations

import pytest

from trainwire.contract.known_event_dicts import event_field_pattern, event_field_values
from trainwire.contract.models import EVENT_MODELS, field_pattern, field_values

FIELDS = [(event, name) for event, model in EVENT_MODELS.items() for name in model.model_fields]


@pytest.mark.parametrize(("event", "name"), FIELDS)
def test_a_fields_enum_is_the_models(event: str, name: str) -> None:
    assert event_field_values(event, name) == field_values(EVENT_MODELS[event], name)


@pytest.mark.parametrize(("event", "name"), [(event, name) for event, name in FIELDS if name != "ts"])
def test_a_fields_pattern_is_the_models(event: str, name: str) -> None:
    # `ts` is the exception by design: narrowed to valid dates and times (tools/gen_known_event_dicts.py)
    try:
        expected = field_pattern(EVENT_MODELS[event], name)
    except LookupError:
        with pytest.raises(LookupError):
            event_field_pattern(event, name)
        return
    assert event_field_pattern(event, name) == expected


def test_the_enums_the_writer_checks_are_not_empty() -> None:
    assert event_field_values("phase.ended", "status") >= {"ok", "failed"}
    assert event_field_values("run.started", "schema_version") == {1}
