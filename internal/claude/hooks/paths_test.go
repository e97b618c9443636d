package hooks

import (
	"testing"

	"github.com/corral-dev/corral/internal/claude"
)

func TestTranscriptPathFixture(t *testing.T) {
	p, err := Parse(fixtureLines(t, "hooks.jsonl")[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := claude.TranscriptPath("/home/dev/.claude", p.CWD, p.SessionID); got != p.TranscriptPath {
		t.Fatalf("TranscriptPath = %q, Claude said %q", got, p.TranscriptPath)
	}
}
