// Package policyfile reads a session's policy from a TOML file, the
// same settings the session flags hold, and says where each came from.
//
// A file is strict: an unknown key, a value of the wrong type or a
// profile that does not exist is refused with the file, the line and the
// key named, never skipped. The file never decides more than the flags
// could: each setting is handed to the flag of the same name, so it is
// parsed and validated by exactly the code a flag is, and a flag given
// on the command line overrides the file. Built-in profiles (claude,
// codex, gemini) are files like any other, shipped in the binary.
package policyfile
