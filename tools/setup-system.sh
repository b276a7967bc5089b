#!/usr/bin/env bash
# System packages the tests need: Node.js (the TypeScript package) and Chromium (the
# browser test). Installs only what is missing, so a second run does nothing.
set -euo pipefail
missing=()
command -v node >/dev/null 2>&1 || missing+=(nodejs npm)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "setup: please install ${missing[*]} (needs root)" >&2
  exit 1
fi
echo "setup: installing ${missing[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
