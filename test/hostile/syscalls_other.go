//go:build !linux

package main

import (
	"fmt"
	"os"
)

func plant(string) { fmt.Fprintln(os.Stderr, "hostile: plant is Linux's"); os.Exit(2) }
func surface()     { fmt.Fprintln(os.Stderr, "hostile: surface is Linux's"); os.Exit(2) }
func deny(int)     { fmt.Fprintln(os.Stderr, "hostile: deny is Linux's"); os.Exit(2) }
func denyWatch()   { fmt.Fprintln(os.Stderr, "hostile: deny-watch is Linux's"); os.Exit(2) }
