package link

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Kind is the kind of a message on a Conn. The values are those of
// WebSocket message types.
type Kind int

const (
	// Text carries one JSON control message.
	Text Kind = 1
	// Binary carries one terminal frame.
	Binary Kind = 2
)

func (k Kind) String() string {
	switch k {
	case Text:
		return "text"
	case Binary:
		return "binary"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Conn carries whole messages between the two ends of a device link.
//
// Read may be called by one goroutine at a time; Write and Close by any
// number at once. A Read or Write whose context ends closes the connection
// (the WebSocket implementation cannot do otherwise, and Pipe does the same
// so that both behave alike): use contexts for deadlines of the whole link,
// not to abandon one operation and carry on. After the other end closed,
// Read returns the messages it sent before, then a *CloseError with its code
// and reason.
type Conn interface {
	Read(ctx context.Context) (Kind, []byte, error)
	Write(ctx context.Context, kind Kind, b []byte) error
	// Close sends a close with this WebSocket status code and reason (cut
	// to 123 bytes) and releases the connection. It may take a few seconds
	// on a WebSocket whose peer does not answer.
	Close(code int, reason string) error
}

// WebSocket close status codes used by the link.
const (
	StatusNormal        = 1000
	StatusGoingAway     = 1001
	StatusProtocolError = 1002
	// StatusAbnormal is never sent: it reports a connection that ended
	// without a close (a context ended, the network broke).
	StatusAbnormal    = 1006
	StatusInvalidData = 1007
	StatusPolicy      = 1008
	StatusTooBig      = 1009
	StatusInternal    = 1011
	// StatusReplaced closes a device's older connection when a new one
	// arrives and the older one is found dead.
	StatusReplaced = 4001
	// StatusConflict refuses a device's connection while another
	// connection with its key is live and healthy: two machines use one
	// identity.
	StatusConflict = 4003
)

// maxReason is the longest close reason a WebSocket close frame can carry.
const maxReason = 123

// CloseError is how a closed link reports its status: returned by Read when
// the other end closed (Remote), or when this end closed because of what it
// read (a frame over MaxFrame).
type CloseError struct {
	Code   int
	Reason string
	// Remote says the other end sent the close.
	Remote bool
}

func (e *CloseError) Error() string {
	who := "closed"
	if e.Remote {
		who = "closed by peer"
	}
	s := fmt.Sprintf("%s with status %d (%s)", who, e.Code, statusText(e.Code))
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// CloseStatus returns the status code of the *CloseError in err's chain,
// or -1.
func CloseStatus(err error) int {
	var ce *CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return -1
}

func statusText(code int) string {
	switch code {
	case StatusNormal:
		return "normal"
	case StatusGoingAway:
		return "going away"
	case StatusProtocolError:
		return "protocol error"
	case StatusAbnormal:
		return "abnormal closure"
	case StatusInvalidData:
		return "invalid data"
	case StatusPolicy:
		return "policy violation"
	case StatusTooBig:
		return "message too big"
	case StatusInternal:
		return "internal error"
	case StatusReplaced:
		return "replaced"
	case StatusConflict:
		return "identity in use"
	}
	return "status"
}

// validCode reports whether a status code may be sent in a close frame
// (RFC 6455 7.4; the same rule coder/websocket applies).
func validCode(code int) bool {
	switch code {
	case 1004, 1005, StatusAbnormal, 1015:
		return false
	}
	return code >= 1000 && code <= 1014 || code >= 3000 && code <= 4999
}

// cutReason shortens a close reason to what a close frame can carry,
// without splitting a UTF-8 sequence.
func cutReason(s string) string {
	if len(s) <= maxReason {
		return s
	}
	i := maxReason
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}
