package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/claude"
)

func TestListResumable(t *testing.T) {
	home := t.TempDir()
	cwd := "/home/dev/proj"
	dir := claude.ProjectDir(home, cwd)
	if got, err := ListResumable(home, cwd, 0); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("missing folder: %#v %v", got, err)
	}

	fixture := string(readFixture(t, "transcript.jsonl"))
	writeFile(t, filepath.Join(dir, "bcc27dbc.jsonl"), fixture)
	writeFile(t, filepath.Join(dir, "empty.jsonl"), "")
	writeFile(t, filepath.Join(dir, "noprompt.jsonl"), `{"type":"mode","mode":"normal"}`+"\n")
	writeFile(t, filepath.Join(dir, "agent-1.jsonl"), line("x"))
	writeFile(t, filepath.Join(dir, "notes.txt"), "x")
	if err := os.MkdirAll(filepath.Join(dir, "bcc27dbc", "subagents"), 0o755); err != nil {
		t.Fatal(err)
	}

	// A big transcript: first prompt at the head, a last-prompt entry at the
	// tail, megabytes in between that must not be needed.
	var b strings.Builder
	b.WriteString(`{"type":"user","message":{"role":"user","content":"first big"},"uuid":"1"}` + "\n")
	filler := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("f", 1000) + `"}]}}` + "\n"
	for b.Len() < 3<<20 {
		b.WriteString(filler)
	}
	b.WriteString(`{"type":"user","message":{"role":"user","content":"typed last"},"uuid":"2"}` + "\n")
	b.WriteString(`{"type":"last-prompt","lastPrompt":"recorded last"}` + "\n")
	big := b.String()
	writeFile(t, filepath.Join(dir, "big.jsonl"), big)

	// No last-prompt entry: the last typed prompt is used.
	writeFile(t, filepath.Join(dir, "small.jsonl"), `{"type":"user","message":{"role":"user","content":"only `+strings.Repeat("long ", 200)+`"}}`+"\n")

	now := time.Now()
	for name, age := range map[string]time.Duration{"bcc27dbc": 3 * time.Hour, "big": time.Hour, "small": 2 * time.Hour} {
		mt := now.Add(-age)
		if err := os.Chtimes(filepath.Join(dir, name+".jsonl"), mt, mt); err != nil {
			t.Fatal(err)
		}
	}

	got, err := ListResumable(home, cwd, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, ",") != "big,small,bcc27dbc" {
		t.Fatalf("ids %v", ids)
	}
	if r := got[0]; r.FirstPrompt != "first big" || r.LastPrompt != "recorded last" || r.Size != int64(len(big)) ||
		r.Path != filepath.Join(dir, "big.jsonl") || r.LastActivity.Sub(now.Add(-time.Hour)).Abs() > time.Second {
		t.Errorf("big: %+v", r)
	}
	if r := got[1]; !strings.HasPrefix(r.FirstPrompt, "only long") || r.FirstPrompt != r.LastPrompt || len([]rune(r.FirstPrompt)) > maxPromptPreview+1 {
		t.Errorf("small: %q / %q", r.FirstPrompt, r.LastPrompt)
	}
	if r := got[2]; r.FirstPrompt != "say hello" || r.LastPrompt != "FAIL please" {
		t.Errorf("fixture: %+v", r)
	}

	if got, err := ListResumable(home, cwd, 2); err != nil || len(got) != 2 || got[0].ID != "big" {
		t.Fatalf("limit: %v %v", got, err)
	}
}

func TestListResumableSymlinkedDir(t *testing.T) {
	home := t.TempDir()
	real := filepath.Join(home, "real")
	link := filepath.Join(home, "link")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	// Claude recorded the session under the resolved path.
	writeFile(t, claude.TranscriptPath(home, real, "s1"), `{"type":"user","message":{"content":"hi"}}`+"\n")
	got, err := ListResumable(home, link, 0)
	if err != nil || len(got) != 1 || got[0].ID != "s1" {
		t.Fatalf("%v %v", got, err)
	}
}

// TestSaved: only a regular file with something in it is a conversation
// Claude can resume.
func TestSaved(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.jsonl")
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(full, []byte(`{"type":"user"}`+"\n"), 0o600)
	os.WriteFile(empty, nil, 0o600)
	for path, want := range map[string]bool{full: true, empty: false, dir: false, filepath.Join(dir, "missing.jsonl"): false} {
		if got := Saved(path); got != want {
			t.Errorf("Saved(%s) = %v, want %v", filepath.Base(path), got, want)
		}
	}
}
