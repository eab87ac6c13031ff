#!/usr/bin/env bash
# make bench: run every benchmark script in bench/ (bench/*.sh other than
# this dispatcher and soak.sh), in name order, each printing its own table
# of ratios. Pass names to run a subset: bench/run.sh init digest
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export LOKI_BIN_DIR=${LOKI_BIN_DIR:-$(cd "$here/.." && pwd)/bin}
want=("$@")
for script in "$here"/*.sh; do
	name=$(basename "$script" .sh)
	case $name in run|soak) continue ;; esac
	if [ ${#want[@]} -gt 0 ] && [[ ! " ${want[*]} " =~ " $name " ]]; then continue; fi
	echo "== bench: $name"
	bash "$script"
	echo
done
