#!/usr/bin/env bash
# Installs everything, builds, and starts airlock's MCP server on
# http://127.0.0.1:8787/mcp with the embedded default configuration.
# Extra arguments go to `airlock serve` (e.g. --config FILE, --http HOST:PORT).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh" >&2
exec "$here/build/airlock" serve --http 127.0.0.1:8787 "$@"
