package claude

// Fuzz targets for every parser. Seeds come from the real 2.1.197
// fixtures; plain `go test` runs the seeds, and
//
//	go test ./internal/claude -run '^$' -fuzz '^FuzzParseEntry$' -fuzztime 1m
//
// explores one target (one -fuzz pattern at a time).

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParseHook(f *testing.F) {
	for _, l := range fixtureLines(f, "hooks.jsonl") {
		f.Add(l)
	}
	f.Add([]byte(`{"hook_event_name":"Stop","error":[1]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseHook(b)
		if err != nil {
			return
		}
		if p.HookEventName == "" {
			t.Fatal("accepted without an event name")
		}
		_, _ = p.WaitsForPerson()
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParseHook(out)
		if err != nil || q.HookEventName != p.HookEventName || q.SessionID != p.SessionID {
			t.Fatalf("re-parse: %+v %v", q, err)
		}
	})
}

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

func FuzzParseStatusLine(f *testing.F) {
	for _, l := range fixtureLines(f, "statusline.jsonl") {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStatusLine(b)
		if err != nil {
			return
		}
		u := s.Usage()
		if u.Model != s.Model.ID {
			t.Fatal("model lost")
		}
	})
}

func FuzzProjectDirName(f *testing.F) {
	f.Add("/home/dev/proj")
	f.Add("/tmp/ünï/😀")
	f.Add("/" + strings.Repeat("a", 250))
	f.Add("\xff\xfe/x")
	f.Fuzz(func(t *testing.T, cwd string) {
		name := ProjectDirName(cwd)
		if len(name) > maxProjectDirName+1+7 {
			t.Fatalf("name too long: %d", len(name))
		}
		for i := 0; i < len(name); i++ {
			if !isAlnum(name[i]) && name[i] != '-' {
				t.Fatalf("bad byte %q in %q", name[i], name)
			}
		}
		if utf8.ValidString(cwd) && len(utf16Units(cwd)) <= maxProjectDirName && len(name) != len(utf16Units(cwd)) {
			t.Fatalf("short name changed length: %q -> %q", cwd, name)
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

// FuzzInstallUninstall checks that install never breaks a settings file
// and that uninstall gives the user's data back.
func FuzzInstallUninstall(f *testing.F) {
	f.Add([]byte(userSettings))
	f.Add([]byte(`{}`))
	f.Add([]byte(``))
	f.Add([]byte(`{"hooks":{"Stop":[]},"statusLine":null}`))
	f.Add([]byte(`{"a":{"b":[1,"<&>"]},"a":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<14 {
			return
		}
		home := t.TempDir()
		path := SettingsPath(home)
		writeFile(t, path, string(b))
		res, err := InstallGlobal(home, testHook, testStatus)
		if err != nil {
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, b) || len(backups(t, home)) != 0 {
				t.Fatal("a refused file was changed")
			}
			return
		}
		installed := readSettings(t, home)
		if own := ownHooks(t, installed); len(own) != len(HookEvents()) {
			t.Fatalf("hooks after install: %v", own)
		}
		if res.Changed && res.Backup != "" {
			if bk, _ := os.ReadFile(res.Backup); !bytes.Equal(bk, b) {
				t.Fatal("backup differs from the original")
			}
		}
		if _, err := UninstallGlobal(home); err != nil {
			t.Fatalf("uninstall: %v", err)
		}
		if bytes.Contains(b, []byte("corral")) {
			return // the user's own corral entries are removed too
		}
		var orig, final any
		if len(bytes.TrimSpace(b)) == 0 {
			orig = map[string]any{}
		} else if err := json.Unmarshal(b, &orig); err != nil {
			t.Fatalf("install accepted invalid JSON: %v", err)
		}
		if err := json.Unmarshal(readSettings(t, home), &final); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(dropEmptyHooks(orig), dropEmptyHooks(final)) {
			t.Fatalf("round trip changed the data:\n%s\n%s", b, readSettings(t, home))
		}
	})
}

// dropEmptyHooks removes what install+uninstall may legitimately drop: a
// null or empty hooks object and empty or null event lists.
func dropEmptyHooks(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if h, ok := m["hooks"].(map[string]any); ok {
		for k, ev := range h {
			if l, ok := ev.([]any); ev == nil || ok && len(l) == 0 {
				delete(h, k)
			}
		}
		if len(h) == 0 {
			delete(m, "hooks")
		}
	} else if m["hooks"] == nil {
		delete(m, "hooks")
	}
	if m["statusLine"] == nil {
		delete(m, "statusLine")
	}
	return m
}
