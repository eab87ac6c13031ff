// Package version says which build of loki is running: the module
// version, the VCS commit and whether its tree was dirty, the Go version
// and the platform, as the Go toolchain embedded them in the binary. It
// reads only the binary's own build information and the standard
// library, so both mains link it, loki-init included: a bug report can
// always name what ran, even from inside an image that holds nothing
// else of loki.
package version
