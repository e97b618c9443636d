package api

import (
	"reflect"
	"strings"
	"time"
)

// Every operation of corral is declared once, here: its name (the device
// link's "op" and the name everywhere else), its HTTP method and path, who
// answers it (Scope), and its request and result types. The servers
// (internal/httpapi), the hub's forwarding, the agent's link end, the typed
// client and the web UI's types (web/src/api.gen.ts) are all derived from
// this list; docs/architecture.md, "Operations", says how.
//
// A request is the op's whole input, on every hop: the JSON body (or the
// query of a GET) with the path's {id} filled in is the link's args.

// Scope says who answers an op.
type Scope string

const (
	// ScopeSession: routed by the session's id to the device that owns it.
	// The request embeds a SessionRef.
	ScopeSession Scope = "session"
	// ScopeDevice: routed to a device by name, or to the only online one.
	// The request implements DeviceRequest.
	ScopeDevice Scope = "device"
	// ScopeLocal: answered by the server asked (the hub, or an agent on
	// its own socket), never sent over the link.
	ScopeLocal Scope = "local"
	// ScopeUser: the asking user's own data kept by the server that holds
	// the users (the hub, which corral serve is too): notifications,
	// settings, push subscriptions. Never sent over the link; an agent
	// alone, which has no users, does not answer it.
	ScopeUser Scope = "user"
	// ScopeLink: between a hub and one agent only, about the link itself
	// (its terminal streams); no HTTP route.
	ScopeLink Scope = "link"
)

// OpInfo describes an operation.
type OpInfo struct {
	// Name is the op's name: the link's "op", the CLI's and client's word.
	Name string
	// Method and Path are its HTTP route; both empty for a link-only op.
	// {id} in Path is the session's id (SessionRef.ID).
	Method string
	Path   string
	Scope  Scope
	// Doc says what it does, in a line.
	Doc string
	// Status is the HTTP status of a success; 0 means 200, or 204 when
	// the result is Empty.
	Status int
	// Lenient lets the JSON body carry fields the request does not have:
	// a browser's own object (a push subscription) may hold more than
	// corral reads. Every other body is decoded strictly.
	Lenient bool
	// Timeout bounds how long a hub waits for the device; 0 means 30 s
	// unless the caller set a deadline.
	Timeout time.Duration
	// Request and Result are the op's types (set by Op.Info).
	Request, Result reflect.Type
}

// Op is an operation with its request and result types.
type Op[Req, Res any] struct{ OpInfo }

// Info returns the op's description with its types.
func (o Op[Req, Res]) Info() OpInfo {
	i := o.OpInfo
	i.Request = reflect.TypeFor[Req]()
	i.Result = reflect.TypeFor[Res]()
	return i
}

// SuccessStatus is the HTTP status of a success.
func (o OpInfo) SuccessStatus() int {
	switch {
	case o.Status != 0:
		return o.Status
	case o.Result == reflect.TypeFor[Empty]():
		return 204
	}
	return 200
}

// PathParams are the names of Path's wildcards ({id}), in order.
func (o OpInfo) PathParams() []string {
	var out []string
	for _, seg := range strings.Split(o.Path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, strings.TrimSuffix(seg[1:], "}"))
		}
	}
	return out
}

// Empty is the request or result of an op that takes or returns nothing:
// {} on the link, no body over HTTP (204 for a result).
type Empty struct{}

// SessionRef names the session a request is about. Every session-scoped
// request embeds it; over HTTP it is the path's {id}.
type SessionRef struct {
	ID string `json:"id"`
}

// SessionID is the session the request is about.
func (r SessionRef) SessionID() string { return r.ID }

// SessionRequest is a request about one session (it embeds a SessionRef).
type SessionRequest interface{ SessionID() string }

// DeviceRequest is a request routed to a device by name; an empty name
// means the only online device.
type DeviceRequest interface{ DeviceName() string }

//go:generate go run ../tsgen -api . -o ../../web/src/api.gen.ts

