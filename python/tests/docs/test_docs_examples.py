"""Every Python and TypeScript example of the documentation runs as written.

Pages: README.md, docs/*.md and the package READMEs. The blocks of one page run in order
in one scratch directory (a later block may read what an earlier one wrote) but each in
its own process, so every block carries its own imports. Python blocks run with this
interpreter; TypeScript blocks are compiled against the built package (typescript/dist)
and run with Node. A `print(...)  # text` / `console.log(...); // text` line promises that
its output starts with `text` ("..." ends the promise early). Shell blocks are not run.

A block that cannot run here says so in the page, visibly, on the line before it:
`*Not run by the documentation test: <reason>.*` (used sparingly).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.paths import ROOT

TYPESCRIPT = ROOT / "typescript"
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "python" / "README.md",
    TYPESCRIPT / "README.md",
]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
NOT_RUN = re.compile(r"\*Not run by the documentation test: .+\.\*\n*$")
LANGUAGES = {"python": "python", "py": "python", "ts": "ts", "typescript": "ts"}
#: a block's exit status when the page documents another one (`sys.exit(...)  # 2 after a stop`)
EXIT_PROMISE = re.compile(r"sys\.exit\(.*\)\s*#\s*(\d+)\b")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    code: str

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    def promises(self) -> list[str]:
        marker = r"print\(.*\)\s*#" if self.language == "python" else r"console\.log\(.*\);?\s*//"
        return [comment.strip().split("...")[0] for comment in re.findall(marker + r"\s*(.*)", self.code)]

    def expected_exit(self) -> int:
        promised = EXIT_PROMISE.search(self.code) if self.language == "python" else None
        return int(promised.group(1)) if promised else 0


def blocks_of(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        language = LANGUAGES.get(match.group(1))
        if language is None or NOT_RUN.search(text[: match.start()][-300:]):
            continue
        found.append(Block(page, text.count("\n", 0, match.start()) + 1, language, match.group(2)))
    return found


def _check_output(block: Block, completed: subprocess.CompletedProcess[str]) -> None:
    report = f"{block.name} ({block.language}):\n{block.code}\nstdout:\n{completed.stdout}\nstderr:\n{completed.stderr}"
    assert completed.returncode == block.expected_exit(), report
    assert "Traceback" not in completed.stderr, report
    printed = completed.stdout.splitlines()
    for promise in block.promises():
        assert any(line.startswith(promise) for line in printed), f"nothing printed starts with {promise!r}\n{report}"


def _run_python(block: Block, workdir: Path, index: int) -> None:
    script = workdir / f"example_{index}.py"
    script.write_text(block.code, encoding="utf-8")
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "python" / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    completed = subprocess.run(
        [sys.executable, script.name], cwd=workdir, capture_output=True, text=True, timeout=600, env=environment
    )
    _check_output(block, completed)


def _typescript_project(workdir: Path, blocks: list[Block]) -> None:
    """The blocks as modules of a project that depends on the built package."""
    assert (TYPESCRIPT / "dist" / "index.js").is_file(), (
        "typescript/dist is missing: run `npm run build` in typescript/ (make setup does)"
    )
    (workdir / "node_modules").mkdir()
    (workdir / "node_modules" / "trainwire").symlink_to(TYPESCRIPT, target_is_directory=True)
    (workdir / "package.json").write_text('{"type": "module", "private": true}\n', encoding="utf-8")
    tsconfig = {
        "extends": str(TYPESCRIPT / "tsconfig.base.json"),
        "compilerOptions": {
            "outDir": "out",
            "rootDir": ".",
            "noUnusedLocals": False,
            "typeRoots": [str(TYPESCRIPT / "node_modules" / "@types")],
        },
        "files": [f"example_{i}.ts" for i in range(len(blocks))],
    }
    (workdir / "tsconfig.json").write_text(json.dumps(tsconfig) + "\n", encoding="utf-8")
    for index, block in enumerate(blocks):
        (workdir / f"example_{index}.ts").write_text(block.code, encoding="utf-8")


def _run_typescript(blocks: list[Block], workdir: Path) -> None:
    _typescript_project(workdir, blocks)
    tsc = TYPESCRIPT / "node_modules" / "typescript" / "bin" / "tsc"
    compiled = subprocess.run(
        ["node", str(tsc), "-p", "tsconfig.json"], cwd=workdir, capture_output=True, text=True, timeout=300
    )
    assert compiled.returncode == 0, (
        f"{[block.name for block in blocks]} do not compile:\n{compiled.stdout}{compiled.stderr}"
    )
    for index, block in enumerate(blocks):
        completed = subprocess.run(
            ["node", f"out/example_{index}.js"], cwd=workdir, capture_output=True, text=True, timeout=300
        )
        _check_output(block, completed)


PAGES_WITH_CODE = {page.relative_to(ROOT).as_posix(): blocks_of(page) for page in PAGES}


def test_the_pages_have_examples() -> None:
    languages = {block.language for blocks in PAGES_WITH_CODE.values() for block in blocks}
    assert languages == {"python", "ts"}
    assert len(PAGES_WITH_CODE["docs/python.md"]) >= 5


@pytest.mark.parametrize(
    "page", [name for name, blocks in PAGES_WITH_CODE.items() if any(b.language == "python" for b in blocks)]
)
def test_python_examples_run(page: str, tmp_path: Path) -> None:
    for index, block in enumerate(b for b in PAGES_WITH_CODE[page] if b.language == "python"):
        _run_python(block, tmp_path, index)


def test_the_readme_examples_run_one_after_the_other_in_one_directory(tmp_path: Path) -> None:
    # both write to out/: the second reads a stream holding the first one's run too
    first = next(b for b in PAGES_WITH_CODE["README.md"] if b.language == "python")
    second = next(b for b in PAGES_WITH_CODE["python/README.md"] if b.language == "python")
    _run_python(first, tmp_path, 0)
    _run_python(second, tmp_path, 1)


@pytest.mark.parametrize(
    "page", [name for name, blocks in PAGES_WITH_CODE.items() if any(b.language == "ts" for b in blocks)]
)
def test_typescript_examples_compile_and_run(page: str, tmp_path: Path) -> None:
    _run_typescript([b for b in PAGES_WITH_CODE[page] if b.language == "ts"], tmp_path)


def test_a_block_is_left_out_only_with_a_visible_reason(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nprint(1)\n```\n\n*Not run by the documentation test: needs a GPU.*\n\n```python\nimport cuda\n```\n"
        "<!-- not run -->\n```ts\nconsole.log(1);\n```\n",
        encoding="utf-8",
    )
    assert [(block.language, block.code) for block in blocks_of(page)] == [
        ("python", "print(1)\n"),
        ("ts", "console.log(1);\n"),
    ]


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    suffixes = {".md", ".py", ".ts", ".mjs", ".json", ".toml", ".txt", ".sh", ".yml", ".yaml", ".html", ".css", ""}
    return [
        ROOT / name.decode()
        for name in listed
        if name and Path(name.decode()).suffix in suffixes and (ROOT / name.decode()).is_file()
    ]


def test_no_file_cites_a_document_outside_the_tree() -> None:
    citing = [
        str(path.relative_to(ROOT))
        for path in _tracked_text_files()
        if path != Path(__file__).resolve()
        and re.search(r"\bDESIGN\b", path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert citing == [], (
        "the writer and reader rules are the normative text; these files cite a document not in the tree"
    )


@pytest.mark.parametrize(
    "page",
    sorted(
        {p.relative_to(ROOT).as_posix() for p in [*PAGES, *ROOT.glob("*.md"), *(ROOT / "conformance").glob("*.md")]}
    ),
)
def test_relative_links_of_the_pages_resolve(page: str) -> None:
    path = ROOT / page
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text(encoding="utf-8"))
    missing = [target for target in targets if "://" not in target and not (path.parent / target).exists()]
    assert missing == [], f"{page} links to missing files"
