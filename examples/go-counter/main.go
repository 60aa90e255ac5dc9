// go-counter: a Go service that embeds a shoal node and runs a stateful
// task, as examples/counter/main.c does in C. Each task of the job counts;
// its state is a file-backed log (one file per task under --log, which all
// the service's instances share, as they would a disk or a store): the
// active appends "term version count" once a step, and a node that takes a
// task over first restores the count from the log as a learner, reporting
// its lag (the records it has not read yet), before it is promoted.
//
// Writes are fenced: each record carries the epoch of the grant it was
// written under, and an active refuses to write under an epoch older than
// one already in the log (another active took over).
//
//	go-counter [--set KEY=VALUE]... [--submit JOB:N] [--restore N] [--log DIR]
//
// Options come from the environment (SHOAL_DATA_DIR, SHOAL_BIND, ...) and
// from --set. It prints one line per thing that happens. SIGINT or SIGTERM
// makes it leave the cluster gracefully: its active tasks move first.
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"shoal.local/shoal"
)

const step = 100 * time.Millisecond

// record is one line of a task's log.
type record struct {
	epoch shoal.Epoch
	count uint64
}

type task struct {
	name     string
	role     shoal.Role
	epoch    shoal.Epoch
	stopping bool   // told to stop: done at the next step
	applied  int    // records of the log restored
	count    uint64 // the state
	lag      uint64
	fenced   bool
}

type counter struct {
	node    *shoal.Node
	logDir  string
	restore int // records a learner restores per step
	tasks   map[string]*task
	leased  bool
}

func usage(reason string) {
	fmt.Fprintf(os.Stderr, "go-counter: %s\nusage: go-counter [--set KEY=VALUE]... [--submit JOB:N] [--restore N] [--log DIR]\n", reason)
	os.Exit(2)
}

func main() {
	// The application's own default: its lag is in records, so a learner
	// is caught up within a few of them (the environment or --set may say
	// otherwise).
	opts := []shoal.Option{shoal.WithAcceptableLag(2), shoal.WithEnv(os.Environ())}
	submit, restorePerSecond, logDir := "", 50, "counter-log"
	args := os.Args[1:]
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			usage("every option takes a value")
		}
		value := args[i+1]
		switch args[i] {
		case "--set":
			key, v, ok := strings.Cut(value, "=")
			if !ok {
				usage("--set takes KEY=VALUE")
			}
			opts = append(opts, shoal.WithOption(key, v))
		case "--submit":
			submit = value
		case "--restore":
			n, err := strconv.Atoi(value)
			if err != nil || n < 10 {
				usage("--restore takes a number of records per second, 10 or more")
			}
			restorePerSecond = n
		case "--log":
			logDir = value
		default:
			usage("unknown option " + args[i])
		}
	}
	var spec shoal.JobSpec
	if submit != "" {
		name, n, ok := strings.Cut(submit, ":")
		p, err := strconv.ParseUint(n, 10, 32)
		if !ok || err != nil || p == 0 || name == "" {
			usage("--submit takes JOB:N")
		}
		spec = shoal.JobSpec{Name: name, Parallelism: uint32(p), Stateful: true}
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "go-counter:", err)
		os.Exit(1)
	}
	node, err := shoal.New(opts...)
	if err != nil {
		usage(err.Error())
	}
	if err := node.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "go-counter:", err)
		node.Close()
		os.Exit(1)
	}
	id, _ := node.ID()
	port, _ := node.Port()
	fmt.Printf("node %s on port %d\n", id, port)
	c := &counter{node: node, logDir: logDir, restore: restorePerSecond / 10, tasks: map[string]*task{}}
	c.run(spec)
	node.Close()
	fmt.Println("bye")
}

// run handles events and steps the tasks until the node left.
func (c *counter) run(spec shoal.JobSpec) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	ticker := time.NewTicker(step)
	defer ticker.Stop()
	leaveDone := make(chan error, 1)
	leaving := false
	for {
		select {
		case ev, ok := <-c.node.Events():
			if !ok {
				return
			}
			c.event(ev)
			if ev.Type == shoal.EventLeft {
				if leaving {
					<-leaveDone
				}
				return
			}
		case <-ticker.C:
			c.step()
			if spec.Name != "" && c.leased {
				// Submitted once the node holds a lease: a leader is known
				// and holds a quorum.
				go c.submit(spec)
				spec.Name = ""
			}
		case <-signals:
			if !leaving {
				// Leave waits; the service goes on meanwhile, to stop its
				// tasks as the node hands them over.
				fmt.Println("leaving")
				leaving = true
				go func() { leaveDone <- c.node.Leave(context.Background()) }()
			}
		case err := <-leaveDone:
			if err != nil {
				fmt.Println("leave:", err)
			}
			return
		}
	}
}

func (c *counter) submit(spec shoal.JobSpec) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	outcome := "ok"
	if _, err := c.node.Submit(ctx, spec); err != nil {
		outcome = err.Error()
	}
	fmt.Printf("submit %s:%d: %s\n", spec.Name, spec.Parallelism, outcome)
}

func (c *counter) report(t *task, stopped bool) {
	var err error
	if stopped {
		err = c.node.ReportStopped(t.name)
	} else {
		err = c.node.ReportRunning(t.name, t.lag)
	}
	if err != nil {
		fmt.Printf("report %s: %v\n", t.name, err)
	}
}

