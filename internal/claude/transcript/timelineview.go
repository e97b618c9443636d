package transcript

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TimelineView is the timeline of one transcript, kept current by reading
// only what was appended since the last look: a reader that says where it
// stands (a cursor from an earlier answer) gets the items new or changed
// since, at a cost of the new lines, not of the transcript. It is safe for
// concurrent use; no lock is held while the file is read.
type TimelineView struct {
	path     string
	tail     int64
	maxItems int

	mu    sync.Mutex
	built bool
	// epoch names this build of the view: a cursor of another (the file
	// was replaced, the agent restarted) gets everything again.
	epoch string
	pos   Position
	b     TimelineBuilder
	// at is, for each item, the offset after the read that last changed
	// it; an item is in the answer for a cursor before that.
	at map[string]int64
}

// NewTimelineView makes the view of the transcript at path. It starts
// from the file's last tail bytes and keeps at most maxItems items in an
// answer (twice that in memory).
func NewTimelineView(path string, tail int64, maxItems int) *TimelineView {
	return &TimelineView{path: path, tail: tail, maxItems: max(maxItems, 1)}
}

// Path is the transcript the view reads.
func (v *TimelineView) Path() string { return v.path }

// TimelineDelta is what Since found.
type TimelineDelta struct {
	// Items are the items new or changed since the cursor, in timeline
	// order; with Reset, the whole view (its last maxItems items).
	Items []TimelineItem
	// Reset says Items replace everything the reader held: its cursor
	// was empty or of another build of the view.
	Reset bool
	// Cursor is where the reader stands now: pass it to the next Since.
	Cursor string
}

// Since reads what was appended to the transcript and returns what
// changed after cursor ("" for everything).
func (v *TimelineView) Since(cursor string) (TimelineDelta, error) {
	if err := v.update(); err != nil {
		return TimelineDelta{}, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	d := TimelineDelta{Cursor: v.cursorLocked()}
	items := v.b.items
	epoch, off, ok := parseCursor(cursor)
	if !ok || epoch != v.epoch || off > v.pos.Offset {
		d.Reset = true
		d.Items = append([]TimelineItem{}, items[max(len(items)-v.maxItems, 0):]...)
		return d, nil
	}
	d.Items = []TimelineItem{}
	for _, it := range items {
		if v.at[it.ID] > off {
			d.Items = append(d.Items, it)
		}
	}
	return d, nil
}

func (v *TimelineView) cursorLocked() string {
	return v.epoch + ":" + strconv.FormatInt(v.pos.Offset, 10)
}

func parseCursor(c string) (string, int64, bool) {
	epoch, off, ok := strings.Cut(c, ":")
	if !ok {
		return "", 0, false
	}
	n, err := strconv.ParseInt(off, 10, 64)
	return epoch, n, err == nil && n >= 0
}

// update folds in what was appended. The read happens outside the lock,
// from the position held when it started; if another reader moved the
// view meanwhile, this read is dropped and made again from there.
func (v *TimelineView) update() error {
	for {
		v.mu.Lock()
		built, pos := v.built, v.pos
		v.mu.Unlock()
		if !built {
			entries, end, err := ReadTailAt(v.path, v.tail)
			if err != nil {
				return err
			}
			v.mu.Lock()
			if !v.built {
				v.rebuildLocked(entries, end)
			}
			v.mu.Unlock()
			continue
		}
		t := NewTailer(v.path, pos)
		var entries []Entry
		reset := false
		for {
			batch, err := t.Read()
			if err != nil {
				return err
			}
			if batch.Reset {
				reset = true
				break
			}
			entries = append(entries, batch.Entries...)
			if !batch.More {
				break
			}
		}
		v.mu.Lock()
		switch {
		case v.pos != pos:
			// Another reader got there first: look again from its position.
			v.mu.Unlock()
			continue
		case reset:
			// Truncated or replaced: build the view again from the tail.
			v.built = false
			v.mu.Unlock()
			continue
		}
		end := t.Position()
		for _, e := range entries {
			for _, it := range v.b.Add(e) {
				v.at[it.ID] = end.Offset
			}
		}
		v.pos = end
		if len(v.b.items) > 2*v.maxItems {
			v.b.Trim(v.maxItems)
			v.reindexLocked()
		}
		v.mu.Unlock()
		return nil
	}
}

func (v *TimelineView) rebuildLocked(entries []Entry, end Position) {
	v.b = TimelineBuilder{}
	for _, e := range entries {
		v.b.Add(e)
	}
	v.b.Trim(v.maxItems)
	v.at = make(map[string]int64, len(v.b.items))
	for _, it := range v.b.items {
		v.at[it.ID] = end.Offset
	}
	v.pos = end
	v.epoch = fmt.Sprintf("%x", time.Now().UnixNano())
	v.built = true
}

// reindexLocked forgets the change offsets of items trimmed away.
func (v *TimelineView) reindexLocked() {
	at := make(map[string]int64, len(v.b.items))
	for _, it := range v.b.items {
		at[it.ID] = v.at[it.ID]
	}
	v.at = at
}
