//go:build linux && !amd64 && !arm64

package seccomp

// abis on other architectures: none known here, so Install refuses
// (docs/confinement.md says so).
var abis []abi
