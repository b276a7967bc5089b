"""The public API is `trainwire.__all__`: documented, each member documented in code, lazy,
and with no private type in its signatures (as httpx tests its exported members)."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from typing import Any

import pytest
from support.paths import ROOT

import trainwire

DOC = ROOT / "docs" / "python.md"
#: data values carry no docstring of their own; the table in docs/python.md describes them
VALUES = (str, dict, frozenset)


def documented_names() -> dict[str, str]:
    section = DOC.read_text(encoding="utf-8").split("## The public API", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([A-Za-z_]+)` \| (.*) \|$", section, re.MULTILINE))


def members() -> list[tuple[str, Any]]:
    return [(name, getattr(trainwire, name)) for name in trainwire.__all__]


def test_the_exported_names_are_the_documented_names() -> None:
    documented = documented_names()
    assert sorted(trainwire.__all__) == sorted(documented)
    assert len(set(trainwire.__all__)) == len(trainwire.__all__)
    assert all(description.strip() for description in documented.values())


def test_the_lazy_table_serves_exactly_the_exported_names() -> None:
    assert set(trainwire._EXPORTS) == set(trainwire.__all__)


@pytest.mark.parametrize(("name", "member"), members())
def test_each_exported_member_has_a_docstring(name: str, member: Any) -> None:
    if inspect.isclass(member) or inspect.isfunction(member):
        assert (member.__doc__ or "").strip(), f"{name} has no docstring"
        assert member.__doc__ is not (member.__mro__[1].__doc__ if inspect.isclass(member) else None), (
            f"{name} inherits its docstring"
        )
    else:
        assert isinstance(member, VALUES) or name in ("Event", "EVENT_ADAPTER"), f"{name}: document it in code"


def _public_callables(name: str, member: Any) -> list[tuple[str, Any]]:
    if inspect.isfunction(member):
        return [(name, member)]
    if not inspect.isclass(member):
        return []
    found = []
    # a member's own attributes and those of its private bases in trainwire (`Run`'s methods)
    own = [cls for cls in member.__mro__ if cls is member or cls.__name__.startswith("_")]
    attributes = {name: value for cls in reversed(own) for name, value in vars(cls).items()}
    for attribute, value in attributes.items():
        if attribute.startswith("_") and attribute != "__init__":
            continue
        function = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        if inspect.isfunction(function):
            found.append((f"{name}.{attribute}", function))
    return found


def test_no_private_type_appears_in_a_public_signature() -> None:
    private = re.compile(r"(?<![A-Za-z0-9_.])_[A-Za-z]\w*")
    found = []
    for name, member in members():
        for qualified, function in _public_callables(name, member):
            signature = str(inspect.signature(function))
            found += [f"{qualified}: {hit}" for hit in private.findall(signature)]
    assert found == []


def test_importing_trainwire_loads_no_member_module() -> None:
    code = "import sys, trainwire; print(sorted(m for m in sys.modules if m.startswith('trainwire.')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
