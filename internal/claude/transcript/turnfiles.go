package transcript

import (
	"encoding/json"
	"strings"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
)

// The files a turn changed: each editing tool call that succeeded adds its
// file to the turn's prompt item (TimelineItem.Files), with the lines it
// added and removed, exact when Claude recorded its patch
// (toolUseResult.structuredPatch), else estimated from the edit. Changes
// made by other means (a Bash command) are not seen here; git's view
// (docs/git.md) has them.

// maxTurnFiles bounds the files listed on one prompt.
const maxTurnFiles = 500

// turnChanged adds what a finished tool call changed to the current
// turn's prompt, and returns the prompt item if that changed it. result is
// the entry's toolUseResult (nil if it cannot be told whose it is).
func (b *TimelineBuilder) turnChanged(tc *ToolCall, result json.RawMessage) (TimelineItem, bool) {
	if b.turn == 0 || tc == nil || tc.IsError {
		return TimelineItem{}, false
	}
	tf, ok := turnFileOf(tc, result)
	if !ok {
		return TimelineItem{}, false
	}
	it := b.items[b.turn-1]
	files := append([]api.TurnFile(nil), it.Files...)
	found := false
	for i := range files {
		if files[i].Path == tf.Path {
			files[i].Added += tf.Added
			files[i].Removed += tf.Removed
			files[i].Edits++
			found = true
			break
		}
	}
	if !found {
		if len(files) >= maxTurnFiles {
			return TimelineItem{}, false
		}
		files = append(files, tf)
	}
	it.Files = files
	b.items[b.turn-1] = it
	return it, true
}

func countResults(blocks []Block) int {
	n := 0
	for _, blk := range blocks {
		if blk.Type == BlockToolResult {
			n++
		}
	}
	return n
}

// turnFileOf is the file one editing tool call changed.
func turnFileOf(tc *ToolCall, result json.RawMessage) (api.TurnFile, bool) {
	var tf api.TurnFile
	switch tc.Name {
	case "Edit", "MultiEdit", "Write":
		if len(tc.Edits) == 0 {
			return tf, false
		}
		tf.Path = tc.Edits[0].Path
		for _, e := range tc.Edits {
			add, del := estimate(e.Old, e.New)
			tf.Added += add
			tf.Removed += del
		}
	case "NotebookEdit":
		var in struct {
			Path   string `json:"notebook_path"`
			Source string `json:"new_source"`
			Mode   string `json:"edit_mode"`
		}
		if claude.DecodeLoose(tc.Input, &in) != nil || in.Path == "" {
			return tf, false
		}
		tf.Path = in.Path
		if in.Mode != "delete" {
			tf.Added = lineCount(in.Source)
		}
	default:
		return tf, false
	}
	tf.Edits = 1
	var res struct {
		Type     string `json:"type"`
		FilePath string `json:"filePath"`
		Patch    *[]struct {
			Lines []string `json:"lines"`
		} `json:"structuredPatch"`
	}
	if len(result) > 0 && result[0] == '{' && claude.DecodeLoose(result, &res) == nil && (res.FilePath == "" || res.FilePath == tf.Path) {
		tf.Created = res.Type == "create"
		if res.Patch != nil && !tf.Created {
			// Claude's own patch of the change: exact.
			tf.Added, tf.Removed = 0, 0
			for _, h := range *res.Patch {
				for _, l := range h.Lines {
					switch {
					case strings.HasPrefix(l, "+"):
						tf.Added++
					case strings.HasPrefix(l, "-"):
						tf.Removed++
					}
				}
			}
		}
	}
	return tf, true
}

// estimate counts the lines an edit adds and removes, the lines old and
// new share at their start and end left out: exact for one change in one
// place, as most edits are.
func estimate(old, new string) (added, removed int) {
	a, b := splitLines(old), splitLines(new)
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	return len(b), len(a)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func lineCount(s string) int { return len(splitLines(s)) }
