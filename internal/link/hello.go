package link

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/corral-dev/corral/internal/api"
)

// HandshakeTimeout bounds the first exchange (challenge, hello, welcome).
const HandshakeTimeout = 10 * time.Second

// ErrProtocol: the two ends do not speak the same protocol version, or the
// first exchange went wrong.
var ErrProtocol = errors.New("link protocol mismatch")

// ClientHello is the agent's half of the first exchange: it waits for the
// hub's challenge, asks answer for the hello that answers it (its T and,
// when zero, its Protocol are filled in), sends it and waits for the
// welcome, all within HandshakeTimeout. On error the conn is closed: a hub
// that refuses the hello closes with 1002 (another protocol version; the
// error wraps ErrProtocol and the hub's reason), 1008 (the key or the
// token was refused) or 4003 (another connection holds the device's
// identity), and the error carries the *CloseError.
func ClientHello(ctx context.Context, c Conn, answer func(challenge Msg) (Msg, error)) (Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, HandshakeTimeout)
	defer cancel()
	ch, err := readFirst(ctx, c, TypeChallenge)
	if err != nil {
		if CloseStatus(err) == StatusProtocolError {
			return Msg{}, fmt.Errorf("link: waiting for the challenge: %w: %w", ErrProtocol, err)
		}
		return Msg{}, fmt.Errorf("link: waiting for the challenge: %w", err)
	}
	hello, err := answer(ch)
	if err != nil {
		closeAsync(c, StatusInternal, "cannot answer the challenge")
		return Msg{}, fmt.Errorf("link: answering the challenge: %w", err)
	}
	hello.T = TypeHello
	if hello.Protocol == 0 {
		hello.Protocol = Protocol
	}
	b, err := EncodeMsg(hello)
	if err != nil {
		closeAsync(c, StatusInternal, "bad hello")
		return Msg{}, fmt.Errorf("link: hello: %w", err)
	}
	if err := c.Write(ctx, Text, b); err != nil {
		closeAsync(c, StatusInternal, "hello failed")
		return Msg{}, fmt.Errorf("link: sending hello: %w", err)
	}
	w, err := readFirst(ctx, c, TypeWelcome)
	if err != nil {
		if CloseStatus(err) == StatusProtocolError {
			return Msg{}, fmt.Errorf("link: the hub refused the hello: %w: %w", ErrProtocol, err)
		}
		return Msg{}, fmt.Errorf("link: the hub refused the hello: %w", err)
	}
	if w.Protocol != 0 && w.Protocol != Protocol {
		reason := fmt.Sprintf("protocol %d is not supported; this agent speaks %d", w.Protocol, Protocol)
		closeAsync(c, StatusProtocolError, reason)
		return Msg{}, fmt.Errorf("link: %w: %s", ErrProtocol, reason)
	}
	return w, nil
}

// ServerHello is the hub's half of the first exchange: it sends challenge
// (its T is filled in), waits for the hello (all within HandshakeTimeout),
// checks its protocol version, asks welcome for the answer and sends it.
// It returns the hello. On error the conn is closed: 1002 for another
// protocol version or an unexpected first message, 1007 for malformed
// JSON, and when welcome fails the code of the *CloseError it returns,
// else 1008 for an unauthorized or forbidden *api.Error, else 1011, with
// the error's text as the reason.
func ServerHello(ctx context.Context, c Conn, challenge Msg, welcome func(hello Msg) (Msg, error)) (Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, HandshakeTimeout)
	defer cancel()
	challenge.T = TypeChallenge
	cb, err := EncodeMsg(challenge)
	if err != nil {
		closeAsync(c, StatusInternal, "bad challenge")
		return Msg{}, fmt.Errorf("link: challenge: %w", err)
	}
	if err := c.Write(ctx, Text, cb); err != nil {
		closeAsync(c, StatusInternal, "challenge failed")
		return Msg{}, fmt.Errorf("link: sending the challenge: %w", err)
	}
	h, err := readFirst(ctx, c, TypeHello)
	if err != nil {
		return Msg{}, fmt.Errorf("link: waiting for hello: %w", err)
	}
	if h.Protocol != Protocol {
		reason := fmt.Sprintf("protocol %d is not supported; this hub speaks %d", h.Protocol, Protocol)
		closeAsync(c, StatusProtocolError, reason)
		return Msg{}, fmt.Errorf("link: %w: %s", ErrProtocol, reason)
	}
	w, err := welcome(h)
	if err != nil {
		code := StatusInternal
		var ce *CloseError
		switch {
		case errors.As(err, &ce):
			code = ce.Code
		case errors.Is(err, api.ErrUnauthorized) || errors.Is(err, api.ErrForbidden):
			code = StatusPolicy
		}
		reason := err.Error()
		if ce != nil && ce.Reason != "" {
			reason = ce.Reason
		}
		closeAsync(c, code, reason)
		return h, fmt.Errorf("link: hello refused: %w", err)
	}
	w.T = TypeWelcome
	b, err := EncodeMsg(w)
	if err != nil {
		closeAsync(c, StatusInternal, "bad welcome")
		return Msg{}, fmt.Errorf("link: welcome: %w", err)
	}
	if err := c.Write(ctx, Text, b); err != nil {
		closeAsync(c, StatusInternal, "welcome failed")
		return Msg{}, fmt.Errorf("link: sending welcome: %w", err)
	}
	return h, nil
}

// readFirst reads the first message of the other end, which must be of
// type want; anything else closes the conn.
func readFirst(ctx context.Context, c Conn, want string) (Msg, error) {
	kind, b, err := c.Read(ctx)
	if err != nil {
		closeAsync(c, StatusGoingAway, "handshake failed")
		return Msg{}, err
	}
	if kind != Text {
		reason := fmt.Sprintf("expected %s, got a %v message", want, kind)
		closeAsync(c, StatusProtocolError, reason)
		return Msg{}, fmt.Errorf("%w: %s", ErrProtocol, reason)
	}
	m, err := DecodeMsg(b)
	if err != nil {
		closeAsync(c, StatusInvalidData, "invalid message")
		return Msg{}, err
	}
	if m.T != want {
		reason := fmt.Sprintf("expected %s, got %q", want, m.T)
		closeAsync(c, StatusProtocolError, reason)
		return Msg{}, fmt.Errorf("%w: %s", ErrProtocol, reason)
	}
	return m, nil
}

// closeAsync closes c in the background: a WebSocket close waits for the
// peer's answer, and a peer that fails the handshake may never give one.
func closeAsync(c Conn, code int, reason string) {
	go func() { _ = c.Close(code, reason) }()
}
