package transcript

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/corral-dev/corral/internal/api"
)

// benchTranscript writes a transcript of at least size bytes made of the
// real recording repeated (with fresh uuids and tool ids each time), and
// returns its path and a source of further lines, as Claude appends them.
func benchTranscript(b *testing.B, size int) (string, func() []byte) {
	b.Helper()
	lines := fixtureLines(b, "transcript.jsonl")
	uuid := regexp.MustCompile(`"[0-9a-f]{8}(-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"`)
	tool := regexp.MustCompile(`"toolu_([0-9A-Za-z]+)"`)
	rep, i := 0, 0
	next := func() []byte {
		l := lines[i]
		l = uuid.ReplaceAll(l, fmt.Appendf(nil, `"%08x$1"`, rep))
		l = tool.ReplaceAll(l, fmt.Appendf(nil, `"toolu_${1}r%d"`, rep))
		if i++; i == len(lines) {
			i, rep = 0, rep+1
		}
		return append(l, '\n')
	}
	path := filepath.Join(b.TempDir(), "t.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for n := 0; n < size; {
		k, err := f.Write(next())
		if err != nil {
			b.Fatal(err)
		}
		n += k
	}
	return path, next
}

func appendLine(b *testing.B, path string, line []byte) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(line); err != nil {
		b.Fatal(err)
	}
	f.Close()
}

// BenchmarkTimelinePerEvent is the server's cost of one event for a
// reader of the timeline of a 10 MiB transcript: Claude appends a line,
// and the timeline is answered again as the agent answers it (read,
// build, encode): "full" as it did before deltas, rereading the tail;
// "delta" as it does now. docs/benchmarks.md §8.
func BenchmarkTimelinePerEvent(b *testing.B) {
	b.Run("full", func(b *testing.B) {
		path, next := benchTranscript(b, 10<<20)
		var bytes int
		b.ResetTimer()
		for b.Loop() {
			appendLine(b, path, next())
			// What agent.Timeline does for every request.
			entries, err := ReadTail(path, 4<<20)
			if err != nil {
				b.Fatal(err)
			}
			items := Timeline(entries)
			if len(items) > 1000 {
				items = items[len(items)-1000:]
			}
			out, err := json.Marshal(api.Timeline{Items: items})
			if err != nil {
				b.Fatal(err)
			}
			bytes += len(out)
		}
		b.ReportMetric(float64(bytes)/float64(b.N), "answer-B/op")
	})
	b.Run("delta", func(b *testing.B) {
		path, next := benchTranscript(b, 10<<20)
		// What the agent does now (agent.Timeline): a view made at the
		// reader's first request, then what changed since its cursor.
		v := NewTimelineView(path, 4<<20, 1000)
		d, err := v.Since("")
		if err != nil {
			b.Fatal(err)
		}
		cursor := d.Cursor
		var bytes int
		b.ResetTimer()
		for b.Loop() {
			appendLine(b, path, next())
			d, err := v.Since(cursor)
			if err != nil || d.Reset {
				b.Fatal(err, d.Reset)
			}
			cursor = d.Cursor
			out, err := json.Marshal(api.Timeline{Items: d.Items, Cursor: d.Cursor})
			if err != nil {
				b.Fatal(err)
			}
			bytes += len(out)
		}
		b.ReportMetric(float64(bytes)/float64(b.N), "answer-B/op")
	})
}
