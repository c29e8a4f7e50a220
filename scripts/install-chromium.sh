#!/usr/bin/env bash
# Installs Debian's `chromium` for the browser suite (`npm run test:browser`) unless it is on PATH
# already. Needs root (apt-get); safe to run again.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  echo "chromium present: $(command -v chromium)"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends chromium
echo "chromium installed: $(command -v chromium)"
