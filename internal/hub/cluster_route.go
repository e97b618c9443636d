package hub

// Requests for a device whose link another replica holds: sent over NATS
// to corral.dev.DEVICE, which only the holder subscribes to, answered by
// the holder's own routing (which checks the owner again).

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/corral-dev/corral/internal/api"
	"github.com/corral-dev/corral/internal/identity"
)

// devReq is a request to a device's holder.
type devReq struct {
	Kind string          `json:"kind"` // "op", "term" or "kick"
	User string          `json:"user"`
	Op   string          `json:"op,omitempty"`
	Args json.RawMessage `json:"args,omitempty"`
	Term *termOpen       `json:"term,omitempty"`
}

// devRes is its answer.
type devRes struct {
	Result json.RawMessage `json:"result,omitempty"`
	Err    *api.Error      `json:"err,omitempty"`
	Term   *termOpened     `json:"term,omitempty"`
}

type fromClusterKey struct{}

// fromCluster: the request came from another replica and is answered
// here or not at all (never sent on again, which could loop).
func fromCluster(ctx context.Context) bool { return ctx.Value(fromClusterKey{}) != nil }

// onDeviceRequest serves requests for one of the devices held here, each
// on a goroutine of the layer's (a download may take minutes), at most
// maxInFlight at once.
func (c *cluster) onDeviceRequest(deviceID string) nats.MsgHandler {
	return func(m *nats.Msg) {
		var r devReq
		if err := json.Unmarshal(m.Data, &r); err != nil || r.User == "" {
			return
		}
		select {
		case c.slots <- struct{}{}:
		default:
			c.reply(m, devRes{Err: api.Errorf(api.CodeUnavailable, "the hub is busy")})
			return
		}
		if !c.g.Go(func() {
			defer func() { <-c.slots }()
			c.serveDevice(m, deviceID, r)
		}) {
			<-c.slots
		}
	}
}

func (c *cluster) reply(m *nats.Msg, res devRes) {
	b, _ := json.Marshal(res)
	m.Respond(b)
}

