package shoal

// #include <shoal.h>
import "C"

import "context"

// MemberState is what a node knows of a member.
type MemberState int

// The member states of shoal_member_state_code_t.
const (
	MemberAlive   MemberState = C.SHOAL_MEMBER_STATE_ALIVE
	MemberSuspect MemberState = C.SHOAL_MEMBER_STATE_SUSPECT
	MemberDead    MemberState = C.SHOAL_MEMBER_STATE_DEAD
	MemberLeft    MemberState = C.SHOAL_MEMBER_STATE_LEFT
)

func (s MemberState) String() string {
	switch s {
	case MemberAlive:
		return "alive"
	case MemberSuspect:
		return "suspect"
	case MemberDead:
		return "dead"
	case MemberLeft:
		return "left"
	}
	return "unknown"
}

// Member is a member of the cluster as this node knows it.
type Member struct {
	ID          string
	Name        string
	Addr        string
	State       MemberState
	Incarnation uint64
	Voter       bool // in the voter set this node holds
}

// TaskState is how a node reports a task.
type TaskState int

// The task states of shoal_task_t.
const (
	TaskStarting TaskState = 0
	TaskRunning  TaskState = 1
	TaskStopping TaskState = 2
	TaskStopped  TaskState = 3
	TaskFailed   TaskState = 4
)

func (s TaskState) String() string {
	switch s {
	case TaskStarting:
		return "starting"
	case TaskRunning:
		return "running"
	case TaskStopping:
		return "stopping"
	case TaskStopped:
		return "stopped"
	case TaskFailed:
		return "failed"
	}
	return "unknown"
}

// Epoch is the grant of the active role, (term, version): an active fences
// what it writes with it.
type Epoch struct{ Term, Version uint64 }

// Less says whether e is older than other.
func (e Epoch) Less(other Epoch) bool {
	return e.Term < other.Term || (e.Term == other.Term && e.Version < other.Version)
}

// Task is a task this node holds.
type Task struct {
	Task  string
	Role  Role
	State TaskState
	Lag   uint64
	Epoch Epoch
}

// StatusRow is a task as the leader places it.
type StatusRow struct {
	Node     string // "" for a task placed nowhere
	Task     string
	Role     Role
	State    TaskState
	Lag      uint64
	Epoch    Epoch
	Restarts uint32 // exits in a row (crashloop while above 0)
	LastExit uint32 // status 0-255, or 256 + signal
	Error    string // why it last failed
	Reason   string // placed nowhere: why
}

// Status is the leader's table, as `shoal status` shows it.
type Status struct {
	Whole   bool   // the acting leader's whole table
	Leader  string // "" when there is none
	Term    uint64
	Version uint64
	Reason  string // why it is not whole, or rows left out
	Rows    []StatusRow
}

// list calls fill until it had room for all: fill gets the room and says
// how many there are.
func list(fill func(max int) (count int, ok bool)) bool {
	max := 16
	for {
		count, ok := fill(max)
		if !ok {
			return false
		}
		if count <= max {
			return true
		}
		max = count + 8
	}
}

var errNotRunning = &Error{Op: "query", Reason: "the node is not running"}

// Members lists the members this node knows, itself included.
func (n *Node) Members() ([]Member, error) {
	c, err := n.acquire()
	if err != nil {
		return nil, err
	}
	defer n.release()
	var members []Member
	ok := list(func(max int) (int, bool) {
		buf := make([]C.shoal_member_t, max)
		var count C.size_t
		if C.shoal_node_members(c, &buf[0], C.sizeof_shoal_member_t, C.size_t(max), &count) != 0 {
			return 0, false
		}
		members = members[:0]
		for i := 0; i < int(count) && i < max; i++ {
			m := &buf[i]
			members = append(members, Member{
				ID:          C.GoString(&m.id[0]),
				Name:        C.GoString(&m.name[0]),
				Addr:        C.GoString(&m.addr[0]),
				State:       MemberState(m.state),
				Incarnation: uint64(m.incarnation),
				Voter:       bool(m.voter),
			})
		}
		return int(count), true
	})
	if !ok {
		return nil, errNotRunning
	}
	return members, nil
}

