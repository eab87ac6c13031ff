package isolation_test

import (
	"errors"
	"os"
	"testing"

	"github.com/loki-sh/loki/internal/session"
	"github.com/loki-sh/loki/internal/session/confine"
	"github.com/loki-sh/loki/internal/session/isolation/docker"
	"github.com/loki-sh/loki/internal/session/isolation/kubernetes"
	"github.com/loki-sh/loki/internal/session/isolation/namespace"
	"github.com/loki-sh/loki/internal/session/isolation/none"
	"github.com/loki-sh/loki/internal/session/isolation/oci"
	"github.com/loki-sh/loki/internal/session/seccomp"
)

const prefix = "confinement not available: --isolation "

// refusals is every knob × every backend: "" where the backend gives the
// knob, else the one line a user reads. A knob missing from a backend's
// row fails the test, as does a backend that does not declare it.
func refusals() map[string]map[confine.Knob]string {
	root := os.Geteuid() == 0
	given := func(string) map[confine.Knob]string {
		m := map[confine.Knob]string{}
		for _, k := range confine.Knobs {
			m[k] = ""
		}
		return m
	}
	ns := given(namespace.Name)
	if !root {
		ns[confine.KnobUserNSHost] = prefix + "namespace cannot give --userns host; it needs root: run loki-supervise as root, or drop --userns (without root the agent always gets a user namespace)"
	}
	o := given(oci.Name)
	o[confine.KnobAllowHost] = prefix + "oci cannot give --allow-host; it runs no egress proxy; use --isolation namespace"
	o[confine.KnobFSHost] = prefix + "oci cannot give --fs host; the container sees only --rootfs; use --writable-rootfs and --bind SRC:DST"
	if !root {
		o[confine.KnobUserNSPrivate] = prefix + "oci cannot give --userns private; it needs root (the runtime maps a block of ids): run as root, or use --isolation namespace"
	}
	if !oci.PidsControllerAvailable() {
		o[confine.KnobPidsMax] = prefix + "oci cannot give --pids-max; this host has no pids cgroup controller; drop --pids-max (loki-supervise doctor)"
	}
	d := given(docker.Name)
	d[confine.KnobUserNSPrivate] = prefix + "docker cannot give --userns private; use --user UID, or the daemon's userns-remap"
	d[confine.KnobAllowHost] = prefix + "docker cannot give --allow-host; it runs no egress proxy; use --isolation namespace"
	d[confine.KnobFSHost] = prefix + "docker cannot give --fs host; the container sees only its image; use --bind SRC:DST and --writable-rootfs, or --isolation namespace"
	n := map[confine.Knob]string{confine.KnobUserNSHost: "", confine.KnobFSHost: ""}
	for _, k := range []confine.Knob{confine.KnobUser, confine.KnobNetworkLoopback, confine.KnobNetworkNone, confine.KnobFSConfined, confine.KnobWrite, confine.KnobHide, confine.KnobProtect} {
		n[k] = prefix + "none cannot give " + string(k) + "; use --isolation namespace or oci, which apply it"
	}
	for _, k := range []confine.Knob{confine.KnobPidsMax, confine.KnobMemoryMax, confine.KnobCPUMax} {
		n[k] = prefix + "none cannot give " + string(k) + "; it makes no cgroup; use --isolation namespace, oci or docker, which apply it"
	}
	n[confine.KnobUserNSPrivate] = prefix + "none cannot give --userns private; use --isolation namespace, or --user UID to run the agent unprivileged"
	n[confine.KnobAllowHost] = prefix + "none cannot give --allow-host; it runs no egress proxy; use --isolation namespace"
	n[confine.KnobSocket] = ""
	n[confine.KnobTmpSize] = prefix + "none cannot give --tmp-size; it has no private /tmp; use --isolation namespace, oci or docker, which have one"
	n[confine.KnobTTY] = prefix + "none cannot give --tty; it runs no loki-init to open one; use --isolation namespace, oci or docker"
	k := given(kubernetes.Name)
	for knob, fix := range map[confine.Knob]string{
		confine.KnobUserNSPrivate:   "hostUsers: false is stripped by an API server without the UserNamespacesSupport gate; use --user UID[:GID]",
		confine.KnobAllowHost:       "a Pod runs no egress proxy; use a NetworkPolicy that allows only those hosts",
		confine.KnobNetworkLoopback: "a Pod's network is the cluster's; use a NetworkPolicy that denies egress",
		confine.KnobNetworkNone:     "a Pod's network is the cluster's; use a NetworkPolicy that denies egress",
		confine.KnobFSHost:          "the container sees only its image; use --writable-rootfs and --bind SRC:DST",
		confine.KnobSocket:          "a Pod sees the node's sockets only through volumes; mount one with --bind SRC:DST",
		confine.KnobTmpSize:         "a Pod's /tmp is its image's or an emptyDir; set the emptyDir's sizeLimit in the Pod spec",
		confine.KnobProtect:         "the agent's files are its image's and its volumes'; mount what must stay read-only with --bind SRC:DST:ro",
		confine.KnobPidsMax:         "a Pod has no pids limit of its own; set the kubelet's podPidsLimit (e.g. 4096) and drop --pids-max",
		confine.KnobTTY:             "attach has no terminal mode; drop --tty",
	} {
		k[knob] = prefix + "kubernetes cannot give " + string(knob) + "; " + fix
	}
	return map[string]map[confine.Knob]string{namespace.Name: ns, oci.Name: o, docker.Name: d, none.Name: n, kubernetes.Name: k}
}

