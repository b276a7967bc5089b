"""What the TypeScript package answers, for the cross-language tests: node runs one of the
scripts in tests/scripts on a JSON request and prints one canonical JSON value per line."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from support.paths import ROOT, SCRIPTS


def typescript_lines(script: str, request: list[dict[str, Any]]) -> list[str]:
    result = subprocess.run(
        ["node", str(SCRIPTS / script)],
        input=json.dumps(request), capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    return result.stdout.split("\n")[:-1]  # not splitlines(): U+2028 may stand in a state
