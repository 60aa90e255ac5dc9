package shoal

/*
#include <shoal.h>
#include <stdlib.h>
*/
import "C"

import (
	"context"
	"strings"
	"unsafe"
)

// JobSpec is a job to submit: a named set of Parallelism tasks,
// "name/0" .. "name/N-1".
type JobSpec struct {
	Name        string   // 1 to 64 bytes: letters, digits, '.', '_', '-'
	Parallelism uint32   // 1 to 65535 tasks
	Stateful    bool     // moves warm up a learner first
	Weight      uint32   // relative load of each task (0: 1)
	Require     []string // labels a node must have to run its tasks: "key=value"
	Command     string   // for `shoal worker`: the command each task runs; "": none
	// Fenced: every write of a task carries its epoch, and the store refuses
	// a write of an older epoch than it has seen. Such a task moves as soon
	// as its node is declared dead, without waiting out the node's lease.
	Fenced bool
}

// Result is the cluster's answer to a submit or a rescale.
type Result struct {
	Code        ResultCode // ResultOK, or ResultPartial for a rescale that fit less
	Reason      string     // why, when Code is not ResultOK
	Parallelism uint32     // the job's parallelism now
}

// ScaleOptions are a rescale's bounds when it raises the parallelism.
type ScaleOptions struct {
	Min    uint32 // apply at least this many when not all fit (0: all of them)
	WaitMs uint32 // how long to wait for room on the cluster's nodes
}

// cStrings is C memory holding strings for one call.
type cStrings []unsafe.Pointer

func (s *cStrings) str(text string) *C.char {
	p := C.CString(text)
	*s = append(*s, unsafe.Pointer(p))
	return p
}

func (s *cStrings) free() {
	for _, p := range *s {
		C.free(p)
	}
}

// result turns a waiting call's return into a Result and an error: nil for
// OK and PARTIAL; a *ResultError otherwise, wrapping ctx.Err() when the
// context (or Close) ended the call.
func (n *Node) result(ctx context.Context, op string, rc C.int, r *C.shoal_result_t) (Result, error) {
	res := Result{
		Code:        ResultCode(r.code),
		Reason:      C.GoString(&r.reason[0]),
		Parallelism: uint32(r.parallelism),
	}
	if rc == 0 && (res.Code == ResultOK || res.Code == ResultPartial) {
		return res, nil
	}
	err := &ResultError{Op: op, Code: res.Code, Reason: res.Reason}
	if rc != 0 || res.Code == ResultCancelled {
		err.ctxErr = n.ctxErr(ctx)
	}
	if err.Code == ResultOK { // refused here with no code: say so
		err.Code = ResultFailed
	}
	return res, err
}

// Submit submits a job and waits until the cluster holds it, ctx's deadline
// or its cancellation. Any node takes it and forwards it to the leader.
func (n *Node) Submit(ctx context.Context, spec JobSpec) (Result, error) {
	if err := noNUL("submit", append([]string{spec.Name, spec.Command}, spec.Require...)...); err != nil {
		return Result{}, err
	}
	c, err := n.acquire()
	if err != nil {
		return Result{}, err
	}
	defer n.release()
	var strs cStrings
	defer strs.free()
	// The spec and everything it points to are in C memory: cgo lets no Go
	// pointer inside memory handed to C.
	cspec := (*C.shoal_job_spec_t)(C.calloc(1, C.sizeof_shoal_job_spec_t))
	defer C.free(unsafe.Pointer(cspec))
	cspec.size = C.sizeof_shoal_job_spec_t
	cspec.name = strs.str(spec.Name)
	cspec.parallelism = C.uint32_t(spec.Parallelism)
	cspec.stateful = C.bool(spec.Stateful)
	cspec.fenced = C.bool(spec.Fenced)
	cspec.weight = C.uint32_t(spec.Weight)
	if spec.Command != "" {
		cspec.command = strs.str(spec.Command)
	}
	if len(spec.Require) > 0 {
		size := C.size_t(len(spec.Require)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))
		array := (*[1 << 20]*C.char)(C.calloc(1, size))[:len(spec.Require):len(spec.Require)]
		defer C.free(unsafe.Pointer(&array[0]))
		for i, label := range spec.Require {
			array[i] = strs.str(label)
		}
		cspec.require_count = C.size_t(len(spec.Require))
		cspec.require = (**C.char)(unsafe.Pointer(&array[0]))
	}
	r := C.shoal_result_t{size: C.sizeof_shoal_result_t}
	var rc C.int
	if err := n.waiting(ctx, func(cancel *C.shoal_cancel_t) {
		rc = C.shoal_node_submit(c, cspec, timeoutMs(ctx, noDeadline), cancel, &r)
	}); err != nil {
		return Result{}, err
	}
	return n.result(ctx, "submit "+spec.Name, rc, &r)
}

