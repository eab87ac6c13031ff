#!/usr/bin/env bash
# Lineage refresh cost against a full /proc scan (the upstream approach),
# with a lineage of 20 and 10 / 1,000 / 5,000 unrelated host processes.
# Linux only; takes well under a minute. Everything it starts is killed by
# its own process group (verified identity) at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(uname -s)" != Linux ]; then echo "lineage bench: Linux only, skipped"; exit 0; fi
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$here/.." && CGO_ENABLED=0 go build -o "$bin/lineagebench" ./bench/lineagebench)
"$bin/lineagebench"
