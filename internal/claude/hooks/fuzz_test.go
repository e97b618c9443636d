package hooks

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

func FuzzParseHook(f *testing.F) {
	for _, l := range fixtureLines(f, "hooks.jsonl") {
		f.Add(l)
	}
	f.Add([]byte(`{"hook_event_name":"Stop","error":[1]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
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
		q, err := Parse(out)
		if err != nil || q.HookEventName != p.HookEventName || q.SessionID != p.SessionID {
			t.Fatalf("re-parse: %+v %v", q, err)
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
		if own := ownHooks(t, installed); len(own) != len(Events()) {
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
