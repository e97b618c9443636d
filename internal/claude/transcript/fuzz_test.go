package transcript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func FuzzParseEntry(f *testing.F) {
	for _, l := range fixtureLines(f, "transcript.jsonl") {
		f.Add(l)
	}
	f.Add([]byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"tool_result","content":"x"}]}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseEntry(b)
		if err != nil {
			return
		}
		if e.Type == "" {
			t.Fatal("accepted without a type")
		}
		_ = Signals(e)
		_ = Timeline([]Entry{e, e})
		_ = TurnStateOf([]Entry{e})
		var u UsageTotals
		u.Add(e)
		u.Add(e)
		if u.Input < 0 && e.Message != nil && e.Message.Usage != nil && e.Message.Usage.InputTokens >= 0 {
			t.Fatal("negative total from non-negative usage")
		}
		if _, err := json.Marshal(e); err != nil {
			t.Fatalf("entry does not marshal: %v", err)
		}
	})
}

// FuzzTailer checks that reading a file in two steps (split anywhere)
// yields the same entries as reading it whole.
func FuzzTailer(f *testing.F) {
	data := readFixture(f, "transcript.jsonl")
	f.Add(data[:4000], 1234)
	f.Add([]byte("{\"type\":\"a\"}\n{\"type\":\"b\"}\r\nbad\n{\"type\""), 7)
	f.Fuzz(func(t *testing.T, b []byte, split int) {
		if len(b) > 1<<16 {
			return
		}
		if split < 0 {
			split = -split
		}
		split %= len(b) + 1
		dir := t.TempDir()
		whole := filepath.Join(dir, "whole")
		parts := filepath.Join(dir, "parts")
		if err := os.WriteFile(whole, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(parts, b[:split], 0o644); err != nil {
			t.Fatal(err)
		}
		w := NewTailer(whole, Position{})
		w.MaxLine = 512
		want, err := w.Read()
		if err != nil {
			t.Fatal(err)
		}
		p := NewTailer(parts, Position{})
		p.MaxLine = 512
		first, err := p.Read()
		if err != nil {
			t.Fatal(err)
		}
		fh, err := os.OpenFile(parts, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fh.Write(b[split:]); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		second, err := p.Read()
		if err != nil {
			t.Fatal(err)
		}
		got := append(first.Entries, second.Entries...)
		if !reflect.DeepEqual(got, want.Entries) && !(len(got) == 0 && len(want.Entries) == 0) {
			t.Fatalf("split read differs: %d vs %d entries", len(got), len(want.Entries))
		}
		if first.Bad+second.Bad != want.Bad {
			t.Fatalf("bad lines: %d+%d vs %d", first.Bad, second.Bad, want.Bad)
		}
		if p.Position().Offset != w.Position().Offset {
			t.Fatalf("offsets %d vs %d", p.Position().Offset, w.Position().Offset)
		}
	})
}