// The operations. Keep Ops in step.
var (
	OpVersion = Op[Empty, VersionInfo]{OpInfo{Name: "version", Method: "GET", Path: "/api/v1/version", Scope: ScopeLocal,
		Doc: "describe the daemon: version, data directory, what it cannot do right now"}}
	OpSessions = Op[Empty, []Session]{OpInfo{Name: "sessions", Method: "GET", Path: "/api/v1/sessions", Scope: ScopeLocal,
		Doc: "list every session"}}
	OpSession = Op[SessionRef, Session]{OpInfo{Name: "session", Method: "GET", Path: "/api/v1/sessions/{id}", Scope: ScopeLocal,
		Doc: "one session"}}
	OpDevices = Op[Empty, []Device]{OpInfo{Name: "devices", Method: "GET", Path: "/api/v1/devices", Scope: ScopeLocal,
		Doc: "list the machines (through a hub; an agent alone has none)"}}

	OpCreate = Op[CreateRequest, Session]{OpInfo{Name: "create", Method: "POST", Path: "/api/v1/sessions", Scope: ScopeDevice, Status: 201,
		Doc: "start a session"}}
	OpDirs = Op[DirsRequest, DirListing]{OpInfo{Name: "dirs", Method: "GET", Path: "/api/v1/dirs", Scope: ScopeDevice,
		Doc: "list a directory inside the device's roots"}}
	OpResumable = Op[ResumableRequest, []Resumable]{OpInfo{Name: "resumable", Method: "GET", Path: "/api/v1/resumable", Scope: ScopeDevice,
		Doc: "list the Claude conversations of a directory that can be resumed"}}

	OpKill = Op[KillRequest, Empty]{OpInfo{Name: "kill", Method: "DELETE", Path: "/api/v1/sessions/{id}", Scope: ScopeSession,
		// Removing a big worktree takes a while.
		Timeout: 2 * time.Minute,
		Doc:     "end a session (and remove the worktree corral made for it, if asked)"}}
	OpRename = Op[RenameRequest, Session]{OpInfo{Name: "rename", Method: "PATCH", Path: "/api/v1/sessions/{id}", Scope: ScopeSession,
		Doc: "rename a session"}}
	OpInput = Op[InputRequest, Empty]{OpInfo{Name: "input", Method: "POST", Path: "/api/v1/sessions/{id}/input", Scope: ScopeSession,
		Doc: "type into Claude's input box, then press Enter if asked"}}
	OpAnswer = Op[AnswerRequest, AnswerResult]{OpInfo{Name: "answer", Method: "POST", Path: "/api/v1/sessions/{id}/answer", Scope: ScopeSession,
		Doc: "answer the dialog a session shows"}}
	OpRestart = Op[RestartRequest, Session]{OpInfo{Name: "restart", Method: "POST", Path: "/api/v1/sessions/{id}/restart", Scope: ScopeSession,
		Doc: "start Claude again in an exited session"}}
	OpKeys = Op[KeysRequest, Empty]{OpInfo{Name: "keys", Method: "POST", Path: "/api/v1/sessions/{id}/keys", Scope: ScopeSession,
		Doc: "press tmux-named keys"}}
	OpCapture = Op[CaptureRequest, Screen]{OpInfo{Name: "capture", Method: "GET", Path: "/api/v1/sessions/{id}/screen", Scope: ScopeSession,
		Doc: "the visible screen, with history lines of scrollback"}}
	OpRun = Op[RunRequest, RunResult]{OpInfo{Name: "run", Method: "POST", Path: "/api/v1/sessions/{id}/run", Scope: ScopeSession,
		// The command's own timeout (at most 10 min) plus a margin.
		Timeout: 11 * time.Minute,
		Doc:     "run a command beside a session (its directory and environment)"}}
	OpViewed = Op[SessionRef, Empty]{OpInfo{Name: "viewed", Method: "POST", Path: "/api/v1/sessions/{id}/viewed", Scope: ScopeSession,
		Doc: "mark a session as seen (review becomes idle)"}}
	OpDownload = Op[DownloadRequest, DownloadResult]{OpInfo{Name: "download", Method: "POST", Path: "/api/v1/sessions/{id}/download", Scope: ScopeSession, Status: 201,
		Timeout: 30 * time.Minute,
		Doc:     "fetch a URL (https or s3) into a session's directory"}}
	OpTimeline = Op[TimelineRequest, Timeline]{OpInfo{Name: "timeline", Method: "GET", Path: "/api/v1/sessions/{id}/timeline", Scope: ScopeSession,
		Doc: "the readable conversation: the transcript's last items, or with since what changed after"}}

	OpGitStatus = Op[SessionRef, GitStatus]{OpInfo{Name: "git_status", Method: "GET", Path: "/api/v1/sessions/{id}/git", Scope: ScopeSession,
		Doc: "the git status of a session's folder: branch, and every changed file with its line counts"}}
	OpGitDiff = Op[GitDiffRequest, GitDiff]{OpInfo{Name: "git_diff", Method: "GET", Path: "/api/v1/sessions/{id}/git/diff", Scope: ScopeSession,
		Doc: "the diff of a session's folder (unstaged or staged, or one file), as unified diff text"}}

	OpWebConfig = Op[Empty, WebConfig]{OpInfo{Name: "web_config", Method: "GET", Path: "/api/v1/web/config", Scope: ScopeUser,
		Doc: "what the dashboard needs to know: the server's build and host, the push key, the user's webhook"}}
	OpNotifications = Op[Empty, []LoggedNotification]{OpInfo{Name: "notifications", Method: "GET", Path: "/api/v1/notifications", Scope: ScopeUser,
		Doc: "the user's latest notifications, newest first"}}
	OpSettings = Op[SettingsRequest, Settings]{OpInfo{Name: "settings", Method: "PUT", Path: "/api/v1/settings", Scope: ScopeUser,
		Doc: "change the user's settings (the webhook notifications also go to)"}}
	OpPushSubscribe = Op[PushSubscription, Empty]{OpInfo{Name: "push_subscribe", Method: "POST", Path: "/api/v1/push/subscriptions", Scope: ScopeUser,
		Status: 201, Lenient: true,
		Doc: "send the user's notifications to a browser's Web Push subscription"}}
	OpPushUnsubscribe = Op[PushUnsubscribeRequest, Empty]{OpInfo{Name: "push_unsubscribe", Method: "DELETE", Path: "/api/v1/push/subscriptions", Scope: ScopeUser,
		Lenient: true,
		Doc:     "stop sending to a push subscription of the user's"}}
	OpPushTest = Op[Empty, Empty]{OpInfo{Name: "push_test", Method: "POST", Path: "/api/v1/push/test", Scope: ScopeUser, Status: 202,
		Doc: "send the user a test notification, to every push subscription and the webhook"}}

	OpTermOpen = Op[TermOpenRequest, TermOpenResult]{OpInfo{Name: "term_open", Scope: ScopeLink,
		Doc: "attach a terminal stream to a session"}}
	OpTermClose = Op[TermCloseRequest, Empty]{OpInfo{Name: "term_close", Scope: ScopeLink,
		Doc: "stop sending a terminal stream"}}
	OpTermResize = Op[TermResizeRequest, Empty]{OpInfo{Name: "term_resize", Scope: ScopeLink,
		Doc: "resize a terminal stream's window"}}
)

