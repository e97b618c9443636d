package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/corral-dev/corral/internal/regularfile"
)

// Position is where a Tailer stands in a transcript; save it to resume
// after a restart. Dev and Ino identify the file read (zero: unknown).
type Position struct {
	Offset int64  `json:"offset"`
	Dev    uint64 `json:"dev,omitempty"`
	Ino    uint64 `json:"ino,omitempty"`
	// InLongLine says Offset is inside an over-long line being skipped.
	InLongLine bool `json:"in_long_line,omitempty"`
}

// TailBatch is what one Tailer.Read found.
type TailBatch struct {
	Entries []Entry
	// Reset says the file was truncated or replaced and reading started
	// over from the beginning: drop everything derived from it before
	// using Entries.
	Reset bool
	// Bad counts lines that were not valid entries; Oversized counts
	// lines over the line limit. Both were skipped.
	Bad       int
	Oversized int
	// More says the read stopped at its byte budget; call Read again.
	More bool
}

// Tailer reads a transcript incrementally. It returns complete lines only
// (a partial last line waits for its newline), starts over when the file
// shrinks, is replaced (another inode) or no longer has a line boundary at
// the offset, and skips bad and over-long lines without failing. It is not
// safe for concurrent use.
type Tailer struct {
	path string
	pos  Position
	// MaxLine caps one line (default MaxEntryLine); a longer line is
	// skipped while it streams past, never held in memory whole.
	MaxLine int
	// MaxRead caps the bytes consumed by one Read (default 8 MiB), so a
	// large backlog comes in several batches.
	MaxRead int64
}

// NewTailer tails path from pos (the zero Position reads from the start).
func NewTailer(path string, pos Position) *Tailer {
	if pos.Offset < 0 {
		pos = Position{}
	}
	return &Tailer{path: path, pos: pos}
}

// Path is the file being tailed.
func (t *Tailer) Path() string { return t.path }

// Position is where the next Read starts.
func (t *Tailer) Position() Position { return t.pos }

const tailChunk = 64 << 10

// Read returns the complete entries appended since the last Read. A
// missing file is an error satisfying errors.Is(err, fs.ErrNotExist)
// (Claude creates the transcript with the first message).
func (t *Tailer) Read() (TailBatch, error) {
	var batch TailBatch
	f, err := regularfile.Open(t.path)
	if err != nil {
		return batch, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return batch, err
	}
	if !fi.Mode().IsRegular() {
		return batch, fmt.Errorf("%s: not a regular file", t.path)
	}
	dev, ino := regularfile.ID(fi)
	size := fi.Size()
	reset := func() {
		t.pos = Position{}
		batch.Reset = true
	}
	switch {
	case t.pos.Ino != 0 && (t.pos.Dev != dev || t.pos.Ino != ino):
		reset()
	case size < t.pos.Offset:
		reset()
	case t.pos.Offset > 0 && !t.pos.InLongLine:
		// A line boundary must precede the offset; if not, the file was
		// rewritten in place.
		var one [1]byte
		if _, err := f.ReadAt(one[:], t.pos.Offset-1); err != nil || one[0] != '\n' {
			reset()
		}
	}
	t.pos.Dev, t.pos.Ino = dev, ino
	if size == t.pos.Offset {
		return batch, nil
	}

	maxLine := t.MaxLine
	if maxLine <= 0 {
		maxLine = MaxEntryLine
	}
	budget := t.MaxRead
	if budget <= 0 {
		budget = 8 << 20
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, t.pos.Offset, size-t.pos.Offset), tailChunk)
	var line []byte
	var consumed int64 // bytes of the current line read so far
	start := t.pos.Offset
	for {
		if t.pos.Offset-start >= budget && len(line) == 0 && consumed == 0 {
			batch.More = true
			break
		}
		piece, err := r.ReadSlice('\n')
		consumed += int64(len(piece))
		complete := len(piece) > 0 && piece[len(piece)-1] == '\n'
		switch {
		case t.pos.InLongLine:
			// Skipping: the position may move inside the line, since
			// nothing of it will be used.
			t.pos.Offset += int64(len(piece))
			consumed = 0
			if complete {
				t.pos.InLongLine = false
			}
		case len(line)+len(piece) > maxLine+1: // +1: the newline
			batch.Oversized++
			t.pos.Offset += consumed
			consumed = 0
			line = line[:0]
			if !complete {
				t.pos.InLongLine = true
			}
		default:
			line = append(line, piece...)
			if complete {
				t.pos.Offset += consumed
				consumed = 0
				t.parse(&batch, line)
				line = line[:0]
			}
		}
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				break // a partial last line stays unread until its newline
			}
			return batch, err
		}
	}
	return batch, nil
}

func (t *Tailer) parse(batch *TailBatch, line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	e, err := ParseEntry(line)
	if err != nil {
		batch.Bad++
		return
	}
	batch.Entries = append(batch.Entries, e)
}
