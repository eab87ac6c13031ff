package confine

// Knob is one thing a session can ask of its backend beyond the
// defaults; its value is the flag a user writes, so a refusal names it.
// Every backend declares, for every knob, whether it gives it
// (session.Capabilities); a knob it does not declare is refused.
type Knob string

// The knobs, in the order a refusal is looked for. --allow-host comes
// before --network loopback, which it implies, so that a backend without
// a proxy names what the user typed.
const (
	KnobUser            Knob = "--user"
	KnobUserNSPrivate   Knob = "--userns private"
	KnobUserNSHost      Knob = "--userns host"
	KnobAllowHost       Knob = "--allow-host"
	KnobNetworkLoopback Knob = "--network loopback"
	KnobNetworkNone     Knob = "--network none"
	KnobFSConfined      Knob = "--fs confined"
	KnobFSHost          Knob = "--fs host"
	KnobWrite           Knob = "--write"
	KnobHide            Knob = "--hide"
	// KnobProtect: paths kept read-only inside the writable ones (git
	// hooks, shell rc files: agentfs); asked by default, opted out of
	// per path with --write PATH.
	KnobProtect   Knob = "protected paths"
	KnobSocket    Knob = "--socket"
	KnobTmpSize   Knob = "--tmp-size"
	KnobPidsMax   Knob = "--pids-max"
	KnobMemoryMax Knob = "--memory-max"
	KnobCPUMax    Knob = "--cpu-max"
	// KnobTTY is the session's -t, not a field of Policy: it needs a
	// backend that runs loki-init on a devpts of its own.
	KnobTTY Knob = "--tty"
)

// Knobs lists every knob, in refusal order.
var Knobs = []Knob{
	KnobUser, KnobUserNSPrivate, KnobUserNSHost, KnobAllowHost,
	KnobNetworkLoopback, KnobNetworkNone, KnobFSConfined, KnobFSHost,
	KnobWrite, KnobHide, KnobProtect, KnobSocket, KnobTmpSize, KnobPidsMax, KnobMemoryMax, KnobCPUMax, KnobTTY,
}

// Asks lists the knobs p asks for, in refusal order. The defaults ask
// for none: the host's network, the backend's own filesystem view and
// user namespace, the default pids limit (best effort where there is no
// cgroup).
func (p Policy) Asks() []Knob {
	asked := map[Knob]bool{
		KnobUser:            p.User != nil,
		KnobUserNSPrivate:   p.UserNS == UserNSPrivate,
		KnobUserNSHost:      p.UserNS == UserNSHost,
		KnobAllowHost:       len(p.Allow) > 0,
		KnobNetworkLoopback: p.Network == NetworkLoopback,
		KnobNetworkNone:     p.Network == NetworkNone,
		KnobFSConfined:      p.FS == FSConfined,
		KnobFSHost:          p.FS == FSHost,
		KnobWrite:           len(p.Write) > 0,
		KnobHide:            len(p.Hide) > 0,
		KnobProtect:         len(p.Protect) > 0,
		KnobSocket:          len(p.Sockets) > 0,
		KnobTmpSize:         p.Resources.TmpSize > 0,
		KnobPidsMax:         p.Resources.PidsMax > 0,
		KnobMemoryMax:       p.Resources.MemoryMax > 0,
		KnobCPUMax:          p.Resources.CPU != nil,
	}
	var ks []Knob
	for _, k := range Knobs {
		if asked[k] {
			ks = append(ks, k)
		}
	}
	return ks
}

// Sample returns a valid policy that asks for k (with --allow-host, the
// loopback network it implies), and whether the session's -t is asked
// instead: what a test or a report asks of a backend, knob by knob.
func Sample(k Knob) (p Policy, tty bool) {
	switch k {
	case KnobUser:
		p.User = &User{UID: 65534, GID: 65534}
	case KnobUserNSPrivate:
		p.UserNS = UserNSPrivate
	case KnobUserNSHost:
		p.UserNS = UserNSHost
	case KnobAllowHost:
		p.Allow, p.Network = []string{"api.example.com"}, NetworkLoopback
	case KnobNetworkLoopback:
		p.Network = NetworkLoopback
	case KnobNetworkNone:
		p.Network = NetworkNone
	case KnobFSConfined:
		p.FS = FSConfined
	case KnobFSHost:
		p.FS = FSHost
	case KnobWrite:
		p.Write = []string{"/srv/write"}
	case KnobHide:
		p.Hide = []string{"/srv/hide"}
	case KnobProtect:
		p.Protect = []string{"/srv/work/.git/hooks"}
	case KnobSocket:
		p.Sockets = []string{"/srv/agent.sock"}
	case KnobTmpSize:
		p.Resources.TmpSize = 1 << 30
	case KnobPidsMax:
		p.Resources.PidsMax = 100
	case KnobMemoryMax:
		p.Resources.MemoryMax = 1 << 30
	case KnobCPUMax:
		p.Resources.CPU = &CPUMax{Quota: CPUPeriod / 2, Period: CPUPeriod}
	case KnobTTY:
		tty = true
	}
	return p, tty
}
