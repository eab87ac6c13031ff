// Package release proves the release as a user meets it: `make release`
// gives the same bytes twice, and its tarball, unpacked in an empty
// directory, runs the README's quick start with nothing else of the
// repository beside it.
package release
