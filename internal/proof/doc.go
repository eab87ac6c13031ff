// Package proof decides whether a build's receipt may be trusted for the
// run that produced it (proof.md; docs/proof.md has the receipt schema).
//
// Verify checks a parsed receipt on its own: its integrity hash over the
// canonical JSON (package canonjson) of everything but "verification", an
// optional detached GPG signature, that its headline is the one its facts
// imply, and that its cost figures are coherent. Snapshot copies the exact
// receipt bytes of a run out of the agent-writable tree into the execution
// record (0400) before anything else reads them, and reports what they
// claim; Bind then compares those claims with the run id minted after the
// start and the digest of the final tree.
//
// Guarantees: a Binding is Bound only when every condition holds at once
// (receipt present and snapshotted, run id equal, tree digest non-empty
// and equal, the receipt's two tree fields agreeing, integrity ok, headline
// consistent); anything that cannot be read, parsed or proven leaves it
// unbound. The receipt is never read through a symlink, never from a FIFO,
// never beyond MaxReceiptSize, and its content never reaches a log.
package proof
