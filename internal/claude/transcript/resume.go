package transcript

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/claude"
	"github.com/corral-dev/corral/internal/regularfile"
)

// resumeProbe is how much of a transcript's head and tail ListResumable
// reads, the same 64 KiB Claude's own /resume list reads.
const resumeProbe = 64 << 10

// Saved reports whether path is a transcript Claude has written to: what
// `claude --resume` needs to find a conversation, and what ListResumable
// lists.
func Saved(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && savedInfo(fi)
}

func savedInfo(fi fs.FileInfo) bool { return fi.Mode().IsRegular() && fi.Size() > 0 }

// maxPromptPreview caps the prompts ListResumable returns, in runes.
const maxPromptPreview = 500

// ListResumable lists the earlier Claude sessions of dir, newest first, at
// most limit of them (all if limit <= 0). It reads only the head and tail
// of each transcript: the first typed prompt from the head, the last one
// from the `last-prompt` entry (or the last prompt) in the tail. Empty
// transcripts and ones without a prompt are left out; a missing project
// folder is an empty list.
func ListResumable(claudeDir, dir string, limit int) ([]api.Resumable, error) {
	folders := claude.ProjectDirs(claudeDir, dir)
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		// Claude names the folder after the path it saw, which may be
		// either side of a symlink.
		folders = append(folders, claude.ProjectDirs(claudeDir, real)...)
	}
	type cand struct {
		id, path string
		size     int64
		mtime    time.Time
	}
	var cands []cand
	seen := map[string]bool{}
	for _, folder := range folders {
		ents, err := os.ReadDir(folder)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, err
		}
		for _, e := range ents {
			id, ok := strings.CutSuffix(e.Name(), ".jsonl")
			if !ok || id == "" || strings.HasPrefix(id, "agent-") || seen[id] {
				continue
			}
			fi, err := e.Info()
			if err != nil || !savedInfo(fi) {
				continue
			}
			seen[id] = true
			cands = append(cands, cand{id: id, path: filepath.Join(folder, e.Name()), size: fi.Size(), mtime: fi.ModTime()})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if !cands[i].mtime.Equal(cands[j].mtime) {
			return cands[i].mtime.After(cands[j].mtime)
		}
		return cands[i].id < cands[j].id
	})
	out := []api.Resumable{}
	for _, c := range cands {
		if limit > 0 && len(out) >= limit {
			break
		}
		first, last, ok := probePrompts(c.path)
		if !ok {
			continue
		}
		out = append(out, api.Resumable{
			ID:           c.id,
			FirstPrompt:  claude.Clip(first, maxPromptPreview),
			LastPrompt:   claude.Clip(last, maxPromptPreview),
			LastActivity: c.mtime,
			Size:         c.size,
			Path:         c.path,
		})
	}
	return out, nil
}

// probePrompts reads the first and last prompt of a transcript from its
// head and tail.
func probePrompts(path string) (first, last string, ok bool) {
	f, err := regularfile.Open(path)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", "", false
	}
	head := make([]byte, min(fi.Size(), resumeProbe))
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return "", "", false
	}
	head = head[:n]
	whole := int64(n) == fi.Size()
	for _, e := range probeLines(head, false, whole) {
		if p, ok := firstPrompt(e); ok {
			first = p
			break
		}
	}
	tail := head
	cut := false
	if !whole {
		tail = make([]byte, resumeProbe)
		n, err := f.ReadAt(tail, fi.Size()-resumeProbe)
		if err != nil && err != io.EOF {
			return "", "", false
		}
		tail, cut = tail[:n], true
	}
	var lastTyped string
	for _, e := range probeLines(tail, cut, true) {
		if e.Type == EntryLastPrompt && e.LastPrompt != "" {
			last = e.LastPrompt
		}
		if p, ok := firstPrompt(e); ok {
			lastTyped = p
		}
	}
	if last == "" {
		last = lastTyped
	}
	if first == "" && last == "" {
		return "", "", false
	}
	return first, last, true
}

// probeLines parses the lines of a window of a file: the first is dropped
// if the window starts mid-line (cutStart), the last unless the window
// reaches the end of the file (toEnd).
func probeLines(b []byte, cutStart, toEnd bool) []Entry {
	if cutStart {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil
		}
		b = b[i+1:]
	}
	if !toEnd {
		i := bytes.LastIndexByte(b, '\n')
		if i < 0 {
			return nil
		}
		b = b[:i+1]
	}
	var out []Entry
	for line := range bytes.Lines(b) {
		if e, err := ParseEntry(bytes.TrimRight(line, "\r\n")); err == nil {
			out = append(out, e)
		}
	}
	return out
}

func firstPrompt(e Entry) (string, bool) {
	for _, s := range Signals(e) {
		if p, ok := s.(PromptSubmitted); ok {
			return p.Text, true
		}
	}
	return "", false
}
