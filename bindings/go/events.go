package shoal

/*
#include <shoal.h>
#include <stdlib.h>
*/
import "C"

import (
	"fmt"
	"syscall"
	"unsafe"
)

// EventType says what an Event tells.
type EventType int

// The event types of shoal_event_type_t.
const (
	EventStart   EventType = C.SHOAL_EVENT_START   // run Task in Role under Epoch; report running
	EventPromote EventType = C.SHOAL_EVENT_PROMOTE // the learner or standby Task becomes active under Epoch
	EventDemote  EventType = C.SHOAL_EVENT_DEMOTE  // the active Task stops acting, keeps its state as Role
	EventStop    EventType = C.SHOAL_EVENT_STOP    // stop Task and drop it; report stopped
	EventLease   EventType = C.SHOAL_EVENT_LEASE   // the lease was lost (Leased false) or is held again
	EventLeader  EventType = C.SHOAL_EVENT_LEADER  // the leader changed: Node ("" for none), Term
	EventMember  EventType = C.SHOAL_EVENT_MEMBER  // a member joined, failed, left or changed: Node, Name, State
	EventLeft    EventType = C.SHOAL_EVENT_LEFT    // this node left the cluster: close it
	EventNotice  EventType = C.SHOAL_EVENT_NOTICE  // something the operator should know: Reason
)

func (t EventType) String() string {
	names := [...]string{"", "start", "promote", "demote", "stop", "lease", "leader", "member", "left", "notice"}
	if t > 0 && int(t) < len(names) {
		return names[t]
	}
	return fmt.Sprintf("event %d", int(t))
}

// Role is a task's role on a node.
type Role int

// The roles of shoal_role_code_t; RoleNone after a stop.
const (
	RoleNone    Role = 0
	RoleActive  Role = C.SHOAL_ACTIVE
	RoleStandby Role = C.SHOAL_STANDBY
	RoleLearner Role = C.SHOAL_LEARNER
)

func (r Role) String() string {
	switch r {
	case RoleActive:
		return "active"
	case RoleStandby:
		return "standby"
	case RoleLearner:
		return "learner"
	}
	return "none"
}

// Event is one thing the node tells the program, in the order it happened.
type Event struct {
	Type        EventType
	Task        string // Start, Promote, Demote, Stop: "job/index"
	Job         string // and its job
	Index       uint32 // and its index in the job
	Parallelism uint32 // the job's parallelism as the node knows it
	Role        Role   // RoleNone after Stop
	Epoch       Epoch  // the grant of the active role, to fence writes
	Leased      bool   // Lease
	Node        string // Leader: the leader ("" for none); Member: the member
	Name        string // Member: its name
	Term        uint64 // Leader
	State       MemberState
	Reason      string // Notice
}

func (e Event) String() string {
	switch e.Type {
	case EventStart, EventPromote, EventDemote:
		return fmt.Sprintf("%s %s as %s, epoch %d.%d", e.Type, e.Task, e.Role, e.Epoch.Term, e.Epoch.Version)
	case EventStop:
		return "stop " + e.Task
	case EventLease:
		return fmt.Sprintf("lease %t", e.Leased)
	case EventLeader:
		return fmt.Sprintf("leader %q term %d", e.Node, e.Term)
	case EventMember:
		return fmt.Sprintf("member %s (%s) %s", e.Name, e.Node, e.State)
	case EventNotice:
		return "notice: " + e.Reason
	}
	return e.Type.String()
}

// Events is the channel of the node's events. It is closed by Close. The
// node's queue holds what the channel has no room for: a program that
// stops reading holds events up, it loses none of its tasks' (members,
// leaders and notices are dropped past 4,096).
func (n *Node) Events() <-chan Event { return n.events }

// convert copies a C event into a Go Event.
func convert(ev *C.shoal_event_t) Event {
	return Event{
		Type:        EventType(ev._type),
		Task:        C.GoString(&ev.task[0]),
		Job:         C.GoString(&ev.job[0]),
		Index:       uint32(ev.index),
		Parallelism: uint32(ev.parallelism),
		Role:        Role(ev.role),
		Epoch:       Epoch{uint64(ev.epoch_term), uint64(ev.epoch_version)},
		Leased:      bool(ev.leased),
		Node:        C.GoString(&ev.node[0]),
		Name:        C.GoString(&ev.name[0]),
		Term:        uint64(ev.term),
		State:       MemberState(ev.state),
		Reason:      C.GoString(&ev.reason[0]),
	}
}

// pumpEvents moves the node's events to the channel until Close. It waits
// for the event fd in Go's netpoller (edge-triggered: the library makes
// the fd readable when its queue turns non-empty, and clears it when the
// queue empties, so the pump drains to empty before it waits again).
func (n *Node) pumpEvents(c *C.shoal_node_t, raw syscall.RawConn) {
	defer n.pump.Done()
	// The C event lives in C memory, one per pump, reused for every event.
	ev := (*C.shoal_event_t)(C.calloc(1, C.sizeof_shoal_event_t))
	defer C.free(unsafe.Pointer(ev))
	for {
		closing := false
		err := raw.Read(func(uintptr) bool {
			closing = n.drain(c, ev)
			return closing // false: the queue is empty, wait until readable
		})
		if err != nil || closing { // the file was closed, or is being closed
			return
		}
	}
}

// drain moves events from the node's queue to the channel until the queue
// is empty (false) or the node closes (true).
func (n *Node) drain(c *C.shoal_node_t, ev *C.shoal_event_t) bool {
	for {
		ev.size = C.sizeof_shoal_event_t
		if C.shoal_node_event(c, ev) != 1 {
			return false
		}
		select {
		case n.events <- convert(ev):
		case <-n.closing:
			return true
		}
	}
}
