"""`Run` is written once: each public method (signature, docstring, body) in the one class of
its concern among `Run`'s private bases, each attribute changed by one of them only, and a
type checker still checks every call on a `Run`."""

from __future__ import annotations

import ast
import contextlib
import inspect
from pathlib import Path
from typing import Any

import mypy.api
import pytest
from support.paths import SOURCES

from trainwire.writer.run import Run

WRITER = SOURCES / "writer"

SNIPPET = """\
from trainwire.writer.run import Run

run = Run(None)
run.step(step="x")
with run.phase("train") as same:
    reveal_type(same)
reveal_type(run.trial_scope)
"""


def _writer_classes() -> dict[str, list[ast.ClassDef]]:
    """Every class of `trainwire.writer`'s modules, by module file name."""
    return {
        path.name: [
            node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.ClassDef)
        ]
        for path in sorted(WRITER.glob("*.py"))
    }


def _defined(name: str) -> ast.FunctionDef:
    source = ast.parse(inspect.getsource(getattr(Run, name)).strip())
    function = source.body[0]
    assert isinstance(function, ast.FunctionDef)
    return function


def _signature(function: ast.FunctionDef) -> str:
    return ast.dump(function.args, annotate_fields=False)


def test_no_signature_of_run_is_written_twice_in_the_writer() -> None:
    """A public method of `Run` with parameters of its own (more than `self`) is defined in one
    class of the writer: none repeats its name and parameters to be forwarded to (a protocol
    stating what another part needs of a run is a type, not a copy)."""
    public = {name for name in dir(Run) if not name.startswith("_")}
    written: dict[tuple[str, str], list[str]] = {}
    for module, classes in _writer_classes().items():
        for cls in classes:
            if any(isinstance(base, ast.Name) and base.id == "Protocol" for base in cls.bases):
                continue
            for node in cls.body:
                if (
                    isinstance(node, ast.FunctionDef)
                    and node.name in public
                    and len(node.args.args) + len(node.args.kwonlyargs) > 1
                ):
                    written.setdefault((node.name, _signature(node)), []).append(f"{module}:{cls.name}")
    assert {name: places for (name, _), places in written.items() if len(places) > 1} == {}
    assert ("step", _signature(_defined("step"))) in written


def test_each_method_of_run_is_its_own_through_its_bases() -> None:
    bases = [cls for cls in Run.__mro__ if cls.__module__.startswith("trainwire.writer.")]
    assert [cls.__name__ for cls in bases] == [
        "Run",
        "_Lifetime",
        "_TrialEvents",
        "_TrainingEvents",
        "_PhaseEvents",
        "_RunCore",
    ]
    assert all(inspect.getdoc(getattr(Run, name)) for name in dir(Run) if not name.startswith("_"))


def test_each_attribute_is_changed_by_one_concern_only() -> None:
    """Outside `Run.__init__` (which builds everything once), `self._name = ...` appears in
    one class only: the concern that owns the state."""
    changed_by: dict[str, set[str]] = {}
    for classes in _writer_classes().values():
        for cls in classes:
            if cls.name not in {base.__name__ for base in Run.__mro__}:
                continue
            for function in cls.body:
                if not isinstance(function, ast.FunctionDef) or (cls.name, function.name) == ("Run", "__init__"):
                    continue
                for node in ast.walk(function):
                    targets = (
                        node.targets
                        if isinstance(node, ast.Assign)
                        else [node.target]
                        if isinstance(node, (ast.AugAssign, ast.AnnAssign))
                        else []
                    )
                    for target in targets:
                        if (
                            isinstance(target, ast.Attribute)
                            and isinstance(target.value, ast.Name)
                            and target.value.id == "self"
                        ):
                            changed_by.setdefault(target.attr, set()).add(cls.name)
    assert {name: owners for name, owners in changed_by.items() if len(owners) > 1} == {}
    assert changed_by["_last_step"] == {"_TrainingEvents"}
    assert changed_by["_finished"] == {"_Lifetime"}


def test_mypy_checks_calls_on_a_run_and_the_phase_block_yields_the_run(tmp_path: Path) -> None:
    (tmp_path / "snippet.py").write_text(SNIPPET, encoding="utf-8")
    # this tree's sources, not whichever trainwire the interpreter has installed
    config = f"[mypy]\nmypy_path = {SOURCES.parent}\nfollow_imports = silent\ncache_dir = {tmp_path / 'cache'}\n"
    (tmp_path / "mypy.ini").write_text(config, encoding="utf-8")
    report, errors, _ = mypy.api.run(["--config-file", str(tmp_path / "mypy.ini"), str(tmp_path / "snippet.py")])
    lines = [line.split(": ", 1)[1] for line in report.splitlines() if "snippet.py:" in line]
    assert lines[0].startswith('error: Argument "step" to "step" of '), report + errors
    assert lines[0].endswith('has incompatible type "str"; expected "int"  [arg-type]'), report + errors
    assert lines[1] == 'note: Revealed type is "trainwire.writer.run.Run"', report + errors
    assert len(lines) == 3, report + errors


class RecordedEndings(Run):
    """A host's `Run` that records each ending asked of it, as a subclass would to log it."""

    endings: list[tuple[str, dict[str, Any]]]

    def finish(self, status: str = "succeeded", **details: Any) -> None:
        self.endings = [*getattr(self, "endings", []), (status, details)]
        super().finish(status, **details)


@pytest.mark.parametrize(
    ("raised", "ending"),
    [
        (None, ("succeeded", {})),
        (KeyboardInterrupt(), ("interrupted", {"reason": "sigint"})),
    ],
)
def test_a_with_block_ends_through_an_overridden_finish(
    tmp_path: Path, raised: BaseException | None, ending: tuple[str, dict[str, Any]]
) -> None:
    run = RecordedEndings(tmp_path, heartbeat_interval_s=None)
    with contextlib.suppress(KeyboardInterrupt), run:
        run.start(provenance=False)
        if raised is not None:
            raise raised
    assert run.endings == [ending]
    assert run.status == ending[0]


def test_a_block_ended_after_a_stop_ends_interrupted_through_an_overridden_finish(tmp_path: Path) -> None:
    run = RecordedEndings(tmp_path, heartbeat_interval_s=None)
    with run:
        run.start(provenance=False)
        run.stop_for("loss > 10 after step 500")
    assert run.endings == [("interrupted", {"reason": "api"})]