// Leader is the leader this node follows ("" for none), its term, and
// whether this node is the leader and acts as one.
func (n *Node) Leader() (id string, term uint64, acting bool, err error) {
	c, err := n.acquire()
	if err != nil {
		return "", 0, false, err
	}
	defer n.release()
	var cid [C.SHOAL_NODE_ID_TEXT]C.char
	var cterm C.uint64_t
	var cacting C.bool
	if C.shoal_node_leader(c, &cid[0], &cterm, &cacting) != 0 {
		return "", 0, false, errNotRunning
	}
	return C.GoString(&cid[0]), uint64(cterm), bool(cacting), nil
}

// Tasks lists the tasks this node holds (sorted by task) and the
// assignment version applied.
func (n *Node) Tasks() ([]Task, Revision, error) {
	c, err := n.acquire()
	if err != nil {
		return nil, Revision{}, err
	}
	defer n.release()
	var tasks []Task
	var version [2]C.uint64_t
	ok := list(func(max int) (int, bool) {
		buf := make([]C.shoal_task_t, max)
		var count C.size_t
		if C.shoal_node_tasks(c, &buf[0], C.sizeof_shoal_task_t, C.size_t(max), &count, &version[0]) != 0 {
			return 0, false
		}
		tasks = tasks[:0]
		for i := 0; i < int(count) && i < max; i++ {
			t := &buf[i]
			tasks = append(tasks, Task{
				Task:  C.GoString(&t.task[0]),
				Role:  Role(t.role),
				State: TaskState(t.state),
				Lag:   uint64(t.lag),
				Epoch: Epoch{uint64(t.epoch_term), uint64(t.epoch_version)},
			})
		}
		return int(count), true
	})
	if !ok {
		return nil, Revision{}, errNotRunning
	}
	return tasks, Revision{uint64(version[0]), uint64(version[1])}, nil
}

// Status is the leader's table. A node that does not lead asks the leader
// and waits up to ctx's deadline (at most 10 s; none: 10 s); with no
// leader, no answer in time or ctx cancelled it gives its own tasks, and
// Whole is false with Reason saying why. The error is for a node that is
// not running.
func (n *Node) Status(ctx context.Context) (Status, error) {
	c, err := n.acquire()
	if err != nil {
		return Status{}, err
	}
	defer n.release()
	var st Status
	ok := list(func(max int) (int, bool) {
		buf := make([]C.shoal_status_row_t, max)
		var count C.size_t
		var rc C.int
		cst := C.shoal_status_info_t{size: C.sizeof_shoal_status_info_t}
		if err := n.waiting(ctx, func(cancel *C.shoal_cancel_t) {
			rc = C.shoal_node_status(c, &buf[0], C.sizeof_shoal_status_row_t, C.size_t(max), &count,
				&cst, timeoutMs(ctx, 10000), cancel)
		}); err != nil || rc != 0 {
			return 0, false
		}
		st = Status{
			Whole:   bool(cst.whole),
			Leader:  C.GoString(&cst.leader[0]),
			Term:    uint64(cst.term),
			Version: uint64(cst.version),
			Reason:  C.GoString(&cst.reason[0]),
		}
		for i := 0; i < int(count) && i < max; i++ {
			r := &buf[i]
			st.Rows = append(st.Rows, StatusRow{
				Node:     C.GoString(&r.node[0]),
				Task:     C.GoString(&r.task[0]),
				Role:     Role(r.role),
				State:    TaskState(r.state),
				Lag:      uint64(r.lag),
				Epoch:    Epoch{uint64(r.epoch_term), uint64(r.epoch_version)},
				Restarts: uint32(r.restarts),
				LastExit: uint32(r.last_exit),
				Error:    C.GoString(&r.error[0]),
				Reason:   C.GoString(&r.reason[0]),
			})
		}
		return int(count), true
	})
	if !ok {
		if cerr := n.ctxErr(ctx); cerr != nil {
			return Status{}, cerr
		}
		return Status{}, errNotRunning
	}
	return st, nil
}
