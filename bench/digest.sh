#!/usr/bin/env bash
# Tree digest: loki's parallel manifest-v3 digest against a one-worker run,
# a sequential Go implementation and a sequential python3 equivalent, on a
# generated tree (default 20,000 files / 1 GiB; override with
# DIGEST_FILES / DIGEST_BYTES / DIGEST_RUNS). The tree is built in a temp
# dir and removed afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
exec go run ./bench/digestbench \
	-files "${DIGEST_FILES:-20000}" \
	-bytes "${DIGEST_BYTES:-1073741824}" \
	-runs "${DIGEST_RUNS:-3}"