// Operation is any Op.
type Operation interface{ Info() OpInfo }

// Ops lists every operation, in the order docs/api.md shows them.
func Ops() []OpInfo {
	all := []Operation{
		OpVersion, OpSessions, OpCreate, OpSession, OpRename, OpKill,
		OpInput, OpAnswer, OpRestart, OpKeys, OpCapture, OpRun, OpViewed, OpDownload, OpTimeline,
		OpGitStatus, OpGitDiff,
		OpDevices, OpDirs, OpResumable,
		OpWebConfig, OpNotifications, OpSettings, OpPushSubscribe, OpPushUnsubscribe, OpPushTest,
		OpTermOpen, OpTermClose, OpTermResize,
	}
	out := make([]OpInfo, len(all))
	for i, o := range all {
		out[i] = o.Info()
	}
	return out
}

// CaptureRequest asks for a session's screen, with History lines of
// scrollback above it.
type CaptureRequest struct {
	SessionRef
	History int `json:"history,omitempty"`
}

// MaxHistory bounds CaptureRequest.History.
const MaxHistory = 100000

// Validate refuses what no server could do.
func (r CaptureRequest) Validate() error {
	if r.History < 0 || r.History > MaxHistory {
		return Errorf(CodeBadRequest, "history must be a number of lines between 0 and %d", MaxHistory)
	}
	return nil
}

// DirsRequest lists a directory inside a device's roots; an empty Path
// lists the roots themselves.
type DirsRequest struct {
	Device string `json:"device,omitempty"`
	Path   string `json:"path,omitempty"`
}

// ResumableRequest lists the resumable conversations of Dir.
type ResumableRequest struct {
	Device string `json:"device,omitempty"`
	Dir    string `json:"dir"`
}

func (r CreateRequest) DeviceName() string    { return r.Device }
func (r DirsRequest) DeviceName() string      { return r.Device }
func (r ResumableRequest) DeviceName() string { return r.Device }

// Validate refuses what no server could do.
func (r ResumableRequest) Validate() error {
	if r.Dir == "" {
		return Errorf(CodeBadRequest, "dir is required")
	}
	return nil
}

// Validate refuses what no server could do.
func (r KeysRequest) Validate() error {
	if len(r.Keys) == 0 {
		return Errorf(CodeBadRequest, "no keys given")
	}
	return nil
}

// Validate refuses what no server could do.
func (r RunRequest) Validate() error {
	if len(r.Argv) == 0 || r.Argv[0] == "" {
		return Errorf(CodeBadRequest, "no command given")
	}
	return nil
}

// Validate refuses what no server could do.
func (r DownloadRequest) Validate() error {
	if r.URL == "" {
		return Errorf(CodeBadRequest, "url is required")
	}
	return nil
}

// Validator is a request that can tell it is wrong before it is served.
type Validator interface{ Validate() error }

// TermOpenRequest attaches a terminal stream (term_open). Stream is the
// hub's number for the binary frames of this terminal on this connection;
// Resume, when set, is the agent's stream_id of a stream to continue from
// Offset.
type TermOpenRequest struct {
	Stream uint32 `json:"stream"`
	SessionRef
	Cols   int    `json:"cols"`
	Rows   int    `json:"rows"`
	Resume string `json:"resume"`
	Offset uint64 `json:"offset"`
}

// TermOpenResult is the agent's name of the stream, the offset output
// starts from, and whether the viewer must reset its screen first (it asked
// for bytes the agent no longer holds).
type TermOpenResult struct {
	StreamID string `json:"stream_id"`
	Offset   uint64 `json:"offset"`
	Reset    bool   `json:"reset"`
}

// TermCloseRequest stops sending a stream (term_close).
type TermCloseRequest struct {
	Stream uint32 `json:"stream"`
}

// TermResizeRequest resizes a stream's window (term_resize).
type TermResizeRequest struct {
	Stream uint32 `json:"stream"`
	Cols   int    `json:"cols"`
	Rows   int    `json:"rows"`
}
