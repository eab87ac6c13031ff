//go:build !linux

// Command rttbench measures stdio round trips; it needs Linux.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "rttbench: Linux only")
	os.Exit(1)
}
