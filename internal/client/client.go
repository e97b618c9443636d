// Package client is the typed Go client of corral's HTTP+JSON API, used by
// the CLI. It talks to a daemon's unix socket or to a hub over HTTP(S).
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"syscall"

	"github.com/corral-dev/corral/internal/api"
)

// Client calls the API.
type Client struct {
	base  string // http://corral or https://hub.example
	token string
	hc    *http.Client
	// unix: the client of a local daemon, for which a refused connection
	// means "not running".
	unix bool
	// err refuses every call: a hub URL the token must not be sent to.
	err error
}

// Unix returns a client of the daemon listening on a unix socket.
func Unix(sock string) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConns: 4,
	}
	return &Client{base: "http://corral", hc: &http.Client{Transport: tr}, unix: true}
}

// HTTP returns a client of a hub at baseURL, authenticated with a bearer
// token. The token goes only over https, or plain http to this machine: for
// any other URL (see CheckURL) every call fails with the reason, and so
// does a redirect to such a URL.
func HTTP(baseURL, token string) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), token: token}
	c.err = CheckURL(c.base)
	c.hc = &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		// Go keeps Authorization on a redirect to the same host, https
		// to http included.
		return CheckURL(req.URL.String())
	}}
	return c
}

// Err is the reason every call of c fails, if there is one: a hub URL
// that CheckURL refuses.
func (c *Client) Err() error { return c.err }

// CheckURL says whether a token may be sent to a hub at rawURL: over
// https anywhere, over plain http (or ws) only to a loopback address, where
// nothing crosses a network.
func CheckURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("hub URL %q: want https://host[:port]", rawURL)
	}
	switch u.Scheme {
	case "https", "wss":
		return nil
	case "http", "ws":
		if Loopback(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("hub URL %s: refusing to send the token in clear text over %s:// to %s; use https://%s (plain http only to this machine: 127.0.0.1, ::1, localhost)",
			u.Redacted(), u.Scheme, u.Hostname(), u.Host)
	}
	return fmt.Errorf("hub URL %q: want https://host[:port]", rawURL)
}

// Loopback reports whether host names this machine: "localhost" or a
// loopback IP address.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrNoDaemon is returned when nothing listens on the socket.
var ErrNoDaemon = errors.New("corral is not running")

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	if c.err != nil {
		return c.err
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.connErr(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return readError(resp)
	}
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("bad response from corral: %w", err)
	}
	return nil
}

func (c *Client) connErr(err error) error {
	if c.unix && (errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)) {
		return fmt.Errorf("%w (start it with `corral serve`)", ErrNoDaemon)
	}
	return err
}

func readError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e api.Error
	if json.Unmarshal(b, &e) == nil && e.Message != "" {
		return &e
	}
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		msg = resp.Status
	}
	return &api.Error{Code: codeFor(resp.StatusCode), Message: msg}
}

func codeFor(status int) string {
	switch status {
	case 400:
		return api.CodeBadRequest
	case 401:
		return api.CodeUnauthorized
	case 403:
		return api.CodeForbidden
	case 404:
		return api.CodeNotFound
	case 409:
		return api.CodeConflict
	case 413:
		return api.CodeTooLarge
	case 429:
		return api.CodeTooMany
	case 503:
		return api.CodeUnavailable
	}
	return api.CodeInternal
}

// Do runs op through the API: the request's path fields go in the path,
// the others in the query (a GET) or the JSON body, and the answer is
// decoded as the op's result.
func Do[Req, Res any](ctx context.Context, c *Client, op api.Op[Req, Res], req Req) (Res, error) {
	var res Res
	info := op.Info()
	if info.Path == "" {
		return res, fmt.Errorf("%s is an op of the device link, with no API route", info.Name)
	}
	path, err := info.Target(req)
	if err != nil {
		return res, err
	}
	var in any
	if info.Method != http.MethodGet && info.BodyFields() {
		if in, err = body(req, info.PathParams()); err != nil {
			return res, err
		}
	}
	var out any = &res
	if info.Result == reflect.TypeFor[api.Empty]() {
		out = nil
	}
	err = c.do(ctx, info.Method, path, in, out)
	return res, err
}

// body is req as JSON without the fields the path carries.
func body(req any, path []string) (json.RawMessage, error) {
	b, err := json.Marshal(req)
	if err != nil || len(path) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, p := range path {
		delete(m, p)
	}
	return json.Marshal(m)
}

func ref(id string) api.SessionRef { return api.SessionRef{ID: id} }

// Version describes the daemon.
func (c *Client) Version(ctx context.Context) (api.VersionInfo, error) {
	return Do(ctx, c, api.OpVersion, api.Empty{})
}

// Sessions lists sessions.
func (c *Client) Sessions(ctx context.Context) ([]api.Session, error) {
	return Do(ctx, c, api.OpSessions, api.Empty{})
}

// Session gets one session.
func (c *Client) Session(ctx context.Context, id string) (api.Session, error) {
	return Do(ctx, c, api.OpSession, ref(id))
}

