package transcript

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/corral-dev/corral/internal/claude"
)

// apply merges a delta into what a reader holds, as the web UI does.
func apply(held []TimelineItem, d TimelineDelta) []TimelineItem {
	if d.Reset {
		return slices.Clone(d.Items)
	}
	for _, it := range d.Items {
		if i := slices.IndexFunc(held, func(h TimelineItem) bool { return h.ID == it.ID }); i >= 0 {
			held[i] = it
		} else {
			held = append(held, it)
		}
	}
	return held
}

func same(t *testing.T, what string, got, want []TimelineItem) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("%s:\n got %d items %s\nwant %d items %s", what, len(got), claude.Clip(string(g), 400), len(want), claude.Clip(string(w), 400))
	}
}

// TestTimelineViewDeltas: a reader that applies each answer's delta to
// what it holds has, after every line Claude appends, what a full
// rebuild gives; one with an old or foreign cursor gets everything; a
// replaced transcript starts over.
func TestTimelineViewDeltas(t *testing.T) {
	lines := fixtureLines(t, "transcript.jsonl")
	path := filepath.Join(t.TempDir(), "t.jsonl")
	writeFile(t, path, "")
	v := NewTimelineView(path, 4<<20, 1000)
	d, err := v.Since("")
	if err != nil || !d.Reset || len(d.Items) != 0 {
		t.Fatalf("empty: %+v %v", d, err)
	}
	var held []TimelineItem
	cursor := d.Cursor
	first := cursor
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i, l := range lines {
		f.Write(append(l, '\n'))
		d, err := v.Since(cursor)
		if err != nil || d.Reset {
			t.Fatalf("line %d: reset %v, %v", i, d.Reset, err)
		}
		held = apply(held, d)
		cursor = d.Cursor
		entries, _ := ReadTail(path, 4<<20)
		same(t, fmt.Sprint("after line ", i), held, Timeline(entries))
	}
	// A half-written line is not read until its newline.
	f.Write([]byte(`{"type":"user","message":{"role":"user","content":"half`))
	if d, _ := v.Since(cursor); len(d.Items) != 0 || d.Cursor != cursor {
		t.Fatalf("a partial line: %+v", d)
	}
	// A reader from the start of this build gets every change since.
	d, _ = v.Since(first)
	if d.Reset {
		t.Fatal("a cursor of this build reset")
	}
	same(t, "from the first cursor", apply(nil, d), held)
	epoch, _, _ := parseCursor(first)
	for _, c := range []string{"", "x", "other:0", epoch + ":99999999", epoch + ":-1"} {
		if d, _ := v.Since(c); !d.Reset || len(d.Items) != len(held) {
			t.Errorf("cursor %q: reset %v, %d items", c, d.Reset, len(d.Items))
		}
	}
	// Replaced by a shorter file: everything again, in a new build.
	writeFile(t, path, string(lines[3])+"\n")
	d, _ = v.Since(cursor)
	if !d.Reset || len(d.Items) != 1 || d.Items[0].Text != "say hello" {
		t.Fatalf("after the transcript was replaced: %+v", d)
	}
}

// TestTimelineViewTrim: the view keeps at most twice its items and answers
// with the last ones, also after trimming.
func TestTimelineViewTrim(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	writeFile(t, path, "")
	v := NewTimelineView(path, 4<<20, 5)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	defer f.Close()
	cursor := ""
	var held []TimelineItem
	for i := range 30 {
		e, _ := json.Marshal(map[string]any{"type": "user", "uuid": "u" + string(rune('a'+i)), "timestamp": "2026-11-29T22:23:08.673Z",
			"message": map[string]any{"role": "user", "content": "prompt " + string(rune('a'+i))}, "promptSource": "typed"})
		f.Write(append(e, '\n'))
		d, err := v.Since(cursor)
		if err != nil {
			t.Fatal(err)
		}
		held, cursor = apply(held, d), d.Cursor
		if n := len(v.b.items); n > 10 {
			t.Fatalf("%d items kept", n)
		}
	}
	d, _ := v.Since("")
	if len(d.Items) != 5 || d.Items[4].ID != held[len(held)-1].ID {
		t.Fatalf("the last 5: %+v", d.Items)
	}
}
