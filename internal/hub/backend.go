package hub

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/events"
	"github.com/corral-dev/corral/internal/httpapi"
	"github.com/corral-dev/corral/internal/identity"
	"github.com/corral-dev/corral/internal/link"
	"github.com/corral-dev/corral/internal/version"
	"github.com/corral-dev/corral/internal/web"
)

// requestTimeout bounds a request to a device; long ones (run, download)
// carry their own limits.
const requestTimeout = 30 * time.Second

// The hub serves the API (httpapi.Backend) and the dashboard (web.Backend)
// for the user the request carries.
var (
	_ httpapi.Backend = (*Hub)(nil)
	_ web.Backend     = (*Hub)(nil)
)

func user(ctx context.Context) (string, error) {
	u := identity.User(ctx)
	if u == "" {
		return "", api.Errorf(api.CodeUnauthorized, "no user")
	}
	return u, nil
}

// route finds the live device that owns a session of the asking user. A
// session of another user is "not found", exactly like one that does not
// exist.
func (h *Hub) route(ctx context.Context, id string) (*device, *link.Peer, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	dev := h.devices[h.owner[id]]
	if dev == nil || dev.info.Owner != u {
		return nil, nil, api.Errorf(api.CodeNotFound, "no session %q", id)
	}
	if dev.peer == nil {
		return nil, nil, api.Errorf(api.CodeUnavailable, "device %s is offline", dev.info.Name)
	}
	return dev, dev.peer, nil
}

// pick finds a live device of the asking user by name; an empty name picks
// the user's only online device.
func (h *Hub) pick(ctx context.Context, name string) (*device, *link.Peer, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var online []*device
	for _, d := range h.devices {
		if d.info.Owner != u {
			continue
		}
		if name != "" && d.info.Name == name {
			if d.peer == nil {
				return nil, nil, api.Errorf(api.CodeUnavailable, "device %s is offline", name)
			}
			return d, d.peer, nil
		}
		if d.peer != nil {
			online = append(online, d)
		}
	}
	if name != "" {
		return nil, nil, api.Errorf(api.CodeNotFound, "no device %q", name)
	}
	switch len(online) {
	case 0:
		return nil, nil, api.Errorf(api.CodeUnavailable, "no device is online")
	case 1:
		return online[0], online[0].peer, nil
	}
	names := make([]string, len(online))
	for i, d := range online {
		names[i] = d.info.Name
	}
	sort.Strings(names)
	return nil, nil, api.Errorf(api.CodeBadRequest, "say which device: %s", strings.Join(names, ", "))
}

func call[T any](ctx context.Context, p *link.Peer, op string, args any) (T, error) {
	var out T
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, requestTimeout)
		defer cancel()
	}
	err := p.CallInOrder(ctx, op, args, &out)
	return out, err
}

// sessionCall routes a request about one session.
func sessionCall[T any](h *Hub, ctx context.Context, id, op string, args any) (T, error) {
	_, p, err := h.route(ctx, id)
	if err != nil {
		var zero T
		return zero, err
	}
	return call[T](ctx, p, op, args)
}

// stampFor adds the device's name to a session an agent returned.
func (h *Hub) stampFor(dev *device, s api.Session) api.Session { return stamp(dev.info, s) }

func (h *Hub) Sessions(ctx context.Context) ([]api.Session, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, err
	}
	return h.Bus(u).Sessions(), nil
}

func (h *Hub) Session(ctx context.Context, id string) (api.Session, error) {
	u, err := user(ctx)
	if err != nil {
		return api.Session{}, err
	}
	s, ok := h.Bus(u).Session(id)
	if !ok {
		return api.Session{}, api.Errorf(api.CodeNotFound, "no session %q", id)
	}
	return s, nil
}

func (h *Hub) Create(ctx context.Context, req api.CreateRequest) (api.Session, error) {
	dev, p, err := h.pick(ctx, req.Device)
	if err != nil {
		return api.Session{}, err
	}
	req.Device = ""
	s, err := call[api.Session](ctx, p, link.OpCreate, req)
	if err != nil {
		return api.Session{}, err
	}
	return h.stampFor(dev, s), nil
}

func (h *Hub) Kill(ctx context.Context, id string) error {
	_, err := sessionCall[link.Empty](h, ctx, id, link.OpKill, link.IDArgs{ID: id})
	return err
}

func (h *Hub) Rename(ctx context.Context, id, name string) (api.Session, error) {
	dev, p, err := h.route(ctx, id)
	if err != nil {
		return api.Session{}, err
	}
	s, err := call[api.Session](ctx, p, link.OpRename, link.RenameArgs{ID: id, Name: name})
	if err != nil {
		return api.Session{}, err
	}
	return h.stampFor(dev, s), nil
}

func (h *Hub) SendText(ctx context.Context, id string, req api.InputRequest) error {
	_, err := sessionCall[link.Empty](h, ctx, id, link.OpInput, link.InputArgs{ID: id, Text: req.Text, Enter: req.Enter, ClearDraft: req.ClearDraft})
	return err
}

func (h *Hub) Answer(ctx context.Context, id string, req api.AnswerRequest) (api.AnswerResult, error) {
	return sessionCall[api.AnswerResult](h, ctx, id, link.OpAnswer, link.AnswerArgs{ID: id, AnswerRequest: req})
}

