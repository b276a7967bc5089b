"""Plays writer scenarios (schemas/harness/v1/scenario.schema.json) through the real emitter."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from trainwire._generated.scenario_plays import EVENT_ACTIONS, PLAYS
from trainwire.contract.clock import FakeClock
from trainwire.writer.run import Run
from trainwire.writer.sinks import MemorySink

__all__ = ["EVENT_ACTIONS", "play"]

# Fields whose values are numbers: there the strings "NaN", "Infinity" and "-Infinity"
# stand for non-finite values. Elsewhere (names, paths, params) a string stays a string.
_NUMBER_FIELDS = frozenset(
    {"epoch", "loss", "learning_rate", "grad_norm", "samples_per_s", "tokens_per_s", "total_epochs", "value"}
)
# Maps whose every value is a number (metrics) or may be one (an `extra` action's fields).
_NUMBER_MAPS = frozenset({"metrics", "fields"})
_NON_FINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
# Run(...) arguments a `start` action may give, and start(...) ones.
_RUN_ARGS = ("producer", "heartbeat_interval_s", "stage")
_START_ARGS = ("total_steps", "total_epochs", "total_trials", "config", "world_size", "resumed_from")


def play(scenario: Mapping[str, Any], *, run_id_prefix: str = "run") -> bytes:
    """Plays `scenario` with a fake clock and returns the bytes written.

    Each `start` action begins a run (its `run_id`, or `<run_id_prefix>-<n>` when it has
    none) that stays current until the next `start`; several runs append to one stream.
    An action other than `start`, `advance` and `raw` before the first `start`, or an
    unknown action, raises `ValueError`.
    """
    player = _Player(scenario, run_id_prefix)
    for index, action in enumerate(scenario["actions"]):
        try:
            player.do(action)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"action {index} ({action.get('do')!r}) is malformed: {exc!r}") from exc
    return player.sink.getvalue()


class _Player:
    def __init__(self, scenario: Mapping[str, Any], run_id_prefix: str) -> None:
        self.clock = FakeClock(scenario["start_time"])
        self.step_interval_s = scenario.get("step_interval_s", 1.0)
        self.run_id_prefix = run_id_prefix
        self.sink = MemorySink()
        self.runs = 0
        self.run: Run | None = None
        self.actions: dict[str, Callable[[dict[str, Any]], None]] = {
            "start": self.start,
            "advance": lambda a: self.clock.advance(a["seconds"]),
            "request_stop": self.request_stop,
            "fail": lambda a: self.current.finish("failed", error=(a["error_type"], a["message"])),
            "raw": lambda a: self.sink.write_raw(a["line"].encode("utf-8")),
            "extra": lambda a: self.current.emit(a["event"], **a.get("fields", {})),
        }

    @property
    def current(self) -> Run:
        if self.run is None:
            raise ValueError("the scenario reports an event before its first `start`")
        return self.run

    def do(self, action: Mapping[str, Any]) -> None:
        handler = self.actions.get(action["do"])
        if handler is None and action["do"] in PLAYS:
            handler = self.call
        if handler is None:
            raise ValueError(f"unknown scenario action {action['do']!r}")
        handler(_with_non_finite(action))

    def call(self, action: dict[str, Any]) -> None:
        """The action's `Run` method, its arguments as the scenario schema's annotation places them."""
        play = PLAYS[action["do"]]

        def value(argument: str | dict[str, Any]) -> Any:
            if isinstance(argument, dict):
                return argument["const"]
            if argument in play["required"]:
                return action[argument]  # missing: a KeyError, reported as a malformed action
            return action.get(argument, play["defaults"].get(argument))

        method = getattr(self.current, play["call"])
        keywords = {name: value(name) for name in play["keywords"]}
        method(*map(value, play["args"]), **keywords, **_given(action, *play["given"]))

    def start(self, action: dict[str, Any]) -> None:
        self.runs += 1
        run_id = action.get("run_id") or f"{self.run_id_prefix}-{self.runs}"
        self.run = Run(
            run_id=run_id,
            sinks=[self.sink],
            step_interval_s=self.step_interval_s,
            clock=self.clock,
            rank=0,
            heartbeat_thread=False,  # the `heartbeat` action writes them, on the fake clock
            **{"heartbeat_interval_s": None, **_given(action, *_RUN_ARGS)},
        )
        self.run.start(provenance=False, **_given(action, *_START_ARGS))

    def request_stop(self, action: dict[str, Any]) -> None:
        if "criterion" in action:
            self.current.stop_for(action["criterion"], requested_by=action.get("requested_by"))
            return
        self.current.stop_requested(
            action["source"],
            signal=action.get("signal"),
            reason=action.get("reason"),
            requested_by=action.get("requested_by"),
        )


def _given(action: Mapping[str, Any], *names: str) -> dict[str, Any]:
    """The named fields the action gives (absent ones stay absent, so they are omitted)."""
    return {name: action[name] for name in names if name in action}


def _with_non_finite(action: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _convert(key, value) for key, value in action.items()}


def _convert(key: str, value: Any) -> Any:
    if key in _NUMBER_FIELDS and isinstance(value, str):
        return _NON_FINITE.get(value, value)
    if key in _NUMBER_MAPS and isinstance(value, Mapping):
        return {name: _number(item) for name, item in value.items()}
    if key == "best" and isinstance(value, Mapping):  # {trial, metric, value}
        return _with_non_finite(value)
    return value


def _number(value: Any) -> Any:
    if isinstance(value, str):
        return _NON_FINITE.get(value, value)
    if isinstance(value, Mapping):
        return {name: _number(item) for name, item in value.items()}
    if isinstance(value, list):
        return [_number(item) for item in value]
    return value
