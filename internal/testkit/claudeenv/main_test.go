package claudeenv_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/testkit/fakemcp"
)

// The test binary doubles as the hook and status line command of the
// observation tests: Claude runs "<test binary> -observe-hook <log> <kind>
// <tag> [sleep=D] [exit=N] [stdout=S] [stderr=S]", which appends one JSON
// line (a hookRec) to <log>.
const recorderFlag = "-observe-hook"

// fakeMCPFlag makes the test binary the fake MCP server: "<test binary>
// -fake-mcp <log>" serves MCP over stdio, logging every message to <log>.
const fakeMCPFlag = "-fake-mcp"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == recorderFlag {
		os.Exit(recorderMain(os.Args[2:]))
	}
	if len(os.Args) > 2 && os.Args[1] == fakeMCPFlag {
		// The fake MCP server of the elicitation flows, run by Claude over stdio.
		if err := fakemcp.Serve(context.Background(), os.Stdin, os.Stdout, fakemcp.Options{Log: os.Args[2]}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hookRec is one line of the recorder log.
type hookRec struct {
	// Kind is "hook", "statusline", or "<kind>-end" (written after the
	// optional sleep, so a missing end line means the process was killed).
	Kind string `json:"kind"`
	Tag  string `json:"tag"`
	// T is when the recorder process started (Unix ns, wall clock).
	T int64 `json:"t"`
	// Argv is the recorder's full argv (proves how the command was split).
	Argv          []string          `json:"argv"`
	PID           int               `json:"pid"`
	PPID          int               `json:"ppid"`
	ParentComm    string            `json:"parent_comm"`
	ParentCmdline []string          `json:"parent_cmdline"`
	GrandPID      int               `json:"grand_pid"`
	GrandComm     string            `json:"grand_comm"`
	PGID          int               `json:"pgid"`
	Cwd           string            `json:"cwd"`
	Env           map[string]string `json:"env"`
	EnvNames      []string          `json:"env_names"`
	StdinOpen     bool              `json:"stdin_open"` // stdin not closed within 2 s
	Stdin         json.RawMessage   `json:"stdin"`
}

// time returns T as a time.Time.
func (r hookRec) time() time.Time { return time.Unix(0, r.T) }

// field returns a top-level string field of the stdin payload.
func (r hookRec) field(name string) string {
	var m map[string]any
	if json.Unmarshal(r.Stdin, &m) != nil {
		return ""
	}
	s, _ := m[name].(string)
	return s
}

// payload decodes the stdin payload.
func (r hookRec) payload() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Stdin, &m)
	return m
}

func procField(pid int, name string) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), name))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// statFields returns the fields of /proc/<pid>/stat after the command name.
func statFields(pid int) []string {
	s := procField(pid, "stat")
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(s[i+1:])
}

func recorderMain(args []string) int {
	start := time.Now()
	if len(args) < 3 {
		return 0
	}
	logPath, kind, tag := args[0], args[1], args[2]
	opts := map[string]string{}
	for _, a := range args[3:] {
		k, v, _ := strings.Cut(a, "=")
		opts[k] = v
	}
	stdin := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
		stdin <- b
	}()
	rec := hookRec{Kind: kind, Tag: tag, T: start.UnixNano(), Argv: os.Args, PID: os.Getpid(), PPID: os.Getppid(), Env: map[string]string{}}
	select {
	case b := <-stdin:
		if json.Valid(b) {
			rec.Stdin = b
		} else if len(b) > 0 {
			rec.Stdin, _ = json.Marshal(string(b))
		}
	case <-time.After(2 * time.Second):
		rec.StdinOpen = true
	}
	rec.ParentComm = procField(rec.PPID, "comm")
	rec.ParentCmdline = strings.Split(strings.TrimRight(procField(rec.PPID, "cmdline"), "\x00"), "\x00")
	if f := statFields(rec.PPID); len(f) > 1 {
		rec.GrandPID, _ = strconv.Atoi(f[1])
		rec.GrandComm = procField(rec.GrandPID, "comm")
	}
	if f := statFields(rec.PID); len(f) > 2 {
		rec.PGID, _ = strconv.Atoi(f[2])
	}
	rec.Cwd, _ = os.Getwd()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		rec.EnvNames = append(rec.EnvNames, name)
	}
	sort.Strings(rec.EnvNames)
	for _, k := range []string{
		"CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID", "CLAUDE_ENV_FILE", "CLAUDECODE",
		"CLAUDE_CODE_ENTRYPOINT", "CLAUDE_CODE_CHILD_SESSION", "AI_AGENT", "CORRAL_SESSION",
		"TMUX", "TMUX_PANE", "HOME", "PWD", "OLDPWD", "SHLVL", "COLUMNS", "LINES", "TERM", "_",
	} {
		if v, ok := os.LookupEnv(k); ok {
			rec.Env[k] = v
		}
	}
	appendRec(logPath, rec)
	if d, err := time.ParseDuration(opts["sleep"]); err == nil && d > 0 {
		time.Sleep(d)
		appendRec(logPath, hookRec{Kind: kind + "-end", Tag: tag, T: time.Now().UnixNano(), PID: rec.PID})
	}
	if s, ok := opts["stderr"]; ok {
		fmt.Fprintln(os.Stderr, s)
	}
	if s, ok := opts["stdout"]; ok {
		fmt.Println(s)
	}
	if kind == "statusline" {
		fmt.Printf("SL-%s\n", tag)
	}
	code, _ := strconv.Atoi(opts["exit"])
	return code
}

func appendRec(path string, rec hookRec) {
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.Write(append(b, '\n')) // one write: O_APPEND keeps lines whole
	_ = f.Close()
}
