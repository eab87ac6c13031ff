package landlock

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Filesystem access rights (LANDLOCK_ACCESS_FS_*), the kernel's UAPI
// values, kept here so that a ruleset can be made and printed on any OS.
const (
	FSExecute    uint64 = 1 << 0
	FSWriteFile  uint64 = 1 << 1
	FSReadFile   uint64 = 1 << 2
	FSReadDir    uint64 = 1 << 3
	FSRemoveDir  uint64 = 1 << 4
	FSRemoveFile uint64 = 1 << 5
	FSMakeChar   uint64 = 1 << 6
	FSMakeDir    uint64 = 1 << 7
	FSMakeReg    uint64 = 1 << 8
	FSMakeSock   uint64 = 1 << 9
	FSMakeFifo   uint64 = 1 << 10
	FSMakeBlock  uint64 = 1 << 11
	FSMakeSym    uint64 = 1 << 12
	FSRefer      uint64 = 1 << 13 // ABI 2
	FSTruncate   uint64 = 1 << 14 // ABI 3
	FSIoctlDev   uint64 = 1 << 15 // ABI 5
)

// Network access rights (LANDLOCK_ACCESS_NET_*, ABI 4) and scopes
// (LANDLOCK_SCOPE_*, ABI 6).
const (
	NetBindTCP    uint64 = 1 << 0
	NetConnectTCP uint64 = 1 << 1

	ScopeAbstractUnixSocket uint64 = 1 << 0
	ScopeSignal             uint64 = 1 << 1
)

// FileAccess are the rights that apply to a file (not a directory); a
// rule on a file may hold no other.
const FileAccess = FSExecute | FSWriteFile | FSReadFile | FSTruncate | FSIoctlDev

// KnownABI is the newest ABI whose rights this package knows. A newer
// kernel is used at this ABI: rights it added stay unhandled (allowed).
const KnownABI = 7

// HandledFS is every filesystem right ABI abi can handle (that this
// package knows).
func HandledFS(abi int) uint64 {
	if abi < 1 {
		return 0
	}
	h := FSExecute | FSWriteFile | FSReadFile | FSReadDir | FSRemoveDir | FSRemoveFile | FSMakeChar |
		FSMakeDir | FSMakeReg | FSMakeSock | FSMakeFifo | FSMakeBlock | FSMakeSym
	if abi >= 2 {
		h |= FSRefer
	}
	if abi >= 3 {
		h |= FSTruncate
	}
	if abi >= 5 {
		h |= FSIoctlDev
	}
	return h
}

// HandledNet is every network right ABI abi can handle.
func HandledNet(abi int) uint64 {
	if abi >= 4 {
		return NetBindTCP | NetConnectTCP
	}
	return 0
}

// Scopes is every scope ABI abi can set.
func Scopes(abi int) uint64 {
	if abi >= 6 {
		return ScopeAbstractUnixSocket | ScopeSignal
	}
	return 0
}

// PathRule grants Access beneath Path (a directory) or on Path (a file).
type PathRule struct {
	Path   string
	Access uint64
}

// PortRule grants Access on TCP port Port.
type PortRule struct {
	Port   uint16
	Access uint64
}

// Ruleset is a Landlock ruleset: what it handles (denies unless a rule
// grants it), its rules, and its scopes. Make it real with Create.
type Ruleset struct {
	ABI        int
	HandledFS  uint64
	HandledNet uint64
	Scoped     uint64
	Paths      []PathRule
	Ports      []PortRule
}

var fsNames = []string{"execute", "write_file", "read_file", "read_dir", "remove_dir", "remove_file",
	"make_char", "make_dir", "make_reg", "make_sock", "make_fifo", "make_block", "make_sym", "refer",
	"truncate", "ioctl_dev"}

var netNames = []string{"bind_tcp", "connect_tcp"}

var scopeNames = []string{"abstract_unix_socket", "signal"}

func names(mask uint64, table []string) []string {
	out := []string{}
	for i, n := range table {
		if mask&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// FSNames names the filesystem rights in mask, in bit order.
func FSNames(mask uint64) []string { return names(mask, fsNames) }

type pathJSON struct {
	Path   string   `json:"path"`
	Access []string `json:"access"`
}

type portsJSON struct {
	Ports  string   `json:"ports"` // "N" or "N-M"
	Access []string `json:"access"`
}

type rulesetJSON struct {
	ABI        int         `json:"abi"`
	HandledFS  []string    `json:"handled_access_fs"`
	HandledNet []string    `json:"handled_access_net"`
	Scoped     []string    `json:"scoped"`
	Paths      []pathJSON  `json:"path_rules"`
	Ports      []portsJSON `json:"port_rules"`
}

// JSON is the ruleset as indented JSON, ending in a newline: rights by
// their kernel names, paths in the order given, consecutive ports with the
// same rights as one range. It is what a reviewer reads and what a record
// hashes.
func (r *Ruleset) JSON() []byte {
	j := rulesetJSON{
		ABI: r.ABI, HandledFS: names(r.HandledFS, fsNames), HandledNet: names(r.HandledNet, netNames),
		Scoped: names(r.Scoped, scopeNames), Paths: []pathJSON{}, Ports: []portsJSON{},
	}
	for _, p := range r.Paths {
		j.Paths = append(j.Paths, pathJSON{p.Path, names(p.Access, fsNames)})
	}
	ports := slices.Clone(r.Ports)
	slices.SortFunc(ports, func(a, b PortRule) int { return int(a.Port) - int(b.Port) })
	for i := 0; i < len(ports); {
		k := i
		for k+1 < len(ports) && ports[k+1].Port == ports[k].Port+1 && ports[k+1].Access == ports[i].Access {
			k++
		}
		span := strconv.Itoa(int(ports[i].Port))
		if k > i {
			span += "-" + strconv.Itoa(int(ports[k].Port))
		}
		j.Ports = append(j.Ports, portsJSON{span, names(ports[i].Access, netNames)})
		i = k + 1
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		panic(err) // plain strings and ints: cannot fail
	}
	return append(b, '\n')
}

// Check refuses a ruleset the ABI it names cannot express: a right or
// scope that ABI does not handle, or a rule granting a right the ruleset
// does not handle (the kernel refuses those with EINVAL).
func (r *Ruleset) Check() error {
	if bad := r.HandledFS &^ HandledFS(r.ABI); bad != 0 {
		return fmt.Errorf("%w: ABI %d cannot handle %s", ErrUnavailable, r.ABI, strings.Join(FSNames(bad), ","))
	}
	if bad := r.HandledNet &^ HandledNet(r.ABI); bad != 0 {
		return fmt.Errorf("%w: ABI %d cannot handle %s", ErrUnavailable, r.ABI, strings.Join(names(bad, netNames), ","))
	}
	if bad := r.Scoped &^ Scopes(r.ABI); bad != 0 {
		return fmt.Errorf("%w: ABI %d cannot scope %s", ErrUnavailable, r.ABI, strings.Join(names(bad, scopeNames), ","))
	}
	for _, p := range r.Paths {
		if p.Access == 0 || p.Access&^r.HandledFS != 0 {
			return fmt.Errorf("landlock: rule for %s grants unhandled or no rights", p.Path)
		}
	}
	for _, p := range r.Ports {
		if p.Access == 0 || p.Access&^r.HandledNet != 0 {
			return fmt.Errorf("landlock: rule for port %d grants unhandled or no rights", p.Port)
		}
	}
	return nil
}
