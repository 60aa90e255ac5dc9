// Package shoal embeds a shoal node (libshoal, the peer-to-peer worker
// runtime) in a Go program: the node joins a cluster, and tells the program
// through Events what to do with its tasks; the program reports how they go.
//
// The package wraps the C API of include/shoal.h with cgo; libshoal is found
// by pkg-config. No C memory is handed to callers: every value is copied
// into Go values. A Node is safe to use from many goroutines.
package shoal

/*
#cgo pkg-config: shoal
#include <shoal.h>
#include <stdlib.h>
*/
import "C"

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// whySize is the room given to the library's one-line reasons.
const whySize = C.SHOAL_REASON_TEXT

// noDeadline is the wait given to the library when the context has no
// deadline: a day, in milliseconds; the context's cancellation still ends
// it at any time.
const noDeadline = 24 * 60 * 60 * 1000

// eventBuffer is how many events wait in the channel for the program.
const eventBuffer = 256

// Version is the version of the libshoal the program runs against.
func Version() string { return C.GoString(C.shoal_version()) }

// Node is one member of a cluster. Make it with New, start it with Start,
// read Events, and Leave and Close it at the end.
type Node struct {
	// mu guards c: every call holds it for reading; Close holds it for
	// writing to destroy the node once no call uses it.
	mu      sync.RWMutex
	c       *C.shoal_node_t
	started bool
	// closing is closed first by Close: it cancels the calls that wait and
	// stops the event pump.
	closing   chan struct{}
	closeOnce sync.Once
	events    chan Event
	file      *os.File // the dup of the node's event fd
	pump      sync.WaitGroup
	// pumpOff keeps the pump from starting (the package's benchmark
	// reads the queue itself).
	pumpOff bool
}

// New makes a node with every option at its default, then applies opts in
// order. It is not started.
func New(opts ...Option) (*Node, error) {
	c := C.shoal_node_new()
	if c == nil {
		return nil, &Error{Op: "new", Reason: "out of memory"}
	}
	n := &Node{c: c, closing: make(chan struct{}), events: make(chan Event, eventBuffer)}
	for _, opt := range opts {
		if err := opt(n); err != nil {
			C.shoal_node_destroy(&n.c)
			return nil, err
		}
	}
	return n, nil
}

// why is a buffer for the library's reason, in C memory, freed by free.
type why struct{ p *C.char }

func newWhy() why {
	p := (*C.char)(C.calloc(1, whySize))
	return why{p}
}

func (w why) err(op string) error {
	reason := ""
	if w.p != nil {
		reason = C.GoString(w.p)
	}
	return &Error{Op: op, Reason: reason}
}

func (w why) free() { C.free(unsafe.Pointer(w.p)) }

// acquire takes the node for a call; release gives it back.
func (n *Node) acquire() (*C.shoal_node_t, error) {
	n.mu.RLock()
	if n.c == nil {
		n.mu.RUnlock()
		return nil, ErrClosed
	}
	return n.c, nil
}

func (n *Node) release() { n.mu.RUnlock() }

// Set sets the option key to value, as the flag --key value does
// (docs/options.md lists every key). Only before Start.
func (n *Node) Set(key, value string) error {
	if err := noNUL("set "+key, key, value); err != nil {
		return err
	}
	c, err := n.acquire()
	if err != nil {
		return err
	}
	defer n.release()
	ckey, cvalue, w := C.CString(key), C.CString(value), newWhy()
	defer C.free(unsafe.Pointer(ckey))
	defer C.free(unsafe.Pointer(cvalue))
	defer w.free()
	if C.shoal_node_set(c, ckey, cvalue, w.p, whySize) != 0 {
		return w.err("set " + key)
	}
	return nil
}

