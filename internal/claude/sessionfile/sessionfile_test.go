package sessionfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseSessionFileFixture(t *testing.T) {
	want := map[string][2]string{ // status, waitingFor
		"1-started":           {"idle", ""},
		"2-replied":           {"idle", ""},
		"3-permission":        {"waiting", "permission prompt"},
		"4-approved":          {"idle", ""},
		"5-rejected":          {"idle", ""},
		"6-interrupted-early": {"idle", ""},
		"7-busy":              {"busy", ""},
		"8-done":              {"idle", ""},
		"9-failed":            {"idle", ""},
		"10-compacted":        {"idle", ""},
	}
	for name, w := range want {
		s, err := Parse(readFixture(t, "sessions/"+name+".json"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Status != w[0] || s.WaitingFor != w[1] {
			t.Errorf("%s: status %q waitingFor %q, want %q %q", name, s.Status, s.WaitingFor, w[0], w[1])
		}
		if s.PID != 9880 || s.SessionID != "bcc27dbc-b3d2-457e-9e21-34e69eba33f2" || s.CWD != "/home/dev/proj" ||
			s.ProcStart != "31217" || s.Kind != "interactive" || s.Version != "2.1.197" || s.Name != "proj-9b" {
			t.Errorf("%s: %+v", name, s)
		}
		if s.Started() != time.UnixMilli(1795990982912) || s.StatusChanged().IsZero() {
			t.Errorf("%s: times %v %v", name, s.Started(), s.StatusChanged())
		}
	}
}

func TestParseSessionFileRejects(t *testing.T) {
	for _, in := range []string{"", "{", "[]", `{"sessionId":"x"}`, `{"pid":0}`, `{"pid":-3}`, `{"pid":"12"}`, `{"pid":1.5}`} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded", in)
		}
	}
	if _, err := Parse([]byte(`{"pid":1,"x":"` + strings.Repeat("a", MaxSize) + `"}`)); err == nil {
		t.Error("oversize session file accepted")
	}
}

func TestSessionFilePID(t *testing.T) {
	cases := map[string]int{
		"9880.json": 9880, "1.json": 1,
		"0.json": 0, ".json": 0, "9880.json.tmp": 0, ".9880.json": 0, "12a.json": 0,
		"-1.json": 0, "99999999999.json": 0, "9880.JSON": 0,
	}
	for name, want := range cases {
		got, ok := PID(name)
		if got != want || ok != (want > 0) {
			t.Errorf("PID(%q) = %d %v, want %d", name, got, ok, want)
		}
	}
}

func TestReadSessionFiles(t *testing.T) {
	home := t.TempDir()
	dir := Dir(home)
	if got, err := ReadDir(dir); err != nil || len(got) != 0 {
		t.Fatalf("missing dir: %v %v", got, err)
	}
	writeFile(t, filepath.Join(dir, "9880.json"), string(readFixture(t, "sessions/7-busy.json")))
	writeFile(t, filepath.Join(dir, "12.json"), `{"pid":12,"sessi`) // mid-write
	writeFile(t, filepath.Join(dir, "notes.txt"), "x")
	if err := os.Mkdir(filepath.Join(dir, "77.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].PID != 9880 || got[0].Status != Busy {
		t.Fatalf("got %+v", got)
	}
}

func TestDir(t *testing.T) {
	if got := Dir("/srv/claude-work"); got != "/srv/claude-work/sessions" {
		t.Errorf("Dir = %q", got)
	}
}
