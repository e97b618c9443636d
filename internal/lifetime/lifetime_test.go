package lifetime

import (
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWaitWaitsForEveryGoroutine(t *testing.T) {
	var g Group
	var done atomic.Int32
	release := make(chan struct{})
	for range 10 {
		if !g.Go(func() { <-release; done.Add(1) }) {
			t.Fatal("Go refused before Close")
		}
	}
	waited := make(chan struct{})
	go func() { g.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned while goroutines ran")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-waited
	if n := done.Load(); n != 10 {
		t.Fatalf("Wait returned with %d of 10 done", n)
	}
}

func TestGoAfterCloseIsRefused(t *testing.T) {
	var g Group
	g.Close()
	if g.Go(func() { t.Error("ran after Close") }) {
		t.Fatal("Go accepted after Close")
	}
	g.Wait()
}

// A goroutine of the group that starts another while Wait waits (a timer
// firing during shutdown) is refused, never raced: run with -race.
func TestGoDuringWait(t *testing.T) {
	var g Group
	started := make(chan struct{})
	refused := make(chan bool, 1)
	g.Go(func() {
		close(started)
		for !closed(&g) { // until Wait has closed the group
			time.Sleep(time.Millisecond)
		}
		refused <- !g.Go(func() {})
	})
	<-started
	g.Wait()
	if !<-refused {
		t.Fatal("a goroutine started during Wait")
	}
}

// Go from many goroutines racing Wait: each one accepted is waited for.
func TestGoRacingWait(t *testing.T) {
	for range 100 {
		var g Group
		var accepted, ran atomic.Int32
		start := make(chan struct{})
		var outside Group
		for range 8 {
			outside.Go(func() {
				<-start
				if g.Go(func() { ran.Add(1) }) {
					accepted.Add(1)
				}
			})
		}
		close(start)
		g.Wait()
		outside.Wait()
		g.Wait()
		if accepted.Load() != ran.Load() {
			t.Fatalf("accepted %d, ran %d", accepted.Load(), ran.Load())
		}
	}
}

// A joined goroutine is waited for like one the group started.
func TestJoin(t *testing.T) {
	var g Group
	leave, ok := g.Join()
	if !ok {
		t.Fatal("Join refused before Close")
	}
	waited := make(chan struct{})
	go func() { g.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned before leave")
	case <-time.After(20 * time.Millisecond):
	}
	for !closed(&g) {
		time.Sleep(time.Millisecond)
	}
	if _, ok := g.Join(); ok {
		t.Error("Join accepted while Wait waits")
	}
	leave()
	leave() // twice is once
	<-waited
}

func closed(g *Group) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}
