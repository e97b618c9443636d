package link

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A writer whose reader stopped blocks once a few MiB are queued; memory
// stays put; reading resumes it.
func TestPipeBackpressure(t *testing.T) {
	a, b := Pipe()
	defer a.Close(StatusNormal, "")
	ctx := ctxT(t)
	chunk := make([]byte, MaxOutputChunk)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	var written atomic.Int64
	writerDone := make(chan error, 1)
	const total = 300 // 19 MiB if nothing pushed back
	go func() {
		for range total {
			if err := a.Write(ctx, Binary, chunk); err != nil {
				writerDone <- err
				return
			}
			written.Add(1)
		}
		writerDone <- nil
	}()
	// Wait until the writer makes no more progress.
	last := int64(-1)
	for n := written.Load(); n != last; n = written.Load() {
		last = n
		time.Sleep(50 * time.Millisecond)
	}
	bytes, items := b.(*pipeEnd).p.buffered(1)
	maxItems := pipeBytes/(MaxOutputChunk+pipeOverhead) + 1
	if last > int64(maxItems) || bytes > pipeBytes || items != int(last) {
		t.Fatalf("writer got %d messages through (%d bytes queued) with nobody reading; the bound is %d", last, bytes, maxItems)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 4*pipeBytes {
		t.Errorf("heap grew by %d bytes while the reader slept", grew)
	}
	select {
	case err := <-writerDone:
		t.Fatalf("writer finished while nobody read: %v", err)
	default:
	}
	// Reading lets everything through, in order.
	for i := range total {
		k, m, err := b.Read(ctx)
		if err != nil || k != Binary || len(m) != len(chunk) {
			t.Fatalf("read %d: %v %d %v", i, k, len(m), err)
		}
	}
	if err := <-writerDone; err != nil {
		t.Fatal(err)
	}
}

// Many small messages are bounded too, by count.
func TestPipeBoundsMessageCount(t *testing.T) {
	a, b := Pipe()
	defer a.Close(StatusNormal, "")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	n := 0
	for ; n < 10*pipeItems; n++ {
		if err := a.Write(ctx, Text, []byte("{}")); err != nil {
			break
		}
	}
	if n != pipeItems {
		t.Errorf("%d messages queued, want %d", n, pipeItems)
	}
	// The blocked write's context ended: the connection is dropped.
	_, _, err := b.Read(context.Background())
	for err == nil {
		_, _, err = b.Read(context.Background())
	}
	if CloseStatus(err) != StatusAbnormal {
		t.Errorf("after a write timed out: %v", err)
	}
}

func TestPipeCloseWakesBlocked(t *testing.T) {
	a, b := Pipe()
	ctx := ctxT(t)
	reading := make(chan error, 1)
	go func() {
		_, _, err := a.Read(ctx)
		reading <- err
	}()
	big := make([]byte, MaxFrame)
	if err := a.Write(ctx, Binary, big); err != nil { // the next one waits
		t.Fatal(err)
	}
	writing := make(chan error, 1)
	go func() { writing <- a.Write(ctx, Binary, big) }()
	time.Sleep(20 * time.Millisecond)
	if err := b.Close(StatusGoingAway, "bye"); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]chan error{"read": reading, "write": writing} {
		select {
		case err := <-ch:
			var ce *CloseError
			if !errors.As(err, &ce) || ce.Code != StatusGoingAway || ce.Reason != "bye" || !ce.Remote {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still blocked after Close", name)
		}
	}
	// The end that closed is closed for good, and drops what was queued.
	if _, _, err := b.Read(ctx); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read on the closed end: %v", err)
	}
	if bytes, items := b.(*pipeEnd).p.buffered(1); bytes != 0 || items != 0 {
		t.Errorf("%d bytes, %d messages kept for an end that closed", bytes, items)
	}
}

// Concurrent writers: every message arrives whole, each writer's in order.
func TestPipeConcurrentWrites(t *testing.T) {
	a, b := Pipe()
	defer a.Close(StatusNormal, "")
	ctx := ctxT(t)
	const writers, each = 8, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				m := make([]byte, 8+(i%50)*100)
				binary.BigEndian.PutUint32(m, uint32(w))
				binary.BigEndian.PutUint32(m[4:], uint32(i))
				for j := 8; j < len(m); j++ {
					m[j] = byte(w + i)
				}
				if err := a.Write(ctx, Binary, m); err != nil {
					t.Error(err)
					return
				}
				clear(m) // the pipe copied it
			}
		})
	}
	next := make([]uint32, writers)
	for range writers * each {
		_, m, err := b.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		w, i := binary.BigEndian.Uint32(m), binary.BigEndian.Uint32(m[4:])
		if i != next[w] {
			t.Fatalf("writer %d: message %d, want %d", w, i, next[w])
		}
		next[w]++
		for _, c := range m[8:] {
			if c != byte(w+i) {
				t.Fatalf("writer %d message %d corrupted", w, i)
			}
		}
	}
	wg.Wait()
}

// buffered returns the bytes and messages waiting for end i.
func (p *pipe) buffered(i int) (bytes, items int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.q[i].bytes, p.q[i].len()
}
