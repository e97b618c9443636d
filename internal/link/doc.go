// Package link is the device link of docs/protocol.md: the codec of its
// messages and terminal frames, the connections that carry them, and a Peer
// that multiplexes requests, replies, events and terminal frames over one
// connection. The hub side (internal/hub) and the agent side
// (internal/agentlink) are built on it.
//
// A Conn carries whole messages, text (JSON control messages) or binary
// (terminal frames). NewWebSocket wraps a coder/websocket connection; Pipe
// makes an in-memory pair for `corral serve`, where hub and agent live in
// one process. Both carry the very same bytes and enforce the same limits:
// a message over MaxFrame closes the link with status 1009, a Close on one
// end reaches the other's Read as a *CloseError with its code and reason,
// and writers block (with a deadline) rather than queue without bound.
//
// A Peer owns a Conn once the handshake (ClientHello, ServerHello) is done:
//
//	p := link.NewPeer(conn, link.Options{OnMsg: onMsg, OnFrame: onFrame, Heartbeat: 15 * time.Second})
//	err := p.Run(ctx) // until the link ends; err says why
//
// Lifetime: Run owns every goroutine the Peer starts, and returns only once
// they have all returned (the handler in progress gets StallTimeout). When
// ctx ends, the link is closed with 1001; a peer that does not answer the
// close within a second is cut off.
//
// Threading: Run reads on a goroutine of its own, answers ping with pong,
// and hands each res to the Call waiting for it. Every other message and
// every frame goes, in arrival order, to OnMsg and OnFrame, which run one at
// a time on a second goroutine. Handlers may therefore call any Peer method,
// Call included (its answer is dispatched by the reader, not by them), but a
// slow handler delays the messages behind it: work that takes time (a req
// that starts a session, runs a command) belongs on a goroutine of its own.
// An answer may overtake the events the other end sent about what its
// request changed: ReplySeq puts that end's event sequence number in the
// answer and CallSeq returns it, so the caller waits until it has applied
// the events up to it (docs/protocol.md, "Read your writes").
// The reader buffers a bounded amount for the handlers; when that is full it
// stops reading, so the sender slows down, and if the handlers make no
// progress for Options.StallTimeout the link is closed with 1011 and Run
// returns an error wrapping ErrStalled. Once Run has returned no further
// handler is started.
//
// Errors: a failed request comes back from Call as the remote's *api.Error,
// so errors.Is(err, api.ErrNotFound) works across the link. Everything that
// ends the link wraps ErrClosed, plus ErrDead (heartbeat), ErrInvalid
// (malformed input, closed with 1007), ErrStalled, a *CloseError (the peer
// closed, or a frame was too big) or the context's error.
package link
