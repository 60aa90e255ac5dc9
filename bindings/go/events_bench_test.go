package shoal

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// benchTasks is how many events each round of the benchmark queues: the
// starts of a job of that many tasks, then their stops.
const benchTasks = 1000

// benchNode is a lone node that leads itself, whose queue the benchmark
// takes itself (no pump).
func benchNode(b *testing.B) *Node {
	n, err := New(WithDataDir(b.TempDir()), WithBind("127.0.0.1:0"), WithBeaconPort(0),
		WithProfile("loopback"), WithExpect(1), WithOption("log-level", "error"))
	if err != nil {
		b.Fatal(err)
	}
	n.pumpOff = true
	if err := n.Start(); err != nil {
		b.Fatal(err)
	}
	return n
}

// benchRound queues benchTasks starts (a job submitted), then benchTasks
// stops (the job removed), and takes each batch with take, which says how
// many it took and in what time. Waiting for a batch is not timed.
func benchRound(b *testing.B, n *Node, round int, take func() (int, time.Duration)) (int, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	job := fmt.Sprintf("bench%d", round)
	total, took := 0, time.Duration(0)
	if _, err := n.Submit(ctx, JobSpec{Name: job, Parallelism: benchTasks}); err != nil {
		b.Fatal(err)
	}
	for {
		tasks, _, err := n.Tasks()
		if err != nil {
			b.Fatal(err)
		}
		if len(tasks) >= benchTasks {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	count, d := take()
	total, took = total+count, took+d
	if err := n.Remove(ctx, job); err != nil {
		b.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the stops queue up
	count, d = take()
	return total + count, took + d
}

// BenchmarkEventsGo: what the binding costs per event: the cgo call to
// shoal_node_event, the conversion to an Event and the send on the
// channel, with a goroutine receiving (as the pump runs it).
func BenchmarkEventsGo(b *testing.B) {
	n := benchNode(b)
	defer n.Close()
	received := make(chan int)
	go func() {
		count := 0
		for range n.events {
			count++
		}
		received <- count
	}()
	took := time.Duration(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The receiver counts the events: the drain only times them.
		_, d := benchRound(b, n, i, func() (int, time.Duration) { return 0, n.benchDrainGo() })
		took += d
	}
	b.StopTimer()
	n.Close()
	report(b, <-received, took)
}

// BenchmarkEventsC: the same events taken in a C loop over
// shoal_node_event, with no Go in between.
func BenchmarkEventsC(b *testing.B) {
	n := benchNode(b)
	defer n.Close()
	events, took := 0, time.Duration(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		count, d := benchRound(b, n, i, n.benchDrainC)
		events, took = events+count, took+d
	}
	b.StopTimer()
	report(b, events, took)
}

func report(b *testing.B, events int, took time.Duration) {
	if events == 0 {
		b.Fatal("no event taken")
	}
	b.ReportMetric(float64(took.Nanoseconds())/float64(events), "ns/event")
	b.ReportMetric(float64(events), "events")
}

// BenchmarkEventsCgo: the cgo call to shoal_node_event alone, per event.
func BenchmarkEventsCgo(b *testing.B) { benchCgo(b, false) }

// BenchmarkEventsConvert: the cgo call and the conversion to an Event,
// with no channel.
func BenchmarkEventsConvert(b *testing.B) { benchCgo(b, true) }

func benchCgo(b *testing.B, convert bool) {
	n := benchNode(b)
	defer n.Close()
	events, took := 0, time.Duration(0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		count, d := benchRound(b, n, i, func() (int, time.Duration) { return n.benchDrainCgo(convert) })
		events, took = events+count, took+d
	}
	b.StopTimer()
	report(b, events, took)
}
