package shoal

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitFor is how long a test waits for a cluster to get somewhere: a bound
// against a hang only.
const waitFor = 60 * time.Second

// app is what a program embedding a node does with its events, for the
// tests: it keeps the tasks the node gave it, reports them as the node
// asks, warms learners up with falling lag reports, and checks that the
// events of each task come in an order that makes sense.
type app struct {
	t    *testing.T
	name string
	node *Node

	mu       sync.Mutex
	tasks    map[string]*appTask
	events   []Event
	leased   bool
	left     bool
	problems []string // events out of order
	lags     map[string][]uint64
	promoted map[string]bool
	done     chan struct{}
}

type appTask struct {
	role  Role
	epoch Epoch
	lag   uint64
}

// learnerLag is how far behind a learner starts, and learnerStep how much
// it catches up on each tick.
const (
	learnerLag  = 30000
	learnerStep = 10000
)

// startApp makes and starts a node with the test options, joining seed
// when not nil, and runs its app.
func startApp(t *testing.T, name string, seed *app, extra ...Option) *app {
	t.Helper()
	opts := []Option{
		WithName(name), WithDataDir(t.TempDir()), WithBind("127.0.0.1:0"),
		WithBeaconPort(0), WithProfile("loopback"),
	}
	if seed != nil {
		port, err := seed.node.Port()
		if err != nil {
			t.Fatalf("%s: the seed's port: %v", name, err)
		}
		opts = append(opts, WithJoin(fmt.Sprintf("127.0.0.1:%d", port)))
	}
	node, err := New(append(opts, extra...)...)
	if err != nil {
		t.Fatalf("%s: new: %v", name, err)
	}
	if err := node.Start(); err != nil {
		node.Close()
		t.Fatalf("%s: start: %v", name, err)
	}
	a := &app{
		t: t, name: name, node: node, tasks: map[string]*appTask{}, lags: map[string][]uint64{},
		promoted: map[string]bool{}, done: make(chan struct{}),
	}
	go a.run()
	return a
}

// run takes events until the channel closes, and warms learners up on a
// ticker.
func (a *app) run() {
	defer close(a.done)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case ev, ok := <-a.node.Events():
			if !ok {
				return
			}
			a.event(ev)
		case <-tick.C:
			a.warm()
		}
	}
}

func (a *app) problem(format string, args ...interface{}) {
	a.problems = append(a.problems, fmt.Sprintf(format, args...))
}

// event acts on one event and checks it against what came before. Reports
// to a node that is closing fail with ErrClosed; that is fine here.
func (a *app) event(ev Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events = append(a.events, ev)
	task := a.tasks[ev.Task]
	switch ev.Type {
	case EventStart:
		if task != nil {
			a.problem("start of %s, which runs", ev.Task)
		}
		if ev.Job == "" || !strings.HasPrefix(ev.Task, ev.Job+"/") || ev.Parallelism == 0 {
			a.problem("start %q: job %q, parallelism %d", ev.Task, ev.Job, ev.Parallelism)
		}
		task = &appTask{role: ev.Role, epoch: ev.Epoch}
		if ev.Role != RoleActive {
			task.lag = learnerLag
			a.lags[ev.Task] = append(a.lags[ev.Task], task.lag)
		}
		a.tasks[ev.Task] = task
		a.node.ReportRunning(ev.Task, task.lag)
	case EventPromote:
		if task == nil || task.role == RoleActive {
			a.problem("promote of %s, which is not a learner or standby here", ev.Task)
			return
		}
		if ev.Epoch.Less(task.epoch) {
			a.problem("promote of %s under an older epoch", ev.Task)
		}
		task.role, task.epoch = RoleActive, ev.Epoch
		a.promoted[ev.Task] = true
	case EventDemote, EventStop:
		if task == nil {
			a.problem("%s of %s, which does not run here", ev.Type, ev.Task)
			return
		}
		a.node.ReportStopped(ev.Task)
		if ev.Type == EventStop {
			delete(a.tasks, ev.Task)
		} else {
			task.role = ev.Role
		}
	case EventLease:
		a.leased = ev.Leased
	case EventLeft:
		a.left = true
	}
}

// warm brings each learner closer, reporting its lag as it falls.
func (a *app) warm() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for name, task := range a.tasks {
		if task.role == RoleActive || task.lag == 0 {
			continue
		}
		if task.lag > learnerStep {
			task.lag -= learnerStep
		} else {
			task.lag = 0
		}
		a.lags[name] = append(a.lags[name], task.lag)
		a.node.ReportLag(name, task.lag)
	}
}

// actives is the tasks this app runs as active while leased.
func (a *app) actives() map[string]Epoch {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]Epoch{}
	if !a.leased {
		return out
	}
	for name, task := range a.tasks {
		if task.role == RoleActive {
			out[name] = task.epoch
		}
	}
	return out
}

// close closes the node and waits for its app to end.
func (a *app) close() {
	a.node.Close()
	<-a.done
}

// eventually waits until cond holds, or fails the test with what.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	until := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(until) {
			t.Fatalf("no %s within %v", what, waitFor)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// oneCluster says whether every app's node sees len(apps) members alive
// and all follow one leader, which acts.
func oneCluster(apps ...*app) bool {
	leader, acting := "", 0
	for _, a := range apps {
		members, err := a.node.Members()
		if err != nil {
			return false
		}
		alive := 0
		for _, m := range members {
			if m.State == MemberAlive {
				alive++
			}
		}
		id, _, isLeader, err := a.node.Leader()
		if err != nil || alive != len(apps) || id == "" || (leader != "" && id != leader) {
			return false
		}
		leader = id
		if isLeader {
			acting++
		}
	}
	return acting == 1
}

// leaderVotes says whether every app's node lists its leader as a voter.
func leaderVotes(apps ...*app) bool {
	for _, a := range apps {
		id, _, _, err := a.node.Leader()
		members, err2 := a.node.Members()
		if err != nil || err2 != nil || id == "" {
			return false
		}
		votes := false
		for _, m := range members {
			votes = votes || (m.ID == id && m.Voter)
		}
		if !votes {
			return false
		}
	}
	return true
}

// activeOnce says whether every task of job runs active on exactly one of
// apps.
func activeOnce(job string, parallelism int, apps ...*app) bool {
	count := map[string]int{}
	for _, a := range apps {
		for task := range a.actives() {
			count[task]++
		}
	}
	for i := 0; i < parallelism; i++ {
		if count[fmt.Sprintf("%s/%d", job, i)] != 1 {
			return false
		}
	}
	return len(count) == parallelism
}

// checkNoLeak fails the test when, a while after its nodes closed, more
// goroutines run than before it began.
func checkNoLeak(t *testing.T, before int) {
	t.Helper()
	until := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(until) {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines: %d before, %d after Close\n%s", before, runtime.NumGoroutine(),
				buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