// Get gives the option key's value as text: the default when it was not
// set.
func (n *Node) Get(key string) (string, error) {
	if err := noNUL("get", key); err != nil {
		return "", err
	}
	c, err := n.acquire()
	if err != nil {
		return "", err
	}
	defer n.release()
	ckey, w := C.CString(key), newWhy()
	defer C.free(unsafe.Pointer(ckey))
	defer w.free()
	value := (*C.char)(C.calloc(1, C.SHOAL_OPTION_TEXT))
	defer C.free(unsafe.Pointer(value))
	if C.shoal_node_get(c, ckey, value, C.SHOAL_OPTION_TEXT, w.p, whySize) != 0 {
		return "", w.err("get " + key)
	}
	return C.GoString(value), nil
}

// LoadFile applies a config file, all or nothing.
func (n *Node) LoadFile(path string) error {
	if err := noNUL("load", path); err != nil {
		return err
	}
	c, err := n.acquire()
	if err != nil {
		return err
	}
	defer n.release()
	cpath, w := C.CString(path), newWhy()
	defer C.free(unsafe.Pointer(cpath))
	defer w.free()
	if C.shoal_node_load_file(c, cpath, w.p, whySize) != 0 {
		return w.err("load " + path)
	}
	return nil
}

// LoadEnv applies the SHOAL_* variables of env (as os.Environ gives them),
// all or nothing.
func (n *Node) LoadEnv(env []string) error {
	if err := noNUL("environment", env...); err != nil {
		return err
	}
	c, err := n.acquire()
	if err != nil {
		return err
	}
	defer n.release()
	// The array and its strings live in C memory: C keeps no Go pointer.
	size := C.size_t(len(env)+1) * C.size_t(unsafe.Sizeof((*C.char)(nil)))
	array := (*[1 << 28]*C.char)(C.calloc(1, size))[: len(env)+1 : len(env)+1]
	defer C.free(unsafe.Pointer(&array[0]))
	for i, kv := range env {
		array[i] = C.CString(kv)
		defer C.free(unsafe.Pointer(array[i]))
	}
	w := newWhy()
	defer w.free()
	if C.shoal_node_load_env(c, &array[0], w.p, whySize) != 0 {
		return w.err("environment")
	}
	return nil
}

// Start opens the data directory, binds the ports, joins the seeds and
// runs the node; its events then come on Events.
func (n *Node) Start() error {
	c, err := n.acquire()
	if err != nil {
		return err
	}
	defer n.release()
	w := newWhy()
	defer w.free()
	if C.shoal_node_start(c, w.p, whySize) != 0 {
		return w.err("start")
	}
	if n.pumpOff {
		n.started = true
		return nil
	}
	// The pump waits on a dup of the node's event fd in Go's netpoller: no
	// OS thread is held while no event waits. Closing the dup ends it.
	fd, err := syscall.Dup(int(C.shoal_node_fd(c)))
	if err != nil {
		return &Error{Op: "start", Reason: "dup of the event fd: " + err.Error()}
	}
	syscall.CloseOnExec(fd)
	n.file = os.NewFile(uintptr(fd), "shoal-events")
	raw, err := n.file.SyscallConn()
	if err != nil {
		n.file.Close()
		n.file = nil
		return &Error{Op: "start", Reason: "event fd: " + err.Error()}
	}
	n.started = true
	n.pump.Add(1)
	go n.pumpEvents(c, raw)
	return nil
}

// Close stops the node at once, without leaving (Leave first for a
// graceful exit), and frees it: calls that wait return, the event channel
// is closed, and no goroutine of the node is left. Idempotent.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		close(n.closing) // cancels the waits that hold the node
		n.mu.Lock()
		defer n.mu.Unlock()
		if n.file != nil {
			n.file.Close() // ends the pump's wait
			n.pump.Wait()
			n.file = nil
		}
		close(n.events)
		C.shoal_node_destroy(&n.c)
	})
	return nil
}

// ID is this node's id, 32 hex digits (after Start).
func (n *Node) ID() (string, error) {
	c, err := n.acquire()
	if err != nil {
		return "", err
	}
	defer n.release()
	var id [C.SHOAL_NODE_ID_TEXT]C.char
	if C.shoal_node_id(c, &id[0]) != 0 {
		return "", ErrNotStarted
	}
	return C.GoString(&id[0]), nil
}

