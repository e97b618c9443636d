package claudeenv_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ---- recorder log -----------------------------------------------------------

type hookLog struct{ path string }

func (l hookLog) all() []hookRec {
	f, err := os.Open(l.path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []hookRec
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	for sc.Scan() {
		var r hookRec
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// hooks returns the "hook" records (not statusline, not end lines) at or after from.
func (l hookLog) hooks(from time.Time) []hookRec {
	var out []hookRec
	for _, r := range l.all() {
		if r.Kind == "hook" && r.T >= from.UnixNano() {
			out = append(out, r)
		}
	}
	return out
}

// find returns the first record of kind and tag at or after from.
func (l hookLog) find(kind, tag string, from time.Time) (hookRec, bool) {
	for _, r := range l.all() {
		if r.Kind == kind && r.Tag == tag && r.T >= from.UnixNano() {
			return r, true
		}
	}
	return hookRec{}, false
}

// wait polls for the first hook record with tag at or after from, satisfying
// pred (nil: any); it fails t after timeout.
func (l hookLog) wait(t testing.TB, timeout time.Duration, tag string, from time.Time, pred func(hookRec) bool) hookRec {
	t.Helper()
	var got hookRec
	waitFor(t, timeout, "hook "+tag, func() bool {
		for _, r := range l.all() {
			if r.Kind == "hook" && r.Tag == tag && r.T >= from.UnixNano() && (pred == nil || pred(r)) {
				got = r
				return true
			}
		}
		return false
	}, func() string { return l.summary(from.Add(-time.Minute)) })
	return got
}

func (l hookLog) summary(from time.Time) string {
	var b strings.Builder
	for _, r := range l.all() {
		if r.T >= from.UnixNano() && r.Kind != "statusline" {
			fmt.Fprintf(&b, "\n  %s %s %s %s", r.time().Format("15:04:05.000"), r.Kind, r.Tag, truncate(string(r.Stdin), 160))
		}
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// waitFor polls cond every 20 ms until it holds, failing t after timeout with
// what and the output of detail.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool, detail func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			d := ""
			if detail != nil {
				d = detail()
			}
			t.Fatalf("timed out after %v waiting for %s%s", timeout, what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ---- session file watcher ---------------------------------------------------

// sessionFile is the content of ~/.claude/sessions/<pid>.json.
type sessionFile struct {
	PID             int    `json:"pid"`
	SessionID       string `json:"sessionId"`
	Cwd             string `json:"cwd"`
	StartedAt       int64  `json:"startedAt"`
	ProcStart       string `json:"procStart"`
	Version         string `json:"version"`
	Kind            string `json:"kind"`
	Entrypoint      string `json:"entrypoint"`
	Name            string `json:"name"`
	Status          string `json:"status"`
	WaitingFor      string `json:"waitingFor"`
	UpdatedAt       int64  `json:"updatedAt"`
	StatusUpdatedAt int64  `json:"statusUpdatedAt"`
}

// sessChange is one observed content change (or removal) of a session file.
type sessChange struct {
	T       time.Time // when the watcher read it
	File    string
	Removed bool
	Ino     uint64
	Raw     string
	S       sessionFile
}

type fsEvent struct {
	T    time.Time
	Op   string
	Name string
}

// sessWatch logs every change of the session files in a directory.
type sessWatch struct {
	mu      sync.Mutex
	changes []sessChange
	events  []fsEvent
	last    map[string]string
	partial int // reads that were not valid JSON (a write in progress)
	empty   int // reads of an empty file
	cancel  context.CancelFunc
	done    chan struct{}
}

func watchSessions(t testing.TB, dir string) *sessWatch {
	t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sw := &sessWatch{last: map[string]string{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(sw.done)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev := <-w.Events:
				sw.observe(ev)
			case <-w.Errors:
			}
		}
	}()
	t.Cleanup(sw.stop)
	return sw
}

func (sw *sessWatch) stop() {
	sw.cancel()
	<-sw.done
}

func (sw *sessWatch) observe(ev fsnotify.Event) {
	now := time.Now()
	base := filepath.Base(ev.Name)
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.events = append(sw.events, fsEvent{T: now, Op: ev.Op.String(), Name: base})
	if !strings.HasSuffix(base, ".json") {
		return
	}
	b, err := os.ReadFile(ev.Name)
	if errors.Is(err, os.ErrNotExist) {
		if _, seen := sw.last[base]; seen {
			delete(sw.last, base)
			sw.changes = append(sw.changes, sessChange{T: now, File: base, Removed: true})
		}
		return
	}
	if err == nil && len(b) == 0 {
		sw.empty++
		return
	}
	if err != nil || sw.last[base] == string(b) {
		return
	}
	var s sessionFile
	if json.Unmarshal(b, &s) != nil {
		sw.partial++
		return // partial write; the next event shows the rest
	}
	sw.last[base] = string(b)
	var ino uint64
	if fi, err := os.Stat(ev.Name); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			ino = st.Ino
		}
	}
	sw.changes = append(sw.changes, sessChange{T: now, File: base, Ino: ino, Raw: string(b), S: s})
}

func (sw *sessWatch) all() []sessChange {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return append([]sessChange(nil), sw.changes...)
}

func (sw *sessWatch) partialReads() (partial, empty int) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.partial, sw.empty
}

func (sw *sessWatch) fsEvents(from, to time.Time) []fsEvent {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	var out []fsEvent
	for _, e := range sw.events {
		if !e.T.Before(from) && !e.T.After(to) {
			out = append(out, e)
		}
	}
	return out
}

// wait returns the first change at or after from satisfying pred.
func (sw *sessWatch) wait(t testing.TB, timeout time.Duration, what string, from time.Time, pred func(sessChange) bool) sessChange {
	t.Helper()
	var got sessChange
	waitFor(t, timeout, "session file "+what, func() bool {
		for _, c := range sw.all() {
			if !c.T.Before(from) && pred(c) {
				got = c
				return true
			}
		}
		return false
	}, func() string { return sw.summary(from.Add(-30 * time.Second)) })
	return got
}

func (sw *sessWatch) status(t testing.TB, timeout time.Duration, status string, from time.Time) sessChange {
	t.Helper()
	return sw.wait(t, timeout, "status "+status, from, func(c sessChange) bool { return !c.Removed && c.S.Status == status })
}

func (sw *sessWatch) summary(from time.Time) string {
	var b strings.Builder
	for _, c := range sw.all() {
		if c.T.Before(from) {
			continue
		}
		if c.Removed {
			fmt.Fprintf(&b, "\n  %s %s removed", c.T.Format("15:04:05.000"), c.File)
		} else {
			fmt.Fprintf(&b, "\n  %s %s %s %q %s", c.T.Format("15:04:05.000"), c.File, c.S.Status, c.S.WaitingFor, c.S.SessionID)
		}
	}
	return b.String()
}

// ---- process sampler --------------------------------------------------------

type procInfo struct {
	PID, PPID int
	Comm      string
	Cmdline   string
	Seen      time.Time // first seen
	Last      time.Time // last seen
}

// procSampler records every descendant of the root pids it sees, polling
// /proc every 25 ms until stopped.
type procSampler struct {
	mu     sync.Mutex
	roots  map[int]bool
	seen   map[int]procInfo
	cancel context.CancelFunc
	done   chan struct{}
}

func sampleProcs(t testing.TB) *procSampler {
	ctx, cancel := context.WithCancel(context.Background())
	ps := &procSampler{roots: map[int]bool{}, seen: map[int]procInfo{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ps.done)
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				ps.sample()
			}
		}
	}()
	t.Cleanup(func() { ps.cancel(); <-ps.done })
	return ps
}