// event is what the node tells the service, and what the service does.
func (c *counter) event(ev shoal.Event) {
	t := c.tasks[ev.Task]
	switch ev.Type {
	case shoal.EventStart:
		t = &task{name: ev.Task, role: ev.Role, epoch: ev.Epoch}
		c.tasks[ev.Task] = t
		fmt.Printf("start %s as %s, epoch %d.%d\n", ev.Task, ev.Role, ev.Epoch.Term, ev.Epoch.Version)
		if ev.Role == shoal.RoleActive {
			c.catchUp(t) // an active restores what it can at once
		} else {
			t.lag = uint64(len(unread(c.records(t), t.applied)))
		}
		c.report(t, false)
	case shoal.EventPromote:
		if t != nil {
			t.role, t.epoch, t.stopping = shoal.RoleActive, ev.Epoch, false
			fmt.Printf("promote %s to active, epoch %d.%d\n", ev.Task, ev.Epoch.Term, ev.Epoch.Version)
		}
	case shoal.EventDemote, shoal.EventStop:
		if t != nil {
			// An active finishes its current step before it reports the
			// stop; anything else stops at once.
			t.stopping = t.role == shoal.RoleActive
			t.role = ev.Role
			fmt.Printf("%s %s\n", ev.Type, ev.Task)
			if !t.stopping {
				c.report(t, true)
				if t.role == shoal.RoleNone {
					delete(c.tasks, t.name)
				}
			}
		}
	case shoal.EventLease:
		c.leased = ev.Leased
		if ev.Leased {
			fmt.Println("lease held")
		} else {
			fmt.Println("lease lost: actives pause")
		}
	case shoal.EventLeader:
		leader := ev.Node
		if leader == "" {
			leader = "(none)"
		}
		fmt.Printf("leader %s, term %d\n", leader, ev.Term)
	case shoal.EventMember:
		fmt.Printf("member %s (%s) %s\n", ev.Name, ev.Node, ev.State)
	case shoal.EventNotice:
		fmt.Println("notice:", ev.Reason)
	case shoal.EventLeft:
		fmt.Println("left the cluster")
	}
}

// step moves every task on by one step.
func (c *counter) step() {
	for _, t := range c.tasks {
		switch {
		case t.stopping:
			t.stopping = false
			fmt.Printf("%s stopped at count %d\n", t.name, t.count)
			c.report(t, true)
			if t.role == shoal.RoleNone {
				delete(c.tasks, t.name)
			}
		case t.role == shoal.RoleActive && c.leased:
			// Writes happen only under a lease, fenced by the epoch.
			c.write(t)
		case t.role == shoal.RoleLearner || t.role == shoal.RoleStandby:
			behind := unread(c.records(t), t.applied)
			if len(behind) == 0 && t.lag == 0 {
				continue
			}
			if len(behind) > c.restore {
				behind = behind[:c.restore]
			}
			c.apply(t, behind)
			records := c.records(t)
			t.lag = uint64(len(unread(records, t.applied)))
			fmt.Printf("%s restoring, lag %d\n", t.name, t.lag)
			c.report(t, false)
		}
	}
}

func (c *counter) apply(t *task, records []record) {
	for _, r := range records {
		t.count = r.count
	}
	t.applied += len(records)
}

func (c *counter) catchUp(t *task) {
	c.apply(t, unread(c.records(t), t.applied))
	t.lag = 0
}

// unread is the records past the first applied (none when the log is
// shorter: it was removed by hand).
func unread(records []record, applied int) []record {
	if applied > len(records) {
		return nil
	}
	return records[applied:]
}

func (c *counter) path(t *task) string {
	return filepath.Join(c.logDir, strings.ReplaceAll(t.name, "/", ".")+".log")
}

// records reads the task's log: every record in it.
func (c *counter) records(t *task) []record {
	f, err := os.Open(c.path(t))
	if err != nil {
		return nil
	}
	defer f.Close()
	return parse(f)
}

func parse(f *os.File) []record {
	var out []record
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		var r record
		if _, err := fmt.Sscanf(scanner.Text(), "%d %d %d", &r.epoch.Term, &r.epoch.Version, &r.count); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// write appends the task's next count under its epoch, unless the log
// holds a newer epoch: then another active took over, and this one must
// not write. The check and the append are one step under a lock on the
// file, so no two instances interleave them.
func (c *counter) write(t *task) {
	f, err := os.OpenFile(c.path(t), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Printf("%s: %v\n", t.name, err)
		return
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		fmt.Printf("%s: lock: %v\n", t.name, err)
		return
	}
	records := parse(f)
	for _, r := range unread(records, t.applied) {
		if t.epoch.Less(r.epoch) {
			if !t.fenced {
				fmt.Printf("%s fenced: the log holds epoch %d.%d, newer than mine %d.%d\n", t.name,
					r.epoch.Term, r.epoch.Version, t.epoch.Term, t.epoch.Version)
			}
			t.fenced = true
			return
		}
		t.count = r.count
	}
	t.applied = len(records)
	if _, err := fmt.Fprintf(f, "%d %d %d\n", t.epoch.Term, t.epoch.Version, t.count+1); err != nil {
		fmt.Printf("%s: %v\n", t.name, err)
		return
	}
	t.count++
	t.applied++
}
