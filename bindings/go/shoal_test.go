package shoal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestVersionAndOptions(t *testing.T) {
	if v := Version(); !strings.HasPrefix(v, "0.") {
		t.Errorf("Version() = %q, want 0.x.y", v)
	}
	opts := Options()
	if len(opts) < 20 {
		t.Fatalf("Options() lists %d options, want the 20 and more of docs/options.md", len(opts))
	}
	found, beacons := false, false
	for _, o := range opts {
		beacons = beacons || o.Key == "beacon-interface"
		if o.Key == "" || o.Type == "" || o.Doc == "" {
			t.Errorf("option %+v: key, type or doc empty", o)
		}
		if o.Key == "data-dir" {
			found = o.Default == "shoal-data"
		}
	}
	if !found || !beacons {
		t.Errorf("no option data-dir with default shoal-data, or no beacon-interface, in %+v", opts)
	}
}

func TestOptionsAreCheckedWithReasons(t *testing.T) {
	before := runtime.NumGoroutine()
	_, err := New(WithCapacity(0))
	var serr *Error
	if !errors.As(err, &serr) || serr.Reason == "" {
		t.Fatalf("New(capacity 0) = %v, want an *Error with the library's reason", err)
	}
	if _, err := New(WithOption("no-such-option", "1")); err == nil {
		t.Fatal("an unknown option is taken")
	}
	if _, err := New(WithOption("name", "a\x00b")); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Fatalf("a NUL in a value: %v, want a refusal that names it", err)
	}
	if _, err := New(WithEnv([]string{"PATH=/bin", "SHOAL_SLOTZ=1"})); err == nil {
		t.Error("a misspelled SHOAL_ variable is taken")
	}
	if _, err := New(WithConfigFile(t.TempDir() + "/none.conf")); err == nil {
		t.Error("a missing config file is taken")
	}
	fromEnv, err := New(WithEnv([]string{"PATH=/bin", "SHOAL_SLOTS=5"}))
	if err != nil {
		t.Fatalf("New(SHOAL_SLOTS=5): %v", err)
	}
	if got, err := fromEnv.Get("slots"); err != nil || got != "5" {
		t.Errorf("slots from the environment: %q, %v", got, err)
	}
	fromEnv.Close()
	n, err := New(WithSlots(3), WithLabels(map[string]string{"zone": "a", "disk": "ssd"}),
		WithLeaveTimeout(1500*time.Millisecond), WithJoin("10.0.0.1:7946", "10.0.0.2:7946"))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for key, want := range map[string]string{
		"slots": "3", "labels": "disk=ssd,zone=a", "leave-timeout": "1500ms",
		"join": "10.0.0.1:7946,10.0.0.2:7946", "capacity": "1",
	} {
		if got, err := n.Get(key); err != nil || got != want {
			t.Errorf("Get(%q) = %q, %v; want %q", key, got, err, want)
		}
	}
	if _, err := n.Get("no-such-option"); err == nil {
		t.Error("Get of an unknown option gives no error")
	}
	// Calls that need a started node say so, and nothing crashes.
	if _, err := n.ID(); !errors.Is(err, ErrNotStarted) {
		t.Errorf("ID before Start: %v, want ErrNotStarted", err)
	}
	if _, err := n.Members(); err == nil {
		t.Error("Members before Start gives no error")
	}
	if err := n.ReportRunning("job/0", 0); err == nil {
		t.Error("a report before Start gives no error")
	}
	if _, err := n.Submit(context.Background(), JobSpec{Name: "j", Parallelism: 1}); err == nil {
		t.Error("a submit before Start gives no error")
	}
	n.Close()
	n.Close() // idempotent
	if _, ok := <-n.Events(); ok {
		t.Error("Events still open after Close")
	}
	if err := n.Set("slots", "4"); !errors.Is(err, ErrClosed) {
		t.Errorf("Set after Close: %v, want ErrClosed", err)
	}
	if _, _, _, err := n.Leader(); !errors.Is(err, ErrClosed) {
		t.Errorf("Leader after Close: %v, want ErrClosed", err)
	}
	checkNoLeak(t, before)
}