func (ps *procSampler) addRoot(pid int) {
	ps.mu.Lock()
	ps.roots[pid] = true
	ps.mu.Unlock()
}

func (ps *procSampler) sample() {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	parent := map[int]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(pid); len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	now := time.Now()
	for pid, pp := range parent {
		if p, ok := ps.seen[pid]; ok {
			p.Last = now
			if p.Cmdline == "" {
				// A process caught between fork and exec shows no cmdline yet.
				p.Comm = procField(pid, "comm")
				p.Cmdline = strings.ReplaceAll(strings.TrimRight(procField(pid, "cmdline"), "\x00"), "\x00", " ")
			}
			ps.seen[pid] = p
			continue
		}
		// descendant of a root?
		for a, n := pp, 0; a > 1 && n < 20; a, n = parent[a], n+1 {
			if ps.roots[a] {
				ps.seen[pid] = procInfo{PID: pid, PPID: pp, Comm: procField(pid, "comm"),
					Cmdline: strings.ReplaceAll(strings.TrimRight(procField(pid, "cmdline"), "\x00"), "\x00", " "), Seen: now, Last: now}
				break
			}
		}
	}
}

func (ps *procSampler) list() []procInfo {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var out []procInfo
	for _, p := range ps.seen {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seen.Before(out[j].Seen) })
	return out
}

// ---- report -----------------------------------------------------------------

// report collects observation lines from parallel experiments.
type report struct {
	mu       sync.Mutex
	sections map[string][]string
}

func newReport() *report { return &report{sections: map[string][]string{}} }

func (r *report) add(section, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sections[section] = append(r.sections[section], fmt.Sprintf(format, args...))
}

func (r *report) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for n := range r.sections {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&b, "## %s\n", n)
		for _, l := range r.sections[n] {
			fmt.Fprintf(&b, "- %s\n", l)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ms formats the signed duration b-a in milliseconds.
func ms(a, b time.Time) string {
	return fmt.Sprintf("%+d ms", b.Sub(a).Milliseconds())
}

// msTime converts a Unix-ms timestamp.
func msTime(v int64) time.Time { return time.UnixMilli(v) }

// ---- settings ---------------------------------------------------------------

// recorderCmd is a hook or statusLine command string that runs the recorder
// through sh, with every argument single-quoted.
func recorderCmd(bin, log, kind, tag string, opts ...string) string {
	parts := []string{shq(bin), recorderFlag, shq(log), kind, shq(tag)}
	for _, o := range opts {
		parts = append(parts, shq(o))
	}
	return strings.Join(parts, " ")
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// allEvents are the hook events the observation registers.
func allEvents() []string {
	return []string{"SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse",
		"PostToolUseFailure", "PermissionRequest", "Notification", "Stop", "StopFailure",
		"PreCompact", "PostCompact", "SubagentStop"}
}

// hookEntry is one matcher group of a settings "hooks" event list.
func hookEntry(matcher string, hooks ...map[string]any) map[string]any {
	m := map[string]any{"hooks": hooks}
	if matcher != "" {
		m["matcher"] = matcher
	}
	return m
}

func cmdHook(command string, extra ...any) map[string]any {
	h := map[string]any{"type": "command", "command": command}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i].(string)] = extra[i+1]
	}
	return h
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// procStart is field 22 of /proc/<pid>/stat (start time in clock ticks).
func procStart(pid int) string {
	if f := statFields(pid); len(f) > 19 {
		return f[19]
	}
	return ""
}
