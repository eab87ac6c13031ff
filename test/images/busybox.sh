#!/usr/bin/env bash
# Build a local Docker image from the host's static busybox (no registry is
# needed): /bin/busybox with its applets linked into /bin, and empty /tmp
# /etc /proc /sys /dev. Shared by .ci/run and the tests (testutil.DockerImage).
#
#   test/images/busybox.sh [TAG [--change INSTRUCTION]...]
#
# TAG defaults to loki-test:busybox; each --change is passed to
# `docker import` (e.g. --change 'USER 1000:1000' --change 'WORKDIR /tmp').
# EXTRA_ROOT=DIR copies DIR's contents over the rootfs (e.g. an
# etc/passwd). An image that already exists under TAG is kept: remove it
# to rebuild.
set -euo pipefail
tag=${1:-loki-test:busybox}
shift || true
docker=${DOCKER:-docker}
if "$docker" image inspect "$tag" >/dev/null 2>&1; then
	exit 0
fi
bb=$(command -v busybox) || { echo "busybox.sh: busybox not found (apt-get install busybox-static)" >&2; exit 1; }
if readelf -d "$bb" 2>/dev/null | grep -q 'Dynamic section'; then
	echo "busybox.sh: $bb is dynamically linked (apt-get install busybox-static)" >&2
	exit 1
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/tmp" "$root/etc" "$root/proc" "$root/sys" "$root/dev"
chmod 1777 "$root/tmp"
cp "$bb" "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list); do
	[ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
done
if [ -n "${EXTRA_ROOT:-}" ]; then
	cp -a "$EXTRA_ROOT/." "$root/"
fi
tar -C "$root" -c . | "$docker" import "$@" - "$tag" >/dev/null
