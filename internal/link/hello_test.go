package link

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

type helloResult struct {
	m   Msg
	err error
}

func TestHandshake(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx := ctxT(t)
		server := make(chan helloResult, 1)
		go func() {
			h, err := ServerHello(ctx, c.b, func(h Msg) (Msg, error) {
				return Msg{DeviceID: "d-" + h.Hostname, DeviceName: h.Hostname, HubVersion: "0.9", HeartbeatMS: 15000}, nil
			})
			server <- helloResult{h, err}
		}()
		w, err := ClientHello(ctx, c.a, Msg{Hostname: "box", OS: "linux", Arch: "arm64", Version: "0.9",
			Capabilities: []string{CapSessions, CapTerminal}})
		if err != nil {
			t.Fatal(err)
		}
		if w.T != TypeWelcome || w.DeviceID != "d-box" || w.HeartbeatMS != 15000 {
			t.Errorf("welcome: %+v", w)
		}
		s := <-server
		if s.err != nil {
			t.Fatal(s.err)
		}
		if s.m.T != TypeHello || s.m.Protocol != Protocol || s.m.Hostname != "box" || len(s.m.Capabilities) != 2 {
			t.Errorf("hello: %+v", s.m)
		}
		// The link goes on from there.
		hub, ag := run(t, c.b, Options{}), run(t, c.a, Options{})
		if err := ag.Call(ctx, "x", nil, nil); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("after the handshake: %v", err)
		}
		_ = hub
	})
}

func TestHandshakeVersionMismatch(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx := ctxT(t)
		server := make(chan helloResult, 1)
		go func() {
			h, err := ServerHello(ctx, c.b, func(Msg) (Msg, error) {
				t.Error("welcome asked for a hello of another version")
				return Msg{}, nil
			})
			server <- helloResult{h, err}
		}()
		_, err := ClientHello(ctx, c.a, Msg{Protocol: 2, Hostname: "box"})
		if !errors.Is(err, ErrProtocol) || CloseStatus(err) != StatusProtocolError || !strings.Contains(err.Error(), "protocol 2 is not supported") {
			t.Errorf("client: %v", err)
		}
		if s := <-server; !errors.Is(s.err, ErrProtocol) || !strings.Contains(s.err.Error(), "protocol 2") {
			t.Errorf("server: %v", s.err)
		}
	})
}

// A welcome from a hub of another version is refused by the agent.
func TestHandshakeWelcomeVersion(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx := ctxT(t)
		go ServerHello(ctx, c.b, func(Msg) (Msg, error) { return Msg{Protocol: 3}, nil })
		if _, err := ClientHello(ctx, c.a, Msg{}); !errors.Is(err, ErrProtocol) {
			t.Errorf("%v", err)
		}
	})
}

func TestHandshakeRefused(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx := ctxT(t)
		go ServerHello(ctx, c.b, func(Msg) (Msg, error) {
			return Msg{}, api.Errorf(api.CodeUnauthorized, "device revoked")
		})
		_, err := ClientHello(ctx, c.a, Msg{Hostname: "box"})
		var ce *CloseError
		if !errors.As(err, &ce) || ce.Code != StatusPolicy || ce.Reason != "device revoked" || errors.Is(err, ErrProtocol) {
			t.Errorf("%v", err)
		}
	})
}

func TestHandshakeWrongFirstMessage(t *testing.T) {
	for _, c := range []struct {
		name string
		kind Kind
		b    string
		want error
		code int
	}{
		{"sync first", Text, `{"t":"sync","seq":1,"sessions":[]}`, ErrProtocol, StatusProtocolError},
		{"frame first", Binary, "\x11\x00\x00\x00\x01x", ErrProtocol, StatusProtocolError},
		{"malformed", Text, `{"t":`, ErrInvalid, StatusInvalidData},
	} {
		t.Run(c.name, func(t *testing.T) {
			eachKind(t, func(t *testing.T, kind string) {
				cs := newConns(t, kind)
				ctx := ctxT(t)
				server := make(chan helloResult, 1)
				go func() {
					h, err := ServerHello(ctx, cs.b, func(Msg) (Msg, error) { return Msg{}, nil })
					server <- helloResult{h, err}
				}()
				if err := cs.a.Write(ctx, c.kind, []byte(c.b)); err != nil {
					t.Fatal(err)
				}
				if s := <-server; !errors.Is(s.err, c.want) {
					t.Errorf("server: %v", s.err)
				}
				if err := readErr(t, cs.a, 5*time.Second); CloseStatus(err) != c.code {
					t.Errorf("client: %v", err)
				}
			})
		})
	}
}

func TestHandshakeTimeout(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		// Nobody says hello.
		if _, err := ServerHello(ctx, c.b, func(Msg) (Msg, error) { return Msg{}, nil }); err == nil {
			t.Error("no hello, no error")
		}
		// Nobody answers the hello.
		c2 := newConns(t, kind)
		ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel2()
		if _, err := ClientHello(ctx2, c2.a, Msg{}); !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "closed") {
			t.Errorf("no welcome: %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("took %v", d)
		}
	})
}
