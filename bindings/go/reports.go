package shoal

/*
#include <shoal.h>
#include <stdlib.h>
*/
import "C"

import "unsafe"

// report tells the node task's state and lag.
func (n *Node) report(task string, state C.int, lag uint64) error {
	if err := noNUL("report", task); err != nil {
		return err
	}
	c, err := n.acquire()
	if err != nil {
		return err
	}
	defer n.release()
	ctask, w := C.CString(task), newWhy()
	defer C.free(unsafe.Pointer(ctask))
	defer w.free()
	if C.shoal_node_report(c, ctask, state, C.uint64_t(lag), w.p, whySize) != 0 {
		return w.err("report " + task)
	}
	return nil
}

// ReportRunning says task started: an active runs, a learner or standby
// warms up (lag: how far its state is behind, in the program's units).
func (n *Node) ReportRunning(task string, lag uint64) error {
	return n.report(task, C.SHOAL_RUNNING, lag)
}

// ReportLag says how far behind a learner's or standby's state is; report
// it again as it shrinks (the acceptable-lag option says when it is caught
// up).
func (n *Node) ReportLag(task string, lag uint64) error {
	return n.report(task, C.SHOAL_RUNNING, lag)
}

// ReportStopped says task stopped acting, after a Demote or Stop event.
func (n *Node) ReportStopped(task string) error {
	return n.report(task, C.SHOAL_STOPPED, 0)
}

// ReportFailed says task could not start, or crashed: the node starts it
// again later, and gives it up after failures in a row.
func (n *Node) ReportFailed(task string) error {
	return n.report(task, C.SHOAL_FAILED, 0)
}

// ReportExit tells how task's process last exited, for the leader's table:
// restarts (its exits in a row), lastExit (exit status 0-255, or 256 + the
// signal) and why in words ("" for none).
func (n *Node) ReportExit(task string, restarts, lastExit uint32, why string) error {
	if err := noNUL("report exit", task, why); err != nil {
		return err
	}
	c, err := n.acquire()
	if err != nil {
		return err
	}
	defer n.release()
	ctask, cwhy, w := C.CString(task), C.CString(why), newWhy()
	defer C.free(unsafe.Pointer(ctask))
	defer C.free(unsafe.Pointer(cwhy))
	defer w.free()
	if C.shoal_node_report_exit(c, ctask, C.uint32_t(restarts), C.uint32_t(lastExit), cwhy, w.p, whySize) != 0 {
		return w.err("report exit " + task)
	}
	return nil
}