// declarer is what the table needs of a backend: its name and its
// capabilities. pod-spec's Pod declares them too, without being a
// session backend.
type declarer interface {
	Name() string
	Capabilities() session.Capabilities
}

type pod struct{}

func (pod) Name() string                       { return kubernetes.Name }
func (pod) Capabilities() session.Capabilities { return kubernetes.Capabilities() }

func backends() []declarer {
	return []declarer{&namespace.Backend{}, &oci.Backend{}, &docker.Backend{}, none.Backend{}, pod{}}
}

// TestEveryKnobEveryBackend: each backend declares each knob, and Admit
// gives or refuses it with the line above (exit 127's error).
func TestEveryKnobEveryBackend(t *testing.T) {
	want := refusals()
	for _, b := range backends() {
		caps := b.Capabilities()
		row, ok := want[b.Name()]
		if !ok {
			t.Errorf("backend %s has no row in refusals()", b.Name())
			continue
		}
		if len(caps.Knobs) != len(confine.Knobs) {
			t.Errorf("%s declares %d knobs, confine.Knobs has %d", b.Name(), len(caps.Knobs), len(confine.Knobs))
		}
		for _, k := range confine.Knobs {
			if _, ok := caps.Knobs[k]; !ok {
				t.Errorf("%s does not declare %s: add it to its Capabilities (given or refused with the alternative)", b.Name(), k)
			}
			line, ok := row[k]
			if !ok {
				t.Errorf("refusals()[%s] has no entry for %s", b.Name(), k)
				continue
			}
			p, tty := confine.Sample(k)
			err := session.Admit(b.Name(), caps, p, tty)
			switch {
			case line == "" && err != nil:
				t.Errorf("%s × %s: refused (%v), want given", b.Name(), k, err)
			case line != "" && err == nil:
				t.Errorf("%s × %s: given, want %q", b.Name(), k, line)
			case err != nil && (err.Error() != line || !errors.Is(err, confine.ErrUnsupported)):
				t.Errorf("%s × %s:\n got %q\nwant %q (wrapping ErrUnsupported)", b.Name(), k, err, line)
			}
		}
	}
}

// TestDefaultPolicyEverywhere: the default policy asks nothing, so
// every backend admits it.
func TestDefaultPolicyEverywhere(t *testing.T) {
	for _, b := range backends() {
		if err := session.Admit(b.Name(), b.Capabilities(), confine.Policy{}, false); err != nil {
			t.Errorf("%s refuses the default policy: %v", b.Name(), err)
		}
	}
}

// TestSyscallPolicyDeclared: every backend that runs loki-init puts its
// peer under the session's syscall policy; none, which runs the peer as
// its own child, cannot.
func TestSyscallPolicyDeclared(t *testing.T) {
	for _, b := range backends() {
		c := b.Capabilities()
		want := "none"
		if c.Init {
			want = seccomp.Name
		}
		if c.Syscalls != want {
			t.Errorf("%s: Syscalls %q, want %q: the policy exactly where loki-init runs", b.Name(), c.Syscalls, want)
		}
	}
}

// TestSharedPidsLimit: where loki-init always shares the pids limit
// (oci, docker), a --pids-max below what its threads need is refused
// before anything starts; namespace decides at start (cgroup v1 keeps
// the init outside the peer's limit).
func TestSharedPidsLimit(t *testing.T) {
	small := confine.Policy{Resources: confine.Resources{PidsMax: confine.MinSharedPidsMax - 1}}
	enough := confine.Policy{Resources: confine.Resources{PidsMax: confine.MinSharedPidsMax}}
	for _, b := range []session.Backend{&oci.Backend{}, &docker.Backend{}} {
		caps := b.Capabilities()
		if !caps.Knobs[confine.KnobPidsMax].Given {
			continue // no pids controller here: refused whatever the value
		}
		want := prefix + b.Name() + " cannot give --pids-max 31 (loki-init's own threads count against it); use --pids-max 32 or more"
		if err := session.Admit(b.Name(), caps, small, false); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", b.Name(), err, want)
		}
		if err := session.Admit(b.Name(), caps, enough, false); err != nil {
			t.Errorf("%s: --pids-max %d: %v", b.Name(), confine.MinSharedPidsMax, err)
		}
	}
	if err := session.Admit(namespace.Name, (&namespace.Backend{}).Capabilities(), small, false); err != nil {
		t.Errorf("namespace refused --pids-max %d before start: %v", confine.MinSharedPidsMax-1, err)
	}
}
