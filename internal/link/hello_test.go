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
			h, err := ServerHello(ctx, c.b, Msg{Nonce: "n1", HubID: "hub1"}, func(h Msg) (Msg, error) {
				if h.Sig != "signed n1 for hub1" {
					return Msg{}, api.Errorf(api.CodeUnauthorized, "bad signature %q", h.Sig)
				}
				return Msg{DeviceID: "d-" + h.Hostname, DeviceName: h.Hostname, HubVersion: "0.9", HeartbeatMS: 15000}, nil
			})
			server <- helloResult{h, err}
		}()
		w, err := ClientHello(ctx, c.a, func(ch Msg) (Msg, error) {
			if ch.T != TypeChallenge {
				t.Errorf("challenge: %+v", ch)
			}
			return Msg{Hostname: "box", OS: "linux", Arch: "arm64", Version: "0.9",
				Sig: "signed " + ch.Nonce + " for " + ch.HubID}, nil
		})
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
		if s.m.T != TypeHello || s.m.Protocol != Protocol || s.m.Hostname != "box" {
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
			h, err := ServerHello(ctx, c.b, Msg{}, func(Msg) (Msg, error) {
				t.Error("welcome asked for a hello of another version")
				return Msg{}, nil
			})
			server <- helloResult{h, err}
		}()
		_, err := ClientHello(ctx, c.a, func(Msg) (Msg, error) { return Msg{Protocol: 7, Hostname: "box"}, nil })
		if !errors.Is(err, ErrProtocol) || CloseStatus(err) != StatusProtocolError || !strings.Contains(err.Error(), "protocol 7 is not supported") {
			t.Errorf("client: %v", err)
		}
		if s := <-server; !errors.Is(s.err, ErrProtocol) || !strings.Contains(s.err.Error(), "protocol 7") {
			t.Errorf("server: %v", s.err)
		}
	})
}

// A welcome from a hub of another version is refused by the agent.
func TestHandshakeWelcomeVersion(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx := ctxT(t)
		go ServerHello(ctx, c.b, Msg{}, func(Msg) (Msg, error) { return Msg{Protocol: 3}, nil })
		if _, err := ClientHello(ctx, c.a, func(Msg) (Msg, error) { return Msg{}, nil }); !errors.Is(err, ErrProtocol) {
			t.Errorf("%v", err)
		}
	})
}

func TestHandshakeRefused(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx := ctxT(t)
		go ServerHello(ctx, c.b, Msg{}, func(Msg) (Msg, error) {
			return Msg{}, api.Errorf(api.CodeUnauthorized, "device revoked")
		})
		_, err := ClientHello(ctx, c.a, func(Msg) (Msg, error) { return Msg{Hostname: "box"}, nil })
		var ce *CloseError
		if !errors.As(err, &ce) || ce.Code != StatusPolicy || ce.Reason != "device revoked" || errors.Is(err, ErrProtocol) {
			t.Errorf("%v", err)
		}
	})
}

// A welcome that fails with a *CloseError closes with its code and reason:
// the hub refuses a second connection of a device with 4003.
func TestHandshakeRefusedWithCode(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx := ctxT(t)
		server := make(chan helloResult, 1)
		go func() {
			h, err := ServerHello(ctx, c.b, Msg{}, func(Msg) (Msg, error) {
				return Msg{}, &CloseError{Code: StatusConflict, Reason: "in use"}
			})
			server <- helloResult{h, err}
		}()
		_, err := ClientHello(ctx, c.a, func(Msg) (Msg, error) { return Msg{Hostname: "box"}, nil })
		var ce *CloseError
		if !errors.As(err, &ce) || ce.Code != StatusConflict || ce.Reason != "in use" {
			t.Errorf("client: %v", err)
		}
		// The hub still learns who said hello, for its log.
		if s := <-server; s.err == nil || s.m.Hostname != "box" {
			t.Errorf("server: %+v", s)
		}
	})
}

// An agent that cannot answer the challenge (its key is gone) says so and
// closes.
func TestHandshakeCannotAnswer(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx := ctxT(t)
		go ServerHello(ctx, c.b, Msg{}, func(Msg) (Msg, error) { return Msg{}, nil })
		_, err := ClientHello(ctx, c.a, func(Msg) (Msg, error) { return Msg{}, errors.New("no key") })
		if err == nil || !strings.Contains(err.Error(), "no key") {
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
					h, err := ServerHello(ctx, cs.b, Msg{}, func(Msg) (Msg, error) { return Msg{}, nil })
					server <- helloResult{h, err}
				}()
				if _, _, err := cs.a.Read(ctx); err != nil { // the challenge
					t.Fatal(err)
				}
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
		// Nobody says hello (the challenge goes out; a Pipe buffers it).
		go func() { c.a.Read(context.Background()) }()
		if _, err := ServerHello(ctx, c.b, Msg{}, func(Msg) (Msg, error) { return Msg{}, nil }); err == nil {
			t.Error("no hello, no error")
		}
		// Nobody sends a challenge.
		c2 := newConns(t, kind)
		ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel2()
		if _, err := ClientHello(ctx2, c2.a, func(Msg) (Msg, error) { return Msg{}, nil }); !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "closed") {
			t.Errorf("no challenge: %v", err)
		}
		// Nobody answers the hello.
		c3 := newConns(t, kind)
		ctx3, cancel3 := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel3()
		go func() {
			b, _ := EncodeMsg(Msg{T: TypeChallenge, Nonce: "n"})
			c3.b.Write(context.Background(), Text, b)
			c3.b.Read(context.Background())
		}()
		if _, err := ClientHello(ctx3, c3.a, func(Msg) (Msg, error) { return Msg{}, nil }); !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "closed") {
			t.Errorf("no welcome: %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("took %v", d)
		}
	})
}

// An agent whose hub does not start with a challenge (a hub that wants
// the agent to speak first) refuses it with 1002.
func TestHandshakeNoChallenge(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string) {
		c := newConns(t, kind)
		ctx := ctxT(t)
		writeMsg(t, c.b, Msg{T: TypeWelcome, DeviceID: "d1"})
		_, err := ClientHello(ctx, c.a, func(Msg) (Msg, error) {
			t.Error("asked to answer something that is no challenge")
			return Msg{}, nil
		})
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("client: %v", err)
		}
		if err := readErr(t, c.b, 5*time.Second); CloseStatus(err) != StatusProtocolError {
			t.Errorf("hub end: %v", err)
		}
	})
}