// Rescale sets job's parallelism. Lowering it applies at once; raising it
// waits up to opts.WaitMs for room, then applies the largest parallelism
// of at least opts.Min that fits (Code ResultPartial, no error), or fails
// with ResultTimedOut.
func (n *Node) Rescale(ctx context.Context, job string, parallelism uint32, opts ScaleOptions) (Result, error) {
	if err := noNUL("rescale", job); err != nil {
		return Result{}, err
	}
	c, err := n.acquire()
	if err != nil {
		return Result{}, err
	}
	defer n.release()
	var strs cStrings
	defer strs.free()
	cjob := strs.str(job)
	r := C.shoal_result_t{size: C.sizeof_shoal_result_t}
	var rc C.int
	if err := n.waiting(ctx, func(cancel *C.shoal_cancel_t) {
		rc = C.shoal_node_rescale(c, cjob, C.uint32_t(parallelism), C.uint32_t(opts.Min),
			C.uint32_t(opts.WaitMs), timeoutMs(ctx, noDeadline), cancel, &r)
	}); err != nil {
		return Result{}, err
	}
	return n.result(ctx, "rescale "+job, rc, &r)
}

// Remove removes job: its tasks stop everywhere.
func (n *Node) Remove(ctx context.Context, job string) error {
	if err := noNUL("remove", job); err != nil {
		return err
	}
	c, err := n.acquire()
	if err != nil {
		return err
	}
	defer n.release()
	var strs cStrings
	defer strs.free()
	cjob := strs.str(job)
	r := C.shoal_result_t{size: C.sizeof_shoal_result_t}
	var rc C.int
	if err := n.waiting(ctx, func(cancel *C.shoal_cancel_t) {
		rc = C.shoal_node_remove(c, cjob, timeoutMs(ctx, noDeadline), cancel, &r)
	}); err != nil {
		return err
	}
	_, err = n.result(ctx, "remove "+job, rc, &r)
	return err
}

// Job is a job's committed spec, as every node holds it.
type Job struct {
	Name        string
	Parallelism uint32
	Stateful    bool
	Weight      uint32
	Require     []string // "key=value"
	Command     string
	Fenced      bool
}

// Revision is a version of the jobs or of the assignment: (term, number).
type Revision struct{ Term, Number uint64 }

// Jobs lists every job this node knows, sorted by name, and the jobs'
// version.
func (n *Node) Jobs() ([]Job, Revision, error) {
	c, err := n.acquire()
	if err != nil {
		return nil, Revision{}, err
	}
	defer n.release()
	var version [2]C.uint64_t
	// Each shoal_job_info_t is over 6 kB: room for a few, then for all there
	// are when that was too little.
	count := C.size_t(7)
	for {
		buf := make([]C.shoal_job_info_t, int(count)+1)
		max := C.size_t(len(buf))
		if C.shoal_node_jobs(c, &buf[0], C.sizeof_shoal_job_info_t, max, &count, &version[0]) != 0 {
			return nil, Revision{}, &Error{Op: "jobs", Reason: "the node is not running"}
		}
		if count > max {
			continue // jobs came meanwhile
		}
		jobs := make([]Job, int(count))
		for i := range jobs {
			j := &buf[i]
			jobs[i] = Job{
				Name:        C.GoString(&j.name[0]),
				Parallelism: uint32(j.parallelism),
				Stateful:    bool(j.stateful),
				Weight:      uint32(j.weight),
				Command:     C.GoString(&j.command[0]),
				Fenced:      bool(j.fenced),
			}
			if req := C.GoString(&j.require[0]); req != "" {
				jobs[i].Require = strings.Split(req, ",")
			}
		}
		return jobs, Revision{uint64(version[0]), uint64(version[1])}, nil
	}
}
