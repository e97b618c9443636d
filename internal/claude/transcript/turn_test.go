package transcript

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/testkit/testio"
)

func TestTurnStateAlongFixture(t *testing.T) {
	es := fixtureEntries(t)
	// Cut the transcript after the entry with this uuid and ask for the
	// state, as a restarted corral would see it.
	cases := []struct {
		after  string
		status TurnStatus
		tool   string
		err    bool
		prompt string
	}{
		{"3c25c1c0-1333-4e9c-8ef6-6f0acb07a576", TurnOpen, "", false, "say hello"},
		{"84bf6258-3e4d-43a1-840a-02e17099a8e2", TurnDone, "", false, "say hello"}, // final answer, before turn_duration
		{"f4d01af3-d065-4d88-9866-87bf60f65fe0", TurnDone, "", false, "say hello"},
		{"d6fa38ca-461d-493e-9bf1-42afba0f7a2c", TurnOpen, "Bash", false, "RUNTOOL one"}, // waiting for permission
		{"544efaad-52ea-4927-884f-1405ce58654a", TurnOpen, "", false, "RUNTOOL one"},
		{"c3603b9f-85ea-49c7-b628-476bea5c411d", TurnDone, "", false, "RUNTOOL one"},
		{"7c334aa5-6975-4466-9a14-3ef98567dc23", TurnInterrupted, "", false, "RUNTOOL two"},
		{"c8bd5676-be41-44ec-a46f-ba2315d91aea", TurnOpen, "", false, "SLOW answer"},
		{"daecb265-250e-4d12-896c-4b66e0b2ddeb", TurnInterrupted, "", false, "SLOW answer"},
		{"f94a65ce-23b3-41fb-a4bb-2c858322b00f", TurnOpen, "", false, "SLOW with text"},
		{"a741c6e6-6f67-4349-a65c-360962c1e8b1", TurnDone, "", false, "SLOW with text"},
		{"a8e7fd44-9cc4-45f4-a976-97bed4680cb4", TurnDone, "", true, "FAIL please"},
		{"", TurnDone, "", true, "FAIL please"}, // the whole file, after /compact
	}
	for _, c := range cases {
		n := len(es)
		if c.after != "" {
			n = -1
			for i, e := range es {
				if e.UUID == c.after {
					n = i + 1
				}
			}
			if n < 0 {
				t.Fatalf("uuid %s not in fixture", c.after)
			}
		}
		st := TurnStateOf(es[:n])
		tool := ""
		if st.OpenTool != nil {
			tool = st.OpenTool.Name
		}
		if st.Status != c.status || tool != c.tool || (st.Error != nil) != c.err || st.Prompt != c.prompt {
			t.Errorf("after %s: %+v (tool %q), want %s tool %q err %v prompt %q", c.after, st, tool, c.status, c.tool, c.err, c.prompt)
		}
	}
	if st := TurnStateOf(es[:3]); st.Status != TurnNone {
		t.Errorf("before any prompt: %+v", st)
	}
}

func TestLastTurnStateReadsTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	var b strings.Builder
	// A long history, then a turn whose prompt is out of the tail window
	// and whose tool call is open.
	filler := `{"type":"user","message":{"role":"user","content":"old prompt"},"uuid":"old"}` + "\n"
	for b.Len() < 2*TurnTailBytes {
		b.WriteString(filler)
	}
	b.WriteString(`{"type":"user","message":{"role":"user","content":"big turn"},"uuid":"p"}` + "\n")
	big := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("z", TurnTailBytes) + `"}]}}` + "\n"
	b.WriteString(big)
	b.WriteString(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t9","name":"Grep","input":{}}]},"uuid":"a"}` + "\n")
	b.WriteString(`{"type":"user","message":{"role":"us`) // half-written last line
	writeFile(t, path, b.String())

	st, err := LastTurnState(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != TurnOpen || st.OpenTool == nil || st.OpenTool.ID != "t9" || st.Prompt != "" {
		t.Fatalf("state %+v", st)
	}

	appendFile(t, path, `er","content":[{"type":"tool_result","tool_use_id":"t9","content":"x"}]}}`+"\n"+
		`{"type":"system","subtype":"turn_duration","durationMs":5}`+"\n")
	st, err = LastTurnState(path)
	if err != nil || st.Status != TurnDone || st.OpenTool != nil {
		t.Fatalf("after the end: %+v %v", st, err)
	}

	if _, err := LastTurnState(filepath.Join(dir, "missing.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := LastTurnState(dir); err == nil {
		t.Fatal("a directory was read as a transcript")
	}
}

func TestReadTailBoundaries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	a := `{"type":"user","uuid":"A"}` + "\n"
	b := `{"type":"user","uuid":"B"}` + "\n"
	writeFile(t, path, a+b)
	// A window starting exactly at a line start keeps that line.
	es, err := ReadTail(path, int64(len(b)))
	if err != nil || len(es) != 1 || es[0].UUID != "B" {
		t.Fatalf("%+v %v", es, err)
	}
	// One byte more cuts into A, which is dropped.
	es, err = ReadTail(path, int64(len(b)+1))
	if err != nil || len(es) != 1 || es[0].UUID != "B" {
		t.Fatalf("%+v %v", es, err)
	}
	es, err = ReadTail(path, 1<<20)
	if err != nil || len(es) != 2 {
		t.Fatalf("%+v %v", es, err)
	}
}

// Claude can write a turn's first response before the turn's prompt line
// (seen under load: the response's parent, the prompt's attachment, comes
// after it). The prompt takes that response; a response whose parent came
// before it stays in its turn even when a later prompt is older.
func TestTimelineResponseBeforeItsPrompt(t *testing.T) {
	line := func(s string) Entry {
		t.Helper()
		e, err := ParseEntry([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	reply := func(uuid, parent, msg, at string, in int) Entry {
		return line(fmt.Sprintf(`{"type":"assistant","uuid":%q,"parentUuid":%q,"timestamp":%q,"message":{"id":%q,"role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":%d,"output_tokens":1}}}`, uuid, parent, at, msg, in))
	}
	prompt := func(uuid, parent, text, at string) Entry {
		return line(fmt.Sprintf(`{"type":"user","uuid":%q,"parentUuid":%q,"timestamp":%q,"message":{"role":"user","content":%q}}`, uuid, parent, at, text))
	}
	attach := func(uuid, parent, at string) Entry {
		return line(fmt.Sprintf(`{"type":"attachment","uuid":%q,"parentUuid":%q,"timestamp":%q}`, uuid, parent, at))
	}
	entries := []Entry{
		prompt("p1", "", "first", "2026-12-01T10:00:00Z"),
		reply("r1", "p1", "m1", "2026-12-01T10:00:01Z", 100),
		reply("r2", "a2", "m2", "2026-12-01T10:00:05Z", 20), // before its prompt
		prompt("p2", "r1", "second", "2026-12-01T10:00:04Z"),
		attach("a2", "p2", "2026-12-01T10:00:04Z"),
		reply("r3", "r2", "m3", "2026-12-01T10:00:09Z", 3),
		prompt("p3", "r3", "third, typed earlier", "2026-12-01T10:00:08Z"),
	}
	got := map[string]api.TurnTokens{}
	for _, it := range Timeline(entries) {
		if it.Kind == KindPrompt {
			tk := api.TurnTokens{}
			if it.Tokens != nil {
				tk = *it.Tokens
			}
			got[it.Text] = tk
		}
	}
	if tk := got["first"]; tk.Input != 100 || tk.Responses != 1 {
		t.Errorf("first turn %+v, want its own response only", tk)
	}
	if tk := got["second"]; tk.Input != 23 || tk.Responses != 2 {
		t.Errorf("second turn %+v, want the response written before it and the next", tk)
	}
	if tk := got["third, typed earlier"]; tk.Responses != 0 {
		t.Errorf("third turn %+v, took a response that is not its own", tk)
	}
}

// The recorded case (testdata/response_before_prompt.jsonl, see its README): the turn counts all of
// the session's responses, the one written before its prompt line too.
func TestTimelineResponseBeforePromptFixture(t *testing.T) {
	var entries []Entry
	var all UsageTotals
	for _, l := range testio.Lines(t, filepath.Join("testdata", "response_before_prompt.jsonl")) {
		e, err := ParseEntry(l)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
		all.Add(e)
	}
	want := TurnTokensOf(&all)
	var turns []api.TurnTokens
	for _, it := range Timeline(entries) {
		if it.Kind == KindPrompt && it.Tokens != nil {
			turns = append(turns, *it.Tokens)
		}
	}
	if len(turns) != 1 || turns[0].Input != want.Input || turns[0].Responses != want.Responses || want.Responses != 2 {
		t.Fatalf("turns %+v, want one with all of %+v", turns, want)
	}
}
