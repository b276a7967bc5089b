"""What the TypeScript package costs a web page: entry points bundled by esbuild, minified."""

from __future__ import annotations

import gzip
from collections.abc import Callable

from context import ROOT, Context, run_child
from records import Figure, Measurement, Target

__all__ = ["FIGURES"]

_PACKAGE = ROOT / "typescript"
_ESBUILD = _PACKAGE / "node_modules" / ".bin" / "esbuild"
KB = 1000


def bundle_size(ctx: Context, name: str, imports: str, module: str) -> tuple[int, int]:
    """Minified and gzip sizes (bytes) of a page importing `imports` from the built `module`."""
    if not _ESBUILD.exists():
        raise RuntimeError("esbuild is missing: run `npm ci` in typescript/")
    built = _PACKAGE / "dist" / module
    if not built.exists():
        raise RuntimeError(f"typescript/dist/{module} is missing: run `npm run build` in typescript/")
    scratch = ctx.scratch_dir(f"bundle-{name}")
    entry = scratch / "entry.mjs"
    # Re-exported, so that nothing imported is dropped as unused.
    entry.write_text(f"export {{ {imports} }} from {str(built)!r};\n", encoding="utf-8")
    out = scratch / "out.js"
    run_child(
        [
            str(_ESBUILD),
            str(entry),
            "--bundle",
            "--minify",
            "--format=esm",
            "--platform=browser",
            f"--outfile={out}",
            "--log-level=error",
        ],
        timeout=120,
        cwd=scratch,
    )
    data = out.read_bytes()
    return len(data), len(gzip.compress(data, compresslevel=9, mtime=0))


def _figure(name: str, imports: str, module: str, *, judged: str) -> Callable[[Context], Measurement]:
    """A figure whose value is the `judged` size ("minified" or "gzip"); the other goes to the notes."""

    def measure(ctx: Context) -> Measurement:
        sizes = dict(zip(("minified", "gzip"), bundle_size(ctx, name, imports, module)))
        other = "gzip" if judged == "minified" else "minified"
        return Measurement(
            sizes[judged] / KB,
            notes=(
                f"{sizes[other] / KB:.1f} KB {other}; esbuild --minify --format=esm --platform=browser "
                f"of `{imports}` from typescript/dist/{module}"
            ),
        )

    return measure


FIGURES = [
    Figure(
        "StreamReader bundle, full validation",
        "KB",
        Target("<= 60 KB minified", "value_at_most", 60.0),
        _figure("stream-reader", "StreamReader", "index.js", judged="minified"),
    ),
    # What a page downloads: the follower's retries, backoff and replacement checks are worth their bytes.
    Figure(
        "fromFetch alone",
        "KB",
        Target("<= 2.5 KB gzip", "value_at_most", 2.5),
        _figure("from-fetch", "fromFetch", "browser.js", judged="gzip"),
    ),
]
