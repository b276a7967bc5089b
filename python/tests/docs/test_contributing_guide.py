"""docs/contributing.md: every path, `make` target and test it names is in the tree.

Its Python block runs with the other pages' in test_docs_examples.py.
"""

from __future__ import annotations

import re

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


def _exists(path: str) -> bool:
    if "<" in path:  # a pattern such as `<family>-<name>.schema.json`: its folder must exist
        return (ROOT / path.rsplit("/", 1)[0]).is_dir()
    return any((base / path).exists() for base in BASES) or any(test.name == path for test in TEST_FILES)


@pytest.mark.parametrize("path", PATHS)
def test_every_path_named_exists(path: str) -> None:
    assert _exists(path), f"docs/contributing.md names {path!r}, which is not in the tree"


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
