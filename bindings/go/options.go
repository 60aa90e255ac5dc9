package shoal

// #include <shoal.h>
import "C"

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Option sets one of a node's options before Start (New applies them).
// docs/options.md lists every option; WithOption sets any of them by name.
type Option func(*Node) error

// WithOption sets the option key to value, as `--key value` does.
func WithOption(key, value string) Option {
	return func(n *Node) error { return n.Set(key, value) }
}

// WithEnv applies the SHOAL_* variables of env (os.Environ()).
func WithEnv(env []string) Option {
	return func(n *Node) error { return n.LoadEnv(env) }
}

// WithConfigFile applies a config file.
func WithConfigFile(path string) Option {
	return func(n *Node) error { return n.LoadFile(path) }
}

// WithName sets the node's human name, unique in the cluster.
func WithName(name string) Option { return WithOption("name", name) }

// WithCluster sets the cluster's name.
func WithCluster(name string) Option { return WithOption("cluster", name) }

// WithDataDir sets where the node keeps its id, term and state.
func WithDataDir(path string) Option { return WithOption("data-dir", path) }

// WithBind sets the host:port of gossip and frames; port 0: any free port.
func WithBind(addr string) Option { return WithOption("bind", addr) }

// WithAdvertise sets the address other nodes reach this one at.
func WithAdvertise(addr string) Option { return WithOption("advertise", addr) }

// WithBeaconPort sets the UDP port of discovery beacons; 0 turns them off.
func WithBeaconPort(port uint16) Option {
	return WithOption("beacon-port", strconv.Itoa(int(port)))
}

// WithJoin sets the seed addresses (host:port) to join through.
func WithJoin(seeds ...string) Option { return WithOption("join", strings.Join(seeds, ",")) }

// WithKeyFile sets the file holding the cluster key.
func WithKeyFile(path string) Option { return WithOption("key-file", path) }

// WithCapacity sets the node's relative size for the assignor.
func WithCapacity(capacity uint32) Option {
	return WithOption("capacity", strconv.FormatUint(uint64(capacity), 10))
}

// WithSlots sets the most tasks this node runs at once (0: no limit).
func WithSlots(slots uint32) Option {
	return WithOption("slots", strconv.FormatUint(uint64(slots), 10))
}

// WithLabels sets the labels jobs may require of the node.
func WithLabels(labels map[string]string) Option {
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return WithOption("labels", strings.Join(pairs, ","))
}

// WithExpect sets how many members the first leader of a new cluster waits
// for.
func WithExpect(members uint32) Option {
	return WithOption("expect", strconv.FormatUint(uint64(members), 10))
}

// WithProfile sets the timing profile: "lan" or "loopback".
func WithProfile(profile string) Option { return WithOption("profile", profile) }

// WithAcceptableLag sets how far behind a learner may be and be caught up.
func WithAcceptableLag(lag uint64) Option {
	return WithOption("acceptable-lag", strconv.FormatUint(lag, 10))
}

// WithLeaveTimeout sets how long a graceful leave may take.
func WithLeaveTimeout(d time.Duration) Option {
	return WithOption("leave-timeout", fmt.Sprintf("%dms", d.Milliseconds()))
}

// OptionSpec describes one option a node takes.
type OptionSpec struct {
	Key     string // "data-dir"; its variable is SHOAL_DATA_DIR
	Type    string // "uint32", "duration", "bool", "host:port list", ...
	Default string // the default, as Get gives it
	Range   string // "1..1000000", "quorum|available"; "" when the type says all
	Doc     string // one line
}

// Options lists the options a node takes, in the order docs/options.md
// lists them.
func Options() []OptionSpec {
	count := int(C.shoal_option_count())
	specs := make([]OptionSpec, 0, count)
	for i := 0; i < count; i++ {
		spec := C.shoal_option_spec_t{size: C.sizeof_shoal_option_spec_t}
		if C.shoal_option_at(C.size_t(i), &spec) != 0 {
			break
		}
		specs = append(specs, OptionSpec{
			Key:     C.GoString(spec.key),
			Type:    C.GoString(spec._type),
			Default: C.GoString(spec.default_text),
			Range:   C.GoString(spec._range),
			Doc:     C.GoString(spec.doc),
		})
	}
	return specs
}