// deadSeed is a loopback address nothing listens on: a node that joins
// only through it finds no cluster, and elects no leader.
func deadSeed(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestCancelEndsWaits: a submit with no quorum, and a rescale waiting for
// slots, return promptly with the context's error when it ends; Close ends
// a call that waits.
func TestCancelEndsWaits(t *testing.T) {
	before := runtime.NumGoroutine()
	lonely := startApp(t, "lonely", nil, WithJoin(deadSeed(t)))
	defer lonely.close()

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := lonely.node.Submit(ctx, JobSpec{Name: "nowhere", Parallelism: 2})
	took := time.Since(start)
	var rerr *ResultError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &rerr) {
		t.Fatalf("submit with no leader, cancelled: %v, want a *ResultError matching context.Canceled", err)
	}
	if took > 2*time.Second {
		t.Errorf("the cancelled submit took %v", took)
	}
	t.Logf("submit with no leader, cancelled after 200 ms: returned after %v: %v", took, err)

	ctx, stop := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer stop()
	start = time.Now()
	err = lonely.node.Remove(ctx, "nowhere")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("remove with no leader past its deadline: %v, want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the remove with a 300 ms deadline took %v", took)
	}

	// A context ended before the call: it asks nothing.
	done, cancelNow := context.WithCancel(context.Background())
	cancelNow()
	if _, err := lonely.node.Rescale(done, "nowhere", 3, ScaleOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("rescale with a cancelled context: %v", err)
	}

	// A single node that leads alone, with room for one task.
	solo := startApp(t, "solo", nil, WithExpect(1), WithSlots(1))
	defer solo.close()
	eventually(t, "leader", func() bool { return oneCluster(solo) })
	if _, err := solo.node.Submit(context.Background(), JobSpec{Name: "one", Parallelism: 1}); err != nil {
		t.Fatalf("submit: %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start = time.Now()
	_, err = solo.node.Rescale(ctx, "one", 3, ScaleOptions{WaitMs: 20000})
	took = time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("rescale waiting for slots, cancelled: %v, want context.Canceled", err)
	}
	if took > 3*time.Second {
		t.Errorf("the cancelled rescale took %v", took)
	}
	t.Logf("rescale waiting for slots, cancelled after 300 ms: returned after %v: %v", took, err)

	// Close ends a call that waits, with ErrClosed.
	errs := make(chan error, 1)
	go func() {
		_, err := lonely.node.Submit(context.Background(), JobSpec{Name: "nowhere", Parallelism: 2})
		errs <- err
	}()
	time.Sleep(200 * time.Millisecond)
	start = time.Now()
	lonely.close()
	select {
	case err := <-errs:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("a submit that waits, at Close: %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close left a submit waiting")
	}
	t.Logf("Close with a submit waiting: returned in %v", time.Since(start))
	solo.close()
	checkNoLeak(t, before)
}

// TestManyEvents: thousands of events, more than the channel holds, all
// arrive once and in order though the program reads late (the pump waits
// on an edge-triggered netpoller).
func TestManyEvents(t *testing.T) {
	before := runtime.NumGoroutine()
	node, err := New(WithDataDir(t.TempDir()), WithBind("127.0.0.1:0"), WithBeaconPort(0),
		WithProfile("loopback"), WithExpect(1))
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	const tasks = 2000
	for round := 0; round < 2; round++ {
		job := fmt.Sprintf("many%d", round)
		// Nobody reads while the job's starts queue up.
		if _, err := node.Submit(ctx, JobSpec{Name: job, Parallelism: tasks}); err != nil {
			t.Fatalf("submit %s: %v", job, err)
		}
		time.Sleep(500 * time.Millisecond)
		seen := map[string]bool{}
		timeout := time.After(waitFor)
		for len(seen) < tasks {
			select {
			case ev := <-node.Events():
				if ev.Type != EventStart || ev.Job != job {
					continue
				}
				if seen[ev.Task] {
					t.Fatalf("%s started twice", ev.Task)
				}
				seen[ev.Task] = true
				node.ReportRunning(ev.Task, 0)
			case <-timeout:
				t.Fatalf("%d of %d starts of %s came", len(seen), tasks, job)
			}
		}
		if err := node.Remove(ctx, job); err != nil {
			t.Fatalf("remove %s: %v", job, err)
		}
		stops := 0
		for stops < tasks {
			select {
			case ev := <-node.Events():
				if ev.Type == EventStop && ev.Job == job {
					stops++
					node.ReportStopped(ev.Task)
				}
			case <-timeout:
				t.Fatalf("%d of %d stops of %s came", stops, tasks, job)
			}
		}
	}
	node.Close()
	checkNoLeak(t, before)
}

