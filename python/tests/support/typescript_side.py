"""What the TypeScript package answers, for the cross-language tests: node runs one of the
scripts of typescript/test/cross-language (compiled by `npm run build`) on a JSON request and
prints one JSON value per request, a line each."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from support.paths import CROSS_LANGUAGE_SCRIPTS, ROOT


def typescript_lines(script: str, request: list[Any]) -> list[str]:
    """The lines `script` (`canonical-states.js`) prints for `request`."""
    path = CROSS_LANGUAGE_SCRIPTS / script
    assert path.is_file(), f"{path} is missing: run `npm run build` in typescript/"
    result = subprocess.run(
        ["node", str(path)], input=json.dumps(request), capture_output=True, text=True, check=True, cwd=ROOT
    )
    return result.stdout.split("\n")[:-1]  # not splitlines(): U+2028 may stand in a state
