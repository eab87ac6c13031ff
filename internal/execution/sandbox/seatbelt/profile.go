//go:build unix

package seatbelt

import (
	"os"
	"strconv"
	"strings"

	"github.com/loki-sh/loki/internal/canonjson"
	"github.com/loki-sh/loki/internal/execution/sandbox/boundary"
)

// preamble is the fixed head of every profile: deny by default, let the
// build run its own processes and signal only what shares its sandbox,
// allow IP networking but no unix sockets (except the DNS resolver).
var preamble = []string{
	"(version 1)",
	"(deny default)",
	"(allow process-fork process-exec*)",
	"(allow signal (target same-sandbox))",
	"(allow process-info* (target same-sandbox))",
	"(allow sysctl-read)",
	"(allow mach-lookup)",
	"(allow ipc-posix-shm ipc-posix-sem)",
	"(allow network-outbound (remote ip))",
	"(allow network-bind (local ip))",
	"(deny network-outbound (remote unix-socket))",
	`(allow network-outbound (literal "/private/var/run/mDNSResponder"))`,
	";; Preexisting cross-boundary hardlinks share one kernel inode.",
	";; This path policy cannot prove which directory originally created it.",
}

// alwaysMetadata are directories whose metadata every process needs.
var alwaysMetadata = []string{"/var", "/tmp", "/etc", "/dev"}

// devices are granted read-write when present.
var devices = []string{"/dev/null", "/dev/random", "/dev/urandom", "/dev/zero"}

// Devices lists the devices a profile grants when they exist here.
func Devices() []string { return append([]string(nil), devices...) }

// Profile returns the Seatbelt profile confining a build to w. Whether each
// granted path is a directory (subpath) or a file (literal), and which
// devices exist, is read from the filesystem at this moment.
func Profile(w *boundary.Workspace) []byte {
	read := append(w.SystemReadPaths(), w.RuntimeReadPaths()...)
	read = append(read, w.EngineSource(), w.Dir(), w.Spec())
	write := append(w.RuntimeWritePaths(), w.Dir())

	metadata := append([]string(nil), alwaysMetadata...)
	for _, p := range append(append([]string(nil), read...), w.RuntimeWritePaths()...) {
		metadata = append(metadata, boundary.Parents(p)...)
	}

	lines := append([]string(nil), preamble...)
	lines = append(lines, `(allow file-read-metadata file-read-data (literal "/"))`)
	for _, p := range sortedSet(metadata) {
		if p != "/" {
			lines = append(lines, "(allow file-read-metadata (literal "+quote(p)+"))")
		}
	}
	for _, p := range sortedSet(read) {
		lines = append(lines, "(allow file-read* file-map-executable "+filter(p)+")")
	}
	for _, p := range sortedSet(write) {
		lines = append(lines, "(allow file-read* file-write* file-map-executable "+filter(p)+")")
	}
	for _, d := range devices {
		if exists(d) {
			lines = append(lines, "(allow file-read* file-write* (literal "+quote(d)+"))")
		}
	}
	if exists("/dev/fd") {
		lines = append(lines, `(allow file-read* file-write* (subpath "/dev/fd"))`)
	}
	for _, port := range w.ReservedPorts() {
		p := strconv.Itoa(port)
		lines = append(lines,
			`(deny network-outbound (remote tcp "*:`+p+`"))`,
			`(deny network-bind (local tcp "*:`+p+`"))`)
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// quote renders a path as a JSON string with every non-ASCII character
// escaped, which is also a valid SBPL string literal.
func quote(p string) string { return string(canonjson.String(p)) }

// filter grants a directory with everything below it, anything else as
// exactly that path.
func filter(p string) string {
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return "(subpath " + quote(p) + ")"
	}
	return "(literal " + quote(p) + ")"
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