// TestCluster: three nodes in one process make one cluster; a stateful job
// runs every task once; a fourth node takes tasks over as a learner that
// reports its lag; a closed node's tasks move; the leader's table, jobs,
// rescale and remove work from any node, from many goroutines at once.
func TestCluster(t *testing.T) {
	before := runtime.NumGoroutine()
	a0 := startApp(t, "n0", nil)
	a1 := startApp(t, "n1", a0)
	a2 := startApp(t, "n2", a0)
	apps := []*app{a0, a1, a2}
	defer func() {
		for _, a := range apps {
			a.close()
		}
	}()
	eventually(t, "one cluster of 3", func() bool { return oneCluster(apps...) })
	eventually(t, "the leader votes", func() bool { return leaderVotes(apps...) })

	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	spec := JobSpec{Name: "work", Parallelism: 6, Stateful: true, Command: "./count --fast",
		Require: nil}
	res, err := a2.node.Submit(ctx, spec)
	if err != nil || res.Parallelism != 6 {
		t.Fatalf("submit through n2: %+v, %v", res, err)
	}
	eventually(t, "every task active once", func() bool { return activeOnce("work", 6, apps...) })

	// Another spec under the same name: refused with the result code.
	bad := spec
	bad.Parallelism = 4
	_, err = a0.node.Submit(ctx, bad)
	var rerr *ResultError
	if !errors.As(err, &rerr) || rerr.Code != ResultInvalid || rerr.Reason == "" {
		t.Fatalf("a second spec under one name: %v, want ResultInvalid with a reason", err)
	}
	fenced := spec
	fenced.Fenced = true // the same but fenced is another spec too
	if _, err = a0.node.Submit(ctx, fenced); !errors.As(err, &rerr) || rerr.Code != ResultInvalid {
		t.Fatalf("the spec fenced under the same name: %v, want ResultInvalid", err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a refusal matches a context error: %v", err)
	}
	if _, err := a0.node.Rescale(ctx, "no-such-job", 2, ScaleOptions{}); !errors.As(err, &rerr) ||
		rerr.Code != ResultNotFound {
		t.Errorf("rescale of no job: %v, want ResultNotFound", err)
	}

	// Many goroutines ask the nodes at once while events flow.
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(a *app) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, err := a.node.Members(); err != nil {
					t.Errorf("members: %v", err)
				}
				a.node.Leader()
				a.node.Tasks()
				a.node.Jobs()
			}
		}(apps[g%3])
	}
	wg.Wait()

	jobs, rev, err := a1.node.Jobs()
	if err != nil || len(jobs) != 1 || jobs[0].Name != "work" || jobs[0].Parallelism != 6 ||
		!jobs[0].Stateful || jobs[0].Fenced || jobs[0].Command != "./count --fast" ||
		rev.Number == 0 {
		t.Errorf("jobs on n1: %+v %+v %v", jobs, rev, err)
	}
	st, err := a1.node.Status(ctx)
	if err != nil || !st.Whole || st.Leader == "" || len(st.Rows) != 6 {
		t.Errorf("status from n1: %+v, %v; want the whole table of 6 rows", st, err)
	}

	// How a task's process exited shows in the leader's table.
	var owner *app
	var crashed string
	for _, a := range apps {
		for task := range a.actives() {
			owner, crashed = a, task
		}
	}
	if err := owner.node.ReportExit(crashed, 2, 256+9, "killed by SIGKILL"); err != nil {
		t.Fatalf("report exit of %s: %v", crashed, err)
	}
	if err := owner.node.ReportExit(crashed, 2, 400, ""); err == nil {
		t.Error("an exit status of 400 is taken")
	}
	if err := owner.node.ReportFailed("work/99"); err == nil {
		t.Error("a report of a task the node does not hold is taken")
	}
	eventually(t, "the exit in the leader's table", func() bool {
		st, err := a0.node.Status(ctx)
		for _, row := range st.Rows {
			if err == nil && row.Task == crashed && row.Restarts == 2 && row.LastExit == 265 &&
				row.Error == "killed by SIGKILL" {
				return true
			}
		}
		return false
	})
	owner.node.ReportExit(crashed, 0, 0, "")

	// Scale-out: a fourth node warms learners up, reporting its lag, and
	// is promoted; the old owners stop their copies.
	a3 := startApp(t, "n3", a1)
	apps = append(apps, a3)
	eventually(t, "one cluster of 4", func() bool { return oneCluster(apps...) })
	eventually(t, "n3 active on a task taken over", func() bool {
		return len(a3.actives()) > 0 && activeOnce("work", 6, apps...)
	})
	a3.mu.Lock()
	handed := ""
	for task := range a3.promoted {
		handed = task
	}
	lags := a3.lags[handed]
	a3.mu.Unlock()
	if handed == "" {
		t.Fatal("n3 runs tasks, but none came as a learner promoted")
	}
	if len(lags) < 2 || lags[0] <= lags[len(lags)-1] {
		t.Errorf("%s: the learner's lag reports %v, want at least two, falling", handed, lags)
	}
	t.Logf("%s handed over to n3 after lag reports %v", handed, lags)
	stopped := false
	for _, a := range apps[:3] {
		a.mu.Lock()
		for _, ev := range a.events {
			stopped = stopped || (ev.Type == EventStop && ev.Task == handed)
		}
		a.mu.Unlock()
	}
	if !stopped {
		t.Errorf("no old owner stopped %s", handed)
	}

	// A node closed (as a crash): its tasks move to the others.
	victim := a2
	if len(victim.actives()) == 0 {
		victim = a0
	}
	victim.close()
	rest := []*app{}
	for _, a := range apps {
		if a != victim {
			rest = append(rest, a)
		}
	}
	apps = rest
	eventually(t, "the closed node's tasks active elsewhere", func() bool {
		return activeOnce("work", 6, apps...)
	})

	// Rescale down and remove, through a follower.
	follower := apps[0]
	if _, _, acting, _ := follower.node.Leader(); acting {
		follower = apps[1]
	}
	if res, err := follower.node.Rescale(ctx, "work", 4, ScaleOptions{}); err != nil || res.Parallelism != 4 {
		t.Fatalf("rescale to 4: %+v, %v", res, err)
	}
	eventually(t, "4 tasks active once", func() bool { return activeOnce("work", 4, apps...) })
	if err := follower.node.Remove(ctx, "work"); err != nil {
		t.Fatalf("remove: %v", err)
	}
	eventually(t, "no task runs", func() bool {
		for _, a := range apps {
			if len(a.actives()) > 0 {
				return false
			}
		}
		return true
	})

	// A graceful leave: the node says it left.
	leaver := apps[len(apps)-1]
	if err := leaver.node.Leave(ctx); err != nil {
		t.Errorf("leave: %v", err)
	}
	eventually(t, "the left event", func() bool {
		leaver.mu.Lock()
		defer leaver.mu.Unlock()
		return leaver.left
	})

	for _, a := range apps {
		a.close()
		a.mu.Lock()
		for _, p := range a.problems {
			t.Errorf("%s: %s", a.name, p)
		}
		a.mu.Unlock()
	}
	victim.mu.Lock()
	for _, p := range victim.problems {
		t.Errorf("%s: %s", victim.name, p)
	}
	victim.mu.Unlock()
	apps = nil
	checkNoLeak(t, before)
}