func (c *cluster) serveDevice(m *nats.Msg, deviceID string, r devReq) {
	ctx := context.WithValue(identity.With(c.h.stop, r.User), fromClusterKey{}, true)
	switch r.Kind {
	case "kick":
		// Another replica revoked the device: the database says whether
		// it is so (the bus is not trusted to cut a device off).
		if c.h.o.Accounts == nil {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		if _, err := c.h.o.Accounts.DeviceByID(ctx, deviceID); errors.Is(err, api.ErrNotFound) {
			c.h.log.Warn("device revoked on another replica; cutting it off", "device", deviceID)
			c.h.kick(deviceID, "", false)
		}
	case "op":
		info, ok := c.h.mux.Info(r.Op)
		if !ok || (info.Scope != api.ScopeSession && info.Scope != api.ScopeDevice) {
			c.reply(m, devRes{Err: api.Errorf(api.CodeBadRequest, "unknown op %q", r.Op)})
			return
		}
		timeout := requestTimeout
		if info.Timeout > 0 {
			timeout = info.Timeout
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		req, err := c.h.mux.Decode(r.Op, r.Args)
		if err != nil {
			c.reply(m, devRes{Err: api.AsError(err)})
			return
		}
		res, err := c.h.mux.Serve(ctx, r.Op, req)
		if err != nil {
			c.reply(m, devRes{Err: api.AsError(err)})
			return
		}
		b, err := json.Marshal(res)
		if err != nil {
			c.reply(m, devRes{Err: api.AsError(err)})
			return
		}
		c.reply(m, devRes{Result: b})
	case "term":
		if r.Term == nil {
			return
		}
		opened, err := c.serveTerm(ctx, *r.Term)
		if err != nil {
			c.reply(m, devRes{Err: api.AsError(err)})
			return
		}
		c.reply(m, devRes{Term: &opened})
	}
}

// ask sends a request to a device's holder and waits for its answer.
func (c *cluster) ask(ctx context.Context, deviceID, name string, r devReq, timeout time.Duration) (devRes, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return devRes{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m, err := c.nc.RequestWithContext(ctx, subjDevice+deviceID, b)
	if errors.Is(err, nats.ErrNoResponders) {
		return devRes{}, api.Errorf(api.CodeUnavailable, "device %s is offline", name)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			return devRes{}, api.Errorf(api.CodeUnavailable, "device %s did not answer in time", name)
		}
		return devRes{}, api.Errorf(api.CodeUnavailable, "reaching device %s: %v", name, err)
	}
	var res devRes
	if err := json.Unmarshal(m.Data, &res); err != nil {
		return devRes{}, api.Errorf(api.CodeInternal, "device %s's replica answered badly: %v", name, err)
	}
	if res.Err != nil {
		return res, res.Err
	}
	return res, nil
}

// deviceOfSession finds the device a session of the user is on, from the
// cluster's view of the user's sessions.
func (c *cluster) deviceOfSession(ctx context.Context, u, id string) (Registration, error) {
	bus, err := c.userBus(ctx, u)
	if err != nil {
		return Registration{}, err
	}
	s, ok := bus.Session(id)
	if !ok || s.Device == "" {
		return Registration{}, api.Errorf(api.CodeNotFound, "no session %q", id)
	}
	return c.deviceNamed(ctx, u, s.Device)
}

func (c *cluster) deviceNamed(ctx context.Context, u, name string) (Registration, error) {
	if c.h.o.Accounts == nil {
		return Registration{}, api.Errorf(api.CodeNotFound, "no device %q", name)
	}
	devs, err := c.h.o.Accounts.Devices(ctx, u)
	if err != nil {
		return Registration{}, err
	}
	for _, d := range devs {
		if d.Name == name {
			return d, nil
		}
	}
	return Registration{}, api.Errorf(api.CodeNotFound, "no device %q", name)
}

// forwardOp sends an op to the replica holding dev's link.
func (c *cluster) forwardOp(ctx context.Context, dev Registration, op api.OpInfo, req any) (any, error) {
	u, _ := user(ctx)
	args, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	timeout := requestTimeout
	if op.Timeout > 0 {
		timeout = op.Timeout
	}
	res, err := c.ask(ctx, dev.ID, dev.Name, devReq{Kind: "op", User: u, Op: op.Name, Args: args}, timeout)
	if err != nil {
		return nil, err
	}
	out := reflect.New(op.Result).Interface()
	if err := json.Unmarshal(res.Result, out); err != nil {
		return nil, api.Errorf(api.CodeInternal, "device %s's answer: %v", dev.Name, err)
	}
	return out, nil
}

// forwardSession: the hook of Hub.forwardSession when the session's device
// is not connected here.
func (c *cluster) forwardSession(ctx context.Context, op api.OpInfo, req any, local error) (any, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, err
	}
	dev, err := c.deviceOfSession(ctx, u, req.(api.SessionRequest).SessionID())
	if err != nil {
		if api.AsError(err).Code == api.CodeNotFound {
			return nil, local
		}
		return nil, err
	}
	return c.forwardOp(ctx, dev, op, req)
}

// forwardDevice: the hook of Hub.forwardDevice when the device named (or
// the user's only online device) is not connected here.
func (c *cluster) forwardDevice(ctx context.Context, op api.OpInfo, req any, local error) (any, error) {
	u, err := user(ctx)
	if err != nil {
		return nil, err
	}
	dev, err := c.pick(ctx, u, req.(api.DeviceRequest).DeviceName())
	if err != nil {
		return nil, err
	}
	return c.forwardOp(ctx, dev, op, req)
}

// pick is Hub.pick over every replica: online is what the log says.
func (c *cluster) pick(ctx context.Context, u, name string) (Registration, error) {
	if name != "" {
		return c.deviceNamed(ctx, u, name)
	}
	if c.h.o.Accounts == nil {
		return Registration{}, api.Errorf(api.CodeUnavailable, "no device is online")
	}
	devs, err := c.h.o.Accounts.Devices(ctx, u)
	if err != nil {
		return Registration{}, err
	}
	ids := make([]string, len(devs))
	for i, d := range devs {
		ids[i] = d.ID
	}
	on, err := c.log.Online(ctx, ids)
	if err != nil {
		return Registration{}, err
	}
	var online []Registration
	for _, d := range devs {
		if on[d.ID] {
			online = append(online, d)
		}
	}
	switch len(online) {
	case 0:
		return Registration{}, api.Errorf(api.CodeUnavailable, "no device is online")
	case 1:
		return online[0], nil
	}
	names := make([]string, len(online))
	for i, d := range online {
		names[i] = d.Name
	}
	sort.Strings(names)
	return Registration{}, api.Errorf(api.CodeBadRequest, "say which device: %s", strings.Join(names, ", "))
}
