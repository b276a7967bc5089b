"""docs/contributing.md: every path, `make` target and test it names is in the tree, and
each thing it says lives in a file is defined there.

Its Python block runs with the other pages' in test_docs_examples.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.paths import ROOT, SOURCES

GUIDE = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
CODE_SPANS = re.findall(r"`([^`\n]+)`", GUIDE)
#: a span that names a file or folder: a path with a slash, or a file name with a suffix
PATHS = sorted({span for span in CODE_SPANS if re.fullmatch(r"[\w./-]+/[\w./-]*|[\w-]+\.(py|md|ts|json)", span)})
#: where a bare name may live: the repository, the package, and its tests and docs
TESTS_DIR = ROOT / "python" / "tests"
BASES = [ROOT, ROOT / "python" / "src", SOURCES, ROOT / "typescript", TESTS_DIR, TESTS_DIR / "support", ROOT / "docs"]
TEST_FILES = [*TESTS_DIR.rglob("test_*.py"), *(ROOT / "tools" / "tests").glob("test_*.py")]


#: `` `path` (`NAME`) `` or `` `path` (`NAME`, `OTHER`) ``: the guide says each NAME is what to
#: edit in that file
PLACED = sorted(
    {
        (path, name)
        for path, names in re.findall(r"`([\w./-]+\.(?:py|ts|json))` \(((?:`\w+`(?:, )?)+)\)", GUIDE)
        for name in re.findall(r"`(\w+)`", names)
    }
)
#: `file.py::test_name`: the test is defined in that file
PLACED_TESTS = sorted(set(re.findall(r"`(test_\w+\.py)::(test_\w+)`", GUIDE)))


def _resolve(path: str) -> Path | None:
    found = [base / path for base in BASES if (base / path).is_file()]
    found += [test for test in TEST_FILES if test.name == path]
    return found[0] if len(found) == 1 else None


def _defines(path: Path, name: str) -> bool:
    """`path` defines `name`: a Python def, class or assignment at any level, a TypeScript
    declaration or use (`assertNever`), a JSON key."""
    text = path.read_text(encoding="utf-8")
    patterns = {
        ".py": rf"^\s*(?:(?:def|class)\s+{name}\b|{name}\s*[:=])",
        ".ts": rf"\b{name}\b",
        ".json": rf'"{name}"\s*:',
    }
    return re.search(patterns[path.suffix], text, flags=re.M) is not None


def _exists(path: str) -> bool:
    if "<" in path:  # a pattern such as `<family>-<name>.schema.json`: its folder must exist
        return (ROOT / path.rsplit("/", 1)[0]).is_dir()
    return any((base / path).exists() for base in BASES) or any(test.name == path for test in TEST_FILES)


@pytest.mark.parametrize("path", PATHS)
def test_every_path_named_exists(path: str) -> None:
    assert _exists(path), f"docs/contributing.md names {path!r}, which is not in the tree"


@pytest.mark.parametrize(("path", "name"), PLACED)
def test_each_thing_named_with_its_file_is_defined_in_that_file(path: str, name: str) -> None:
    found = _resolve(path)
    assert found is not None, f"docs/contributing.md names {path!r}: no single file of the tree is that"
    assert _defines(found, name), f"docs/contributing.md says {name} is in {path}, which does not define it"


@pytest.mark.parametrize(("file", "name"), PLACED_TESTS)
def test_each_test_named_with_its_file_is_defined_in_that_file(file: str, name: str) -> None:
    found = _resolve(file)
    assert found is not None and _defines(found, name), f"docs/contributing.md: {file} defines no {name}"


def test_the_guide_places_every_per_event_table() -> None:
    # the tables the event-table test checks are the ones the guide tells a new event to fill
    from contract.test_event_tables import MARKED_TABLES, TABLES

    tables = {**TABLES, **{module: table for module, (table, _, _) in MARKED_TABLES.items()}}
    for module, table in tables.items():
        path = module.removeprefix("trainwire.").replace(".", "/") + ".py"
        assert (path, table) in PLACED, f"docs/contributing.md: name `{path}` (`{table}`) under Adding an event"


def test_every_make_target_named_is_in_the_makefile() -> None:
    targets = set(re.findall(r"^([a-z-]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), flags=re.M))
    named = set(re.findall(r"`make ([a-z-]+)`", GUIDE))
    assert named and named <= targets, named - targets


@pytest.mark.parametrize("name", sorted(set(re.findall(r"\b(test_\w+)\b", GUIDE))))
def test_every_test_named_is_a_test_file_or_defined(name: str) -> None:
    assert any(
        path.stem == name or re.search(rf"^def {name}\(", path.read_text(encoding="utf-8"), flags=re.M)
        for path in TEST_FILES
    ), f"docs/contributing.md names {name}, which no test file defines"


def test_each_subpackage_has_its_tests_folder_and_the_guide_names_it() -> None:
    """The tests mirror the code: a folder of `python/tests/` for each subpackage, each named."""
    mirror = GUIDE.split("## The tests mirror the code", 1)[1].split("\n\n", 2)[1]
    subpackages = sorted(
        path.parent.name for path in SOURCES.glob("*/__init__.py") if not path.parent.name.startswith("_")
    )
    assert [name for name in subpackages if not (TESTS_DIR / name).is_dir()] == []
    assert [name for name in subpackages if f"`{name}/`" not in mirror] == []
