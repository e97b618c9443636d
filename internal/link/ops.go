package link

import "github.com/corral-dev/corral/internal/api"

// Arguments and results of the request ops (docs/protocol.md, "Requests").
// An op not listed here takes or returns an api type: create takes an
// api.CreateRequest and returns an api.Session; rename returns an
// api.Session; capture an api.Screen; run an api.RunResult; dirs an
// api.DirListing; resumable a []api.Resumable; timeline an api.Timeline.
// Ops that return nothing return Empty.

// Empty is the result of ops that return nothing: {}.
type Empty struct{}

// IDArgs are the args of kill, viewed and timeline: the session id.
type IDArgs struct {
	ID string `json:"id"`
}

// RenameArgs are the args of rename.
type RenameArgs struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// InputArgs are the args of input: type Text, then press Enter if asked.
type InputArgs struct {
	ID         string `json:"id"`
	Text       string `json:"text"`
	Enter      bool   `json:"enter"`
	ClearDraft bool   `json:"clear_draft,omitempty"`
}

// AnswerArgs are the args of answer (it returns an api.AnswerResult).
type AnswerArgs struct {
	ID string `json:"id"`
	api.AnswerRequest
}

// RestartArgs are the args of restart (it returns an api.Session).
type RestartArgs struct {
	ID     string `json:"id"`
	Resume bool   `json:"resume,omitempty"`
}

// KeysArgs are the args of keys: tmux key names.
type KeysArgs struct {
	ID   string   `json:"id"`
	Keys []string `json:"keys"`
}

// CaptureArgs are the args of capture: the screen, with History lines of
// scrollback above it.
type CaptureArgs struct {
	ID      string `json:"id"`
	History int    `json:"history"`
}

// RunArgs are the args of run: a command beside the session.
type RunArgs struct {
	ID        string   `json:"id"`
	Argv      []string `json:"argv"`
	TimeoutMS int      `json:"timeout_ms"`
}

// DirsArgs are the args of dirs: a directory inside the agent's roots.
type DirsArgs struct {
	Path string `json:"path"`
}

// ResumableArgs are the args of resumable.
type ResumableArgs struct {
	Dir string `json:"dir"`
}

// DownloadArgs are the args of download: fetch URL into Path, relative to
// the session's directory.
type DownloadArgs struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	Path      string `json:"path"`
	Overwrite bool   `json:"overwrite"`
	// MaxBytes is the most the file may hold; 0 means the agent's default
	// (100 MiB).
	MaxBytes int64 `json:"max_bytes"`
}

// DownloadResult is the result of download: where the file is, and its
// size.
type DownloadResult struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// TermOpenArgs are the args of term_open. Stream is the hub's number for
// the binary frames of this terminal on this connection; Resume, when set,
// is the agent's stream_id of a stream to continue from Offset.
type TermOpenArgs struct {
	Stream uint32 `json:"stream"`
	ID     string `json:"id"`
	Cols   int    `json:"cols"`
	Rows   int    `json:"rows"`
	Resume string `json:"resume"`
	Offset uint64 `json:"offset"`
}

// TermOpenResult is the result of term_open: the agent's name of the
// stream, the offset output starts from, and whether the viewer must reset
// its screen first (it asked for bytes the agent no longer holds).
type TermOpenResult struct {
	StreamID string `json:"stream_id"`
	Offset   uint64 `json:"offset"`
	Reset    bool   `json:"reset"`
}

// TermCloseArgs are the args of term_close.
type TermCloseArgs struct {
	Stream uint32 `json:"stream"`
}

// TermResizeArgs are the args of term_resize.
type TermResizeArgs struct {
	Stream uint32 `json:"stream"`
	Cols   int    `json:"cols"`
	Rows   int    `json:"rows"`
}
