package sessionfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/corral-dev/corral/internal/regularfile"
	"github.com/fsnotify/fsnotify"
)

// Event reports a change of one session file.
type Event struct {
	PID  int
	Path string
	// Removed says the file is gone (Claude exited); File is zero then.
	Removed bool
	File    File
	// Initial marks the files found by the scan at start.
	Initial bool
}

// Watch reports every session file in dir, then every change,
// until ctx ends (it returns nil then) or the watcher cannot be set up.
//
// fn runs on the watching goroutine, one event at a time, as soon as the
// event arrives (no debounce); it should not block for long.
//
//   - A file created, written or renamed into place is read and reported
//     when it parses and its content differs from what was last reported.
//     Claude rewrites these files in place (truncate, then write), so a read
//     may see an empty or partial file: that read is dropped, and the next
//     write event reads the complete file.
//   - A removed file is reported once, if it had been reported before.
//   - If dir does not exist, the nearest existing parent is watched and dir
//     is picked up when it appears; if dir disappears, its files are
//     reported removed. dir is never created.
//   - After an event-queue overflow the directory is scanned again.
func Watch(ctx context.Context, dir string, fn func(Event)) error {
	return watch(ctx, dir, fn, nil)
}

// watch is Watch with a hook that runs once the
// watch is in place and the first scan is done (tests synchronise on it).
func watch(ctx context.Context, dir string, fn func(Event), ready func()) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("watch session files: %w", err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch session files: %w", err)
	}
	defer w.Close()
	sw := &sessionWatcher{dir: abs, w: w, fn: fn, known: map[int][]byte{}}
	if err := sw.rewatch(true, false); err != nil {
		return err
	}
	if ready != nil {
		ready()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("watch session files: watcher closed")
			}
			if err := sw.handle(ev); err != nil {
				return err
			}
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New("watch session files: watcher closed")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) && sw.watched == sw.dir {
				sw.scan(false)
			}
			// Other errors are transient reads of the inotify fd; the
			// next event or scan recovers.
		}
	}
}

type sessionWatcher struct {
	dir     string
	w       *fsnotify.Watcher
	fn      func(Event)
	watched string         // dir itself, or its nearest existing ancestor
	known   map[int][]byte // last reported content per pid
}

// nearestDir returns dir if it is a directory, else its nearest existing
// ancestor directory.
func nearestDir(dir string) string {
	p := dir
	for {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}

// rewatch moves the single watch to dir or its nearest existing ancestor.
// lost says the watched directory itself was removed or moved: its watch
// is gone even if a new directory of the same name is there now, so the
// watch must be added again. It loops because a directory can appear
// between the check and the watch.
func (sw *sessionWatcher) rewatch(start, lost bool) error {
	wasDir := sw.watched == sw.dir
	if lost {
		_ = sw.w.Remove(sw.watched) // usually gone already
		sw.watched = ""
	}
	for range 64 {
		target := nearestDir(sw.dir)
		if target == sw.watched {
			return nil
		}
		if sw.watched != "" {
			_ = sw.w.Remove(sw.watched) // fails harmlessly if the dir is gone
		}
		sw.watched = ""
		if err := sw.w.Add(target); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // vanished meanwhile; look again
			}
			return fmt.Errorf("watch session files: %w", err)
		}
		sw.watched = target
		if target == sw.dir {
			sw.scan(start) // also reports files gone with a replaced dir
		} else if wasDir {
			sw.removeAll()
		}
		wasDir = target == sw.dir
	}
	return fmt.Errorf("watch session files: %s keeps changing", sw.dir)
}

func (sw *sessionWatcher) handle(ev fsnotify.Event) error {
	name := filepath.Clean(ev.Name)
	if name == sw.watched && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
		return sw.rewatch(false, true)
	}
	if sw.watched != sw.dir {
		// Watching an ancestor: only a change on the way to dir matters.
		if name == sw.dir || strings.HasPrefix(sw.dir, name+string(filepath.Separator)) {
			return sw.rewatch(false, false)
		}
		return nil
	}
	if filepath.Dir(name) != sw.dir {
		return nil
	}
	pid, ok := PID(filepath.Base(name))
	if !ok {
		return nil
	}
	sw.read(pid, name, false)
	return nil
}

// read reports the file's current content if it parses and changed, or its
// removal if it is gone.
func (sw *sessionWatcher) read(pid int, path string, initial bool) {
	b, err := regularfile.ReadFile(path, MaxSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			sw.removed(pid, path)
		}
		return
	}
	s, err := Parse(b)
	if err != nil {
		return // mid-write; the next write event brings the rest
	}
	if prev, ok := sw.known[pid]; ok && bytes.Equal(prev, b) {
		return
	}
	sw.known[pid] = b
	sw.fn(Event{PID: pid, Path: path, File: s, Initial: initial})
}

func (sw *sessionWatcher) removed(pid int, path string) {
	if _, ok := sw.known[pid]; !ok {
		return
	}
	delete(sw.known, pid)
	sw.fn(Event{PID: pid, Path: path, Removed: true})
}

// scan reads every session file in dir and reports the ones that vanished.
func (sw *sessionWatcher) scan(initial bool) {
	ents, err := os.ReadDir(sw.dir)
	if err != nil {
		return
	}
	seen := map[int]bool{}
	for _, e := range ents {
		pid, ok := PID(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		seen[pid] = true
		sw.read(pid, filepath.Join(sw.dir, e.Name()), initial)
	}
	for pid := range sw.known {
		if !seen[pid] {
			sw.removed(pid, filepath.Join(sw.dir, fmt.Sprintf("%d.json", pid)))
		}
	}
}

func (sw *sessionWatcher) removeAll() {
	for pid := range sw.known {
		sw.removed(pid, filepath.Join(sw.dir, fmt.Sprintf("%d.json", pid)))
	}
}
