package shoal

/*
#include <shoal.h>
#include <stdlib.h>
#include <time.h>

//  The C side of the event benchmark (events_bench_test.go): what taking
//  the node's events costs a C program, in a loop over shoal_node_event
//  until the queue is empty. Into *ns the loop's time.
static long long
shoal_go_bench_drain (shoal_node_t *node, long long *ns)
{
    shoal_event_t event;
    long long count = 0;
    struct timespec a, b;
    clock_gettime (CLOCK_MONOTONIC, &a);
    for (;;) {
        event.size = sizeof event;
        if (shoal_node_event (node, &event) != 1)
            break;
        count++;
    }
    clock_gettime (CLOCK_MONOTONIC, &b);
    *ns = (long long) (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
    return count;
}
*/
import "C"

import (
	"time"
	"unsafe"
)

// The package's benchmark (events_bench_test.go) drives the node's event
// queue itself; cgo is not allowed in test files, so its cgo calls live
// here. Nothing here is exported.

// benchDrainC takes every queued event in one C loop: how many, and the
// loop's time.
func (n *Node) benchDrainC() (int, time.Duration) {
	var ns C.longlong
	count := C.shoal_go_bench_drain(n.c, &ns)
	return int(count), time.Duration(ns)
}

// benchDrainGo takes every queued event as the pump does (a cgo call to
// shoal_node_event, the conversion to an Event, the send on the node's
// channel): its time.
func (n *Node) benchDrainGo() time.Duration {
	ev := (*C.shoal_event_t)(C.calloc(1, C.sizeof_shoal_event_t))
	defer C.free(unsafe.Pointer(ev))
	start := time.Now()
	n.drain(n.c, ev)
	return time.Since(start)
}

// benchSink keeps the benchmark's conversions from being optimised away.
var benchSink Event

// benchDrainCgo takes every queued event with a cgo call each, converting
// it to an Event when convertToo is set, but sending it nowhere: how many,
// and the loop's time.
func (n *Node) benchDrainCgo(convertToo bool) (int, time.Duration) {
	ev := (*C.shoal_event_t)(C.calloc(1, C.sizeof_shoal_event_t))
	defer C.free(unsafe.Pointer(ev))
	count := 0
	start := time.Now()
	for {
		ev.size = C.sizeof_shoal_event_t
		if C.shoal_node_event(n.c, ev) != 1 {
			break
		}
		if convertToo {
			benchSink = convert(ev)
		}
		count++
	}
	return count, time.Since(start)
}