func (h *Hub) Restart(ctx context.Context, id string, req api.RestartRequest) (api.Session, error) {
	dev, p, err := h.route(ctx, id)
	if err != nil {
		return api.Session{}, err
	}
	s, err := call[api.Session](ctx, p, link.OpRestart, link.RestartArgs{ID: id, Resume: req.Resume})
	if err != nil {
		return api.Session{}, err
	}
	return h.stampFor(dev, s), nil
}

func (h *Hub) SendKeys(ctx context.Context, id string, keys []string) error {
	_, err := sessionCall[link.Empty](h, ctx, id, link.OpKeys, link.KeysArgs{ID: id, Keys: keys})
	return err
}

func (h *Hub) Viewed(ctx context.Context, id string) error {
	_, err := sessionCall[link.Empty](h, ctx, id, link.OpViewed, link.IDArgs{ID: id})
	return err
}

func (h *Hub) Capture(ctx context.Context, id string, history int) (api.Screen, error) {
	return sessionCall[api.Screen](h, ctx, id, link.OpCapture, link.CaptureArgs{ID: id, History: history})
}

func (h *Hub) Run(ctx context.Context, id string, req api.RunRequest) (api.RunResult, error) {
	// The command's own timeout (at most 10 min) plus a margin.
	ctx, cancel := context.WithTimeout(ctx, 11*time.Minute)
	defer cancel()
	return sessionCall[api.RunResult](h, ctx, id, link.OpRun, link.RunArgs{ID: id, Argv: req.Argv, TimeoutMS: req.TimeoutMS})
}

func (h *Hub) Timeline(ctx context.Context, id string) (api.Timeline, error) {
	return sessionCall[api.Timeline](h, ctx, id, link.OpTimeline, link.IDArgs{ID: id})
}

func (h *Hub) Download(ctx context.Context, id string, req api.DownloadRequest) (api.DownloadResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	return sessionCall[api.DownloadResult](h, ctx, id, link.OpDownload,
		link.DownloadArgs{ID: id, URL: req.URL, Path: req.Path, Overwrite: req.Overwrite, MaxBytes: req.MaxBytes})
}

func (h *Hub) ListDir(ctx context.Context, device, path string) (api.DirListing, error) {
	_, p, err := h.pick(ctx, device)
	if err != nil {
		return api.DirListing{}, err
	}
	return call[api.DirListing](ctx, p, link.OpDirs, link.DirsArgs{Path: path})
}

func (h *Hub) Resumable(ctx context.Context, device, dir string) ([]api.Resumable, error) {
	_, p, err := h.pick(ctx, device)
	if err != nil {
		return nil, err
	}
	return call[[]api.Resumable](ctx, p, link.OpResumable, link.ResumableArgs{Dir: dir})
}

func (h *Hub) Devices(ctx context.Context) ([]api.Device, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, err
	}
	return h.DevicesOf(u), nil
}

func (h *Hub) Subscribe(ctx context.Context, since uint64) (httpapi.Subscription, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, err
	}
	return h.Bus(u).Subscribe(since), nil
}

func (h *Hub) Version(ctx context.Context) api.VersionInfo {
	b := version.Get()
	v := api.VersionInfo{Version: b.Version, Commit: b.Commit, BuildDate: b.Date, PID: os.Getpid()}
	if p := h.saves.problem(); p != "" {
		v.Problems = append(v.Problems, p)
	}
	return v
}

// OpenTerminal relays a session's terminal from its device (web.Backend).
func (h *Hub) OpenTerminal(ctx context.Context, id string, cols, rows int, resume string, offset uint64) (web.Terminal, uint64, bool, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, 0, false, err
	}
	h.mu.Lock()
	dev := h.devices[h.owner[id]]
	if dev == nil || dev.info.Owner != u {
		h.mu.Unlock()
		return nil, 0, false, api.Errorf(api.CodeNotFound, "no session %q", id)
	}
	p := dev.peer
	if p == nil {
		h.mu.Unlock()
		return nil, 0, false, api.Errorf(api.CodeUnavailable, "device %s is offline", dev.info.Name)
	}
	dev.nextStream++
	num := dev.nextStream
	devID := dev.info.ID
	st := newStream(h, devID, num, p)
	dev.streams[num] = st
	h.mu.Unlock()

	res, err := call[link.TermOpenResult](ctx, p, link.OpTermOpen, link.TermOpenArgs{Stream: num, ID: id, Cols: cols, Rows: rows, Resume: resume, Offset: offset})
	if err != nil {
		h.dropStream(devID, num, st)
		if ctx.Err() != nil {
			// The agent may have opened it before the cancel reached it:
			// nobody will read it, so let it go at once.
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			p.Call(cctx, link.OpTermClose, link.TermCloseArgs{Stream: num}, &link.Empty{})
			cancel()
		}
		return nil, 0, false, err
	}
	st.opened(res)
	return st, res.Offset, res.Reset, nil
}

// BusOf is for callers that attach to one user's events (notifications).
func (h *Hub) BusOf(user string) *events.Bus { return h.Bus(user) }

// String names a device for messages.
func (d *device) String() string { return fmt.Sprintf("%s/%s", d.info.Owner, d.info.Name) }
