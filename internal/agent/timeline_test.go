package agent

import (
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude/screen"
)

// TestBoundLive: a running tool's output keeps its last api.LiveLines
// lines, the others counted as hidden, each cut on a character boundary.
func TestBoundLive(t *testing.T) {
	var lines []string
	for range api.LiveLines + 5 {
		lines = append(lines, "x")
	}
	lines[len(lines)-1] = strings.Repeat("é", api.LiveLineBytes) // 2 bytes each
	l := boundLive(screen.ToolOutput{Tool: "Bash", Header: "Bash(x)", Lines: lines, Hidden: 3})
	if len(l.Lines) != api.LiveLines || l.Hidden != 8 {
		t.Errorf("%d lines, %d hidden; want %d, 8", len(l.Lines), l.Hidden, api.LiveLines)
	}
	last := l.Lines[len(l.Lines)-1]
	if len(last) != api.LiveLineBytes || strings.Trim(last, "é") != "" {
		t.Errorf("last line cut to %d bytes (%q...)", len(last), last[:4])
	}
}