// Create starts a session.
func (c *Client) Create(ctx context.Context, req api.CreateRequest) (api.Session, error) {
	return Do(ctx, c, api.OpCreate, req)
}

// Kill ends a session.
func (c *Client) Kill(ctx context.Context, id string) error {
	return c.KillWith(ctx, api.KillRequest{SessionRef: ref(id)})
}

// KillWith ends a session with options (removing its worktree).
func (c *Client) KillWith(ctx context.Context, req api.KillRequest) error {
	_, err := Do(ctx, c, api.OpKill, req)
	return err
}

// GitStatus is the git status of a session's folder.
func (c *Client) GitStatus(ctx context.Context, id string) (api.GitStatus, error) {
	return Do(ctx, c, api.OpGitStatus, ref(id))
}

// GitDiff is the diff of a session's folder.
func (c *Client) GitDiff(ctx context.Context, req api.GitDiffRequest) (api.GitDiff, error) {
	return Do(ctx, c, api.OpGitDiff, req)
}

// Rename renames a session.
func (c *Client) Rename(ctx context.Context, id, name string) (api.Session, error) {
	return Do(ctx, c, api.OpRename, api.RenameRequest{SessionRef: ref(id), Name: name})
}

// SendText types text, then presses Enter if enter is set.
func (c *Client) SendText(ctx context.Context, id, text string, enter bool) error {
	return c.Input(ctx, id, api.InputRequest{Text: text, Enter: enter})
}

// Input types into Claude's input box (see api.InputRequest).
func (c *Client) Input(ctx context.Context, id string, req api.InputRequest) error {
	req.ID = id
	_, err := Do(ctx, c, api.OpInput, req)
	return err
}

// Answer answers the dialog a session shows.
func (c *Client) Answer(ctx context.Context, id string, req api.AnswerRequest) (api.AnswerResult, error) {
	req.ID = id
	return Do(ctx, c, api.OpAnswer, req)
}

// Restart starts Claude again in an exited session.
func (c *Client) Restart(ctx context.Context, id string, req api.RestartRequest) (api.Session, error) {
	req.ID = id
	return Do(ctx, c, api.OpRestart, req)
}

// SendKeys presses keys.
func (c *Client) SendKeys(ctx context.Context, id string, keys ...string) error {
	_, err := Do(ctx, c, api.OpKeys, api.KeysRequest{SessionRef: ref(id), Keys: keys})
	return err
}

// Capture returns the screen, with history lines of scrollback.
func (c *Client) Capture(ctx context.Context, id string, history int) (api.Screen, error) {
	return Do(ctx, c, api.OpCapture, api.CaptureRequest{SessionRef: ref(id), History: history})
}

// Run runs a command beside a session.
func (c *Client) Run(ctx context.Context, id string, req api.RunRequest) (api.RunResult, error) {
	req.ID = id
	return Do(ctx, c, api.OpRun, req)
}

// Viewed marks a session as seen.
func (c *Client) Viewed(ctx context.Context, id string) error {
	_, err := Do(ctx, c, api.OpViewed, ref(id))
	return err
}

// Download fetches a URL into a session's directory.
func (c *Client) Download(ctx context.Context, id string, req api.DownloadRequest) (api.DownloadResult, error) {
	req.ID = id
	return Do(ctx, c, api.OpDownload, req)
}

// Timeline returns a session's readable conversation.
func (c *Client) Timeline(ctx context.Context, id string) (api.Timeline, error) {
	return Do(ctx, c, api.OpTimeline, api.TimelineRequest{SessionRef: ref(id)})
}

// Devices lists the machines (through a hub).
func (c *Client) Devices(ctx context.Context) ([]api.Device, error) {
	return Do(ctx, c, api.OpDevices, api.Empty{})
}

// ListDir lists a directory on a device ("" for the local one).
func (c *Client) ListDir(ctx context.Context, device, path string) (api.DirListing, error) {
	return Do(ctx, c, api.OpDirs, api.DirsRequest{Device: device, Path: path})
}

// Resumable lists the Claude sessions of dir that can be resumed.
func (c *Client) Resumable(ctx context.Context, device, dir string) ([]api.Resumable, error) {
	return Do(ctx, c, api.OpResumable, api.ResumableRequest{Device: device, Dir: dir})
}

// StreamEvents streams events from since (0: start with a snapshot) until ctx ends,
// calling fn for each. It returns when the stream ends.
func (c *Client) StreamEvents(ctx context.Context, since uint64, fn func(api.Event) error) error {
	if c.err != nil {
		return c.err
	}
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+"/api/v1/events?since="+strconv.FormatUint(since, 10), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/x-ndjson")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.connErr(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return readError(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue // keepalive
		}
		var ev api.Event
		if err := json.Unmarshal(line, &ev); err != nil {
			return fmt.Errorf("bad event from corral: %w", err)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return io.ErrUnexpectedEOF
}

// Admin calls the management of the hub that serves a data directory, on
// its unix socket (hub.AdminHandler): a POST of in to path, the answer
// decoded into out.
func (c *Client) Admin(ctx context.Context, path string, in, out any) error {
	return c.do(ctx, http.MethodPost, path, in, out)
}
