// Package attach is the owner's side of a session in the Pod of package
// kubernetes, over the CRI the kubelet drives: it holds the lease-holder's
// attach stream open (the holder renews only while it is), writes the
// launch prelude and then the caller's bytes on the agent's attach stream,
// relays the agent's stdout and stderr, and returns the agent container's
// exit code.
//
// Guarantee: output is never silently short. The attach counts as
// complete only when the streaming server sent its final Success status
// (after every byte it relayed, on the same connection) and the agent
// container has exited; anything else is ErrCut (125). The stream is the
// remote command protocol v4 over SPDY, the one a kubelet and an API
// server speak too.
package attach
