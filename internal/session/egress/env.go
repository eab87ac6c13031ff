package egress

import (
	"strconv"

	"github.com/loki-sh/loki/internal/session/egress/handoff"
)

// ProxyPort is where the proxy listens on the session's own loopback.
// The session's network namespace is new and empty, so the port is free;
// the peer learns it from HTTP_PROXY and HTTPS_PROXY.
const ProxyPort = handoff.ProxyPort

// ProxyURL is the proxy as the peer's environment names it.
var ProxyURL = "http://127.0.0.1:" + strconv.Itoa(ProxyPort)

// PeerEnv returns env with the proxy variables set (both spellings, as
// curl, Python, Go and Node read one or the other), replacing any the
// caller passed: the proxy is the only way out, so a different one
// could not work. Loopback stays direct. NODE_USE_ENV_PROXY=1 makes a
// recent Node's own fetch (and, later still, http and https) read them
// too; an older Node ignores it.
func PeerEnv(env map[string]string) map[string]string {
	out := make(map[string]string, len(env)+8)
	for k, v := range env {
		out[k] = v
	}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		out[k] = ProxyURL
	}
	delete(out, "ALL_PROXY")
	delete(out, "all_proxy")
	out["NO_PROXY"] = "localhost,127.0.0.1,::1"
	out["no_proxy"] = out["NO_PROXY"]
	out["NODE_USE_ENV_PROXY"] = "1"
	return out
}
