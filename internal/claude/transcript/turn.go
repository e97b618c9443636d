package transcript

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/corral-dev/corral/internal/regularfile"
)

// TurnStatus is how the last turn of a transcript stands.
type TurnStatus string

const (
	// TurnNone: no turn was seen (no prompt or answer in the tail).
	TurnNone TurnStatus = "none"
	// TurnOpen: a prompt or tool activity with no end after it; Claude is
	// working, waiting for a permission, or died mid-turn.
	TurnOpen TurnStatus = "open"
	// TurnDone: the turn finished (turn_duration, a final answer, or an
	// API error that ended it: see Error).
	TurnDone TurnStatus = "done"
	// TurnInterrupted: the user pressed Escape or rejected a tool.
	TurnInterrupted TurnStatus = "interrupted"
)

// TurnState summarises the last turn of a transcript, for re-verifying a
// session's state after corral restarts.
type TurnState struct {
	Status TurnStatus `json:"status"`
	// Prompt and PromptAt are the last prompt, if it is in the part read.
	Prompt   string    `json:"prompt,omitempty"`
	PromptAt time.Time `json:"prompt_at,omitzero"`
	// At is the time of the entry that decided Status.
	At time.Time `json:"at,omitzero"`
	// OpenTool is a tool called in this turn and not answered yet.
	OpenTool *ToolUse `json:"open_tool,omitempty"`
	// Error is the API error that ended the turn.
	Error *APIError `json:"error,omitempty"`
	// LastText is the turn's latest assistant text.
	LastText string `json:"last_text,omitempty"`
}

// TurnTailBytes is how much of a transcript's end LastTurnState reads.
const TurnTailBytes = 256 << 10

// LastTurnState reads the last TurnTailBytes of a transcript and tells
// how its last turn stands. A turn longer than that is still judged right
// as long as its end (or absence of one) is in the tail: only Prompt is
// then unknown.
func LastTurnState(path string) (TurnState, error) {
	entries, err := ReadTail(path, TurnTailBytes)
	if err != nil {
		return TurnState{}, err
	}
	return TurnStateOf(entries), nil
}

// ReadTail parses the complete lines in the last n bytes of a transcript
// (the first, cut line is dropped; bad lines are skipped).
func ReadTail(path string, n int64) ([]Entry, error) {
	entries, _, err := ReadTailAt(path, n)
	return entries, err
}

// ReadTailAt is ReadTail, also returning where the complete lines it read
// end: a Tailer started there reads only what is appended after.
func ReadTailAt(path string, n int64) ([]Entry, Position, error) {
	var pos Position
	f, err := regularfile.Open(path)
	if err != nil {
		return nil, pos, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, pos, err
	}
	if !fi.Mode().IsRegular() {
		return nil, pos, fmt.Errorf("%s: not a regular file", path)
	}
	pos.Dev, pos.Ino = regularfile.ID(fi)
	from := max(fi.Size()-n, 0)
	buf := make([]byte, fi.Size()-from)
	k, err := f.ReadAt(buf, from)
	if err != nil && err != io.EOF {
		return nil, pos, err
	}
	buf = buf[:k]
	if from > 0 {
		// The byte before the window decides whether its first line is
		// whole.
		var one [1]byte
		if _, err := f.ReadAt(one[:], from-1); err != nil || one[0] != '\n' {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				pos.Offset = from
				pos.InLongLine = true
				return nil, pos, nil
			}
			from += int64(i + 1)
			buf = buf[i+1:]
		}
	}
	// A last line without its newline may be half-written: leave it out.
	if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i+1]
	} else {
		buf = nil
	}
	pos.Offset = from + int64(len(buf))
	var out []Entry
	for line := range bytes.Lines(buf) {
		if e, err := ParseEntry(bytes.TrimRight(line, "\r\n")); err == nil {
			out = append(out, e)
		}
	}
	return out, pos, nil
}

// TurnStateOf tells how the last turn of entries (in file order) stands.
func TurnStateOf(entries []Entry) TurnState {
	st := TurnState{Status: TurnNone}
	for _, e := range entries {
		for _, s := range Signals(e) {
			switch s := s.(type) {
			case PromptSubmitted:
				st = TurnState{Status: TurnOpen, Prompt: s.Text, PromptAt: s.At, At: s.At}
			case ToolUse:
				st.Status, st.At = TurnOpen, s.At
				tu := s
				st.OpenTool = &tu
			case ToolResult:
				if st.OpenTool != nil && st.OpenTool.ID == s.ID {
					st.OpenTool = nil
				}
				st.Status, st.At = TurnOpen, s.At
			case AssistantText:
				st.LastText = s.Text
				st.Status, st.At = TurnOpen, s.At
				if e.Message != nil && e.Message.StopReason == "end_turn" {
					// A final answer ends the turn even where no
					// turn_duration line follows it.
					st.Status = TurnDone
				}
			case APIError:
				err := s
				st.Error = &err
				st.Status, st.At = TurnDone, s.At
				st.OpenTool = nil
			case Interrupt:
				st.Status, st.At = TurnInterrupted, s.At
				st.OpenTool = nil
			case TurnEnded:
				st.Status, st.At = TurnDone, s.At
				st.OpenTool = nil
			}
		}
	}
	return st
}
