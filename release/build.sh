#!/usr/bin/env bash
# release/build.sh OUT_DIR [OS/ARCH...]: the release, as `make release` makes it.
#
# One tarball per platform, loki-VERSION-OS-ARCH.tar.gz, holding static
# binaries (bin/), the manual pages and shell completions generated from
# the command definitions (share/), and README.md; then SHA256SUMS. The
# output is reproducible: -trimpath, no VCS or time stamp in the binaries
# (the Makefile's STAMP names the commit), and the archives' entries are
# sorted, owned by 0:0 and dated at the commit's time, gzip without a
# name or time. The same commit gives the same bytes twice.
# darwin gets loki-supervise and loki-kube: loki-init is a Linux PID 1.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: release/build.sh OUT_DIR [OS/ARCH...]}
shift
platforms=("$@")
[ ${#platforms[@]} -gt 0 ] || platforms=(linux/amd64 linux/arm64 darwin/arm64)
: "${VERSION:?set by make}" "${STAMP:?set by make}"
epoch=$(git log -1 --format=%ct 2>/dev/null || echo 0)
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

build() { # GOOS GOARCH PKG OUT [TAGS]
	CGO_ENABLED=0 GOOS=$1 GOARCH=$2 go build -trimpath -buildvcs=false \
		-tags "${5:-}" -ldflags "-s -w $STAMP" -o "$4" "$3"
}

# The pages and completions come from this machine's own build.
host="$work/host"
build "$(go env GOOS)" "$(go env GOARCH)" ./cmd/loki-supervise "$host/loki-supervise" urfave_cli_no_docs
build "$(go env GOOS)" "$(go env GOARCH)" ./cmd/loki-init "$host/loki-init"
share="$work/share"
mkdir -p "$share/man/man1" "$share/man/man8" "$share/bash-completion/completions" \
	"$share/zsh/site-functions" "$share/fish/vendor_completions.d"
"$host/loki-supervise" man >"$share/man/man1/loki-supervise.1"
"$host/loki-supervise" man --init "$host/loki-init" >"$share/man/man8/loki-init.8"
"$host/loki-supervise" completion bash >"$share/bash-completion/completions/loki-supervise"
"$host/loki-supervise" completion zsh >"$share/zsh/site-functions/_loki-supervise"
"$host/loki-supervise" completion fish >"$share/fish/vendor_completions.d/loki-supervise.fish"

for p in "${platforms[@]}"; do
	os=${p%/*} arch=${p#*/}
	name="loki-$VERSION-$os-$arch"
	dir="$work/$name"
	mkdir -p "$dir/bin"
	build "$os" "$arch" ./cmd/loki-supervise "$dir/bin/loki-supervise" urfave_cli_no_docs
	build "$os" "$arch" ./cmd/loki-kube "$dir/bin/loki-kube" urfave_cli_no_docs
	if [ "$os" = linux ]; then
		build "$os" "$arch" ./cmd/loki-init "$dir/bin/loki-init"
	fi
	ln -s loki-supervise "$dir/bin/loki-build-supervisor"
	cp -r "$share" "$dir/share"
	cp README.md "$dir/README.md"
	tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
		--mode='u+rwX,go+rX,go-w' -C "$work" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
	echo "release: $out/$name.tar.gz"
done
(cd "$out" && sha256sum -- loki-"$VERSION"-*.tar.gz >SHA256SUMS)
echo "release: $out/SHA256SUMS"
