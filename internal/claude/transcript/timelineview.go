package transcript

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/corral-dev/corral/internal/api"
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
	// at is, for each item, the mark (offset, see mark) after the read
	// that last changed it; an item is in the answer for a cursor before that.
	at map[string]int64
	// subRead is the bytes of subagents' transcripts folded in: the
	// cursor's mark is pos.Offset+subRead, so a subagent's cost that
	// changes a turn reaches readers whose cursor the main file did not
	// move past.
	subRead int64

	// rmu is held while the subagents' transcripts are read (never with mu).
	rmu  sync.Mutex
	subs subagentReads
}

// subagentReads is what a view knows of the subagents' transcripts.
// Guarded by TimelineView.rmu.
type subagentReads struct {
	files *Subagents
	// usage deduplicates the responses of the subagents still followed.
	usage map[string]*UsageTotals
	// totals is what each subagent's transcript said, order their ids
	// (earliest first; bounded by maxSubagentTotals), read the bytes read.
	totals map[string]api.TurnTokens
	order  []string
	read   int64
}

// maxSubagentTotals bounds the subagents a view remembers the totals of
// (a view holds at most 2*maxItems items, so fewer turns than that).
const maxSubagentTotals = 2048

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
	if !ok || epoch != v.epoch || off > v.markLocked() {
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
	return v.epoch + ":" + strconv.FormatInt(v.markLocked(), 10)
}

// markLocked is where the view stands: it grows with every byte read.
func (v *TimelineView) markLocked() int64 { return v.pos.Offset + v.subRead }

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
			totals, read := v.readSubagents(entries, true)
			v.mu.Lock()
			if !v.built {
				v.rebuildLocked(entries, end, totals, read)
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
		var totals map[string]api.TurnTokens
		var read int64
		if !reset {
			totals, read = v.readSubagents(entries, false)
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
		v.pos = end
		if read > v.subRead {
			v.subRead = read
		}
		mark := v.markLocked()
		for _, e := range entries {
			for _, it := range v.b.Add(e) {
				v.at[it.ID] = mark
			}
		}
		if read >= v.subRead { // not an earlier reader's older totals
			for _, it := range v.b.AddSubagents(totals) {
				v.at[it.ID] = mark
			}
		}
		if len(v.b.items) > 2*v.maxItems {
			v.b.Trim(v.maxItems)
			v.reindexLocked()
		}
		v.mu.Unlock()
		return nil
	}
}

func (v *TimelineView) rebuildLocked(entries []Entry, end Position, totals map[string]api.TurnTokens, read int64) {
	v.b = TimelineBuilder{}
	for _, e := range entries {
		v.b.Add(e)
	}
	v.b.AddSubagents(totals)
	v.b.Trim(v.maxItems)
	v.pos, v.subRead = end, read
	v.at = make(map[string]int64, len(v.b.items))
	for _, it := range v.b.items {
		v.at[it.ID] = v.markLocked()
	}
	v.epoch = fmt.Sprintf("%x", time.Now().UnixNano())
	v.built = true
}

// readSubagents reads what is new in the transcripts of the subagents
// that entries report and of those still running, and returns what each
// subagent's transcript said so far, with the bytes read in all (afresh:
// the view is built again). It reads files: call it without mu.
func (v *TimelineView) readSubagents(entries []Entry, afresh bool) (map[string]api.TurnTokens, int64) {
	v.rmu.Lock()
	defer v.rmu.Unlock()
	r := &v.subs
	if afresh || r.files == nil {
		read := r.read
		*r = subagentReads{files: NewSubagents(v.path), read: read}
	}
	changed := map[string]bool{}
	for _, e := range entries {
		run, ok := SubagentOf(e)
		if !ok {
			continue
		}
		u := r.usage[run.AgentID]
		if u == nil {
			// Read from the start: all it said is counted again.
			u = &UsageTotals{}
		}
		r.read += r.files.Read(run, u.Add)
		r.note(run.AgentID, u)
		changed[run.AgentID] = true
		if r.usage == nil {
			r.usage = map[string]*UsageTotals{}
		}
		r.usage[run.AgentID] = u
	}
	r.read += r.files.Poll(func(id string, e Entry) {
		if u := r.usage[id]; u != nil {
			u.Add(e)
			changed[id] = true
		}
	})
	for id, u := range r.usage {
		if !r.files.Follows(id) {
			delete(r.usage, id) // let go of (Subagents says when)
		} else if changed[id] {
			r.note(id, u)
		}
	}
	return maps.Clone(r.totals), r.read
}

// note records what subagent id's transcript said so far.
func (r *subagentReads) note(id string, u *UsageTotals) {
	if r.totals == nil {
		r.totals = map[string]api.TurnTokens{}
	}
	if _, ok := r.totals[id]; !ok {
		r.order = append(r.order, id)
		if len(r.order) > maxSubagentTotals {
			delete(r.totals, r.order[0])
			r.order = r.order[1:]
		}
	}
	r.totals[id] = TurnTokensOf(u)
}

// reindexLocked forgets the change offsets of items trimmed away.
func (v *TimelineView) reindexLocked() {
	at := make(map[string]int64, len(v.b.items))
	for _, it := range v.b.items {
		at[it.ID] = v.at[it.ID]
	}
	v.at = at
}
