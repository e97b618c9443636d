package link

import (
	"context"
	"testing"

	"github.com/corral-dev/corral/internal/api"
)

// A Call round trip: the hub asks for a screen, the agent answers from its
// handler goroutine.
//
//	go test ./internal/link -run '^$' -bench Call -benchmem
func BenchmarkCall(b *testing.B) {
	for _, kind := range connKinds {
		b.Run(kind, func(b *testing.B) {
			c := newConns(b, kind)
			var ag running
			ag = run(b, c.a, Options{OnMsg: func(m Msg) {
				ag.Reply(m.ID, api.Screen{Text: "$ ", Cols: 80, Rows: 24}, nil)
			}})
			hub := run(b, c.b, Options{})
			ctx := context.Background()
			var scr api.Screen
			b.ReportAllocs()
			for b.Loop() {
				if err := hub.Call(ctx, "capture", api.CaptureRequest{SessionRef: api.SessionRef{ID: "s1"}}, &scr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Output frames of 4 KiB, agent to hub, as fast as the hub takes them.
func BenchmarkOutputFrames(b *testing.B) {
	for _, kind := range connKinds {
		b.Run(kind, func(b *testing.B) {
			c := newConns(b, kind)
			run(b, c.b, Options{OnFrame: func(Frame) {}})
			ag := run(b, c.a, Options{})
			data := make([]byte, 4096)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			var off uint64
			for b.Loop() {
				if err := ag.SendFrame(OutputFrame(1, off, data)); err != nil {
					b.Fatal(err)
				}
				off += uint64(len(data))
			}
		})
	}
}