// TestReopen: after the event log is renamed, Reopen makes the node write
// on in a new file of the old name, and the renamed one keeps what came
// before; a name that cannot be opened is an error with the reason, and
// the log goes on in the file it had.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/events.jsonl"
	a := startApp(t, "a", nil, WithExpect(1), WithOption("events", path))
	defer a.close()
	eventually(t, "a leads, and logs it", func() bool {
		text, err := os.ReadFile(path)
		return err == nil && strings.Contains(string(text), `"event":"leader"`)
	})
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := a.node.Reopen(); err != nil {
		t.Fatalf("Reopen: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no new file after Reopen: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := a.node.Submit(ctx, JobSpec{Name: "after", Parallelism: 1}); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	eventually(t, "the submit is logged in the new file", func() bool {
		text, err := os.ReadFile(path)
		return err == nil && strings.Contains(string(text), `"after"`)
	})
	if old, _ := os.ReadFile(path + ".1"); strings.Contains(string(old), `"after"`) ||
		!strings.Contains(string(old), `"event":"leader"`) {
		t.Errorf("the renamed file holds the lines before the reopen only:\n%s", old)
	}
	// A directory where the file was: the reopen fails, and says why.
	if err := os.Rename(path, path+".2"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	err := a.node.Reopen()
	var serr *Error
	if !errors.As(err, &serr) || !strings.Contains(serr.Reason, "events.jsonl") {
		t.Errorf("Reopen onto a directory: %v, want an *Error naming the file", err)
	}
	a.close()
	if err := a.node.Reopen(); !errors.Is(err, ErrClosed) {
		t.Errorf("Reopen after Close: %v, want ErrClosed", err)
	}
}