// Port is the port the node's sockets are bound to (useful with port 0).
func (n *Node) Port() (uint16, error) {
	c, err := n.acquire()
	if err != nil {
		return 0, err
	}
	defer n.release()
	var port C.uint16_t
	if C.shoal_node_port(c, &port) != 0 {
		return 0, ErrNotStarted
	}
	return uint16(port), nil
}

// Reopen opens the node's event log (the events option) again by its
// name, as after logrotate renamed it: the lines that follow go to a new
// file of that name. A file that cannot be opened leaves the old one in
// use, and the error says why. Without an event log it does nothing.
func (n *Node) Reopen() error {
	c, err := n.acquire()
	if err != nil {
		return err
	}
	defer n.release()
	w := newWhy()
	defer w.free()
	if C.shoal_node_reopen(c, w.p, whySize) != 0 {
		return w.err("reopen")
	}
	return nil
}

// LeaseUntil is when the lease the program was told it holds ends, on the
// monotonic clock in milliseconds (CLOCK_MONOTONIC); 0 while it is lost.
func (n *Node) LeaseUntil() (uint64, error) {
	c, err := n.acquire()
	if err != nil {
		return 0, err
	}
	defer n.release()
	var until C.uint64_t
	if C.shoal_node_lease(c, &until) != 0 {
		return 0, ErrNotStarted
	}
	return uint64(until), nil
}

// timeoutMs is what is left of ctx's deadline, in milliseconds rounded up
// (so that the library gives up no sooner than the context ends), or def
// when it has none.
func timeoutMs(ctx context.Context, def uint64) C.uint64_t {
	deadline, ok := ctx.Deadline()
	if !ok {
		return C.uint64_t(def)
	}
	left := time.Until(deadline)
	if left <= 0 {
		return 1
	}
	return C.uint64_t((left + time.Millisecond - 1) / time.Millisecond)
}

// waiting runs call, a C call that waits, with a cancel handle that is
// cancelled when ctx ends or the node closes. The goroutine that cancels
// has returned before the handle is destroyed.
func (n *Node) waiting(ctx context.Context, call func(cancel *C.shoal_cancel_t)) error {
	cancel := C.shoal_cancel_new()
	if cancel == nil {
		return &Error{Op: "cancel", Reason: "out of memory"}
	}
	if ctx.Err() != nil {
		// Ended already: the call returns before it asks anything.
		C.shoal_cancel(cancel)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			C.shoal_cancel(cancel)
		case <-n.closing:
			C.shoal_cancel(cancel)
		case <-stop:
		}
	}()
	call(cancel)
	close(stop)
	<-done
	C.shoal_cancel_destroy(&cancel)
	return nil
}

// ctxErr is the error of ctx once it ended (or its deadline passed), or
// ErrClosed when the node closed during the call; nil otherwise.
func (n *Node) ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// The library's clock may end the wait a hair before the context's.
	if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
		return context.DeadlineExceeded
	}
	select {
	case <-n.closing:
		return ErrClosed
	default:
		return nil
	}
}

// Leave leaves the cluster gracefully and stops the node: its active
// tasks move to other nodes first (Stop events come for each: report them
// stopped meanwhile). It waits until the node left, ctx's deadline (none:
// the leave-timeout option), or ctx's cancellation (the node stops
// anyway). Close the node afterwards.
func (n *Node) Leave(ctx context.Context) error {
	c, err := n.acquire()
	if err != nil {
		return err
	}
	defer n.release()
	w := newWhy()
	defer w.free()
	var rc C.int
	if err := n.waiting(ctx, func(cancel *C.shoal_cancel_t) {
		rc = C.shoal_node_leave(c, timeoutMs(ctx, 0), cancel, w.p, whySize)
	}); err != nil {
		return err
	}
	if rc != 0 {
		if cerr := n.ctxErr(ctx); cerr != nil {
			return &ResultError{Op: "leave", Code: ResultCancelled, Reason: C.GoString(w.p), ctxErr: cerr}
		}
		return w.err("leave")
	}
	return nil
}
