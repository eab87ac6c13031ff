//go:build !linux

// Command lineagebench is Linux only: it measures /proc-based refreshes.
package main

import "fmt"

func main() { fmt.Println("lineagebench: Linux only, skipped") }
