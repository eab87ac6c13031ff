// Package deadline holds end-to-end tests of `loki-supervise deadline`: the
// real binary, real signals, real control files, real broken pipes.
package deadline
