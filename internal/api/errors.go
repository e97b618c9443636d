package api

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is the JSON body of every failed request, and the error the typed
// client returns for it.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"error"`
}

func (e *Error) Error() string { return e.Message }

// Is makes errors.Is(err, api.ErrNotFound) work across the wire: errors
// match by code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// Stable error codes.
const (
	CodeNotFound     = "not_found"
	CodeBadRequest   = "bad_request"
	CodeConflict     = "conflict"
	CodeInternal     = "internal"
	CodeUnavailable  = "unavailable"
	CodeUnauthorized = "unauthorized"
	CodeForbidden    = "forbidden"
	CodeTooLarge     = "too_large"
	CodeTooMany      = "too_many_requests"
	// CodePolicyDenied: the machine's agent does not let its hub do this;
	// the message names the `corral agent` flag that would allow it.
	CodePolicyDenied = "policy_denied"
	// CodeMethodNotAllowed: the route exists, with other methods.
	CodeMethodNotAllowed = "method_not_allowed"

	// Input safety (409): nothing was typed.
	// CodeDialogOpen: text was sent while a dialog is open; answer it.
	CodeDialogOpen = "dialog_open"
	// CodeStaleDialog: an answer named a dialog the screen no longer shows.
	CodeStaleDialog = "stale_dialog"
	// CodeDraftPresent: Claude's input box holds text typed elsewhere.
	CodeDraftPresent = "draft_present"
	// CodeScreenUnclear: corral cannot tell what the screen shows.
	CodeScreenUnclear = "screen_unclear"
	// CodeConversationRunning: a live session runs that conversation.
	CodeConversationRunning = "conversation_running"

	// Git (409).
	// CodeNotARepository: the session's folder is not in a git repository.
	CodeNotARepository = "not_a_repository"
	// CodeWorktreeDirty: the worktree to remove has uncommitted changes or
	// untracked files (the message names them); nothing was done.
	CodeWorktreeDirty = "worktree_dirty"
)

// Sentinels for errors.Is.
var (
	ErrNotFound     = &Error{Code: CodeNotFound}
	ErrBadRequest   = &Error{Code: CodeBadRequest}
	ErrConflict     = &Error{Code: CodeConflict}
	ErrUnavailable  = &Error{Code: CodeUnavailable}
	ErrUnauthorized = &Error{Code: CodeUnauthorized}
	ErrForbidden    = &Error{Code: CodeForbidden}
	ErrTooLarge     = &Error{Code: CodeTooLarge}
	ErrPolicyDenied = &Error{Code: CodePolicyDenied}

	ErrDialogOpen          = &Error{Code: CodeDialogOpen}
	ErrStaleDialog         = &Error{Code: CodeStaleDialog}
	ErrDraftPresent        = &Error{Code: CodeDraftPresent}
	ErrScreenUnclear       = &Error{Code: CodeScreenUnclear}
	ErrConversationRunning = &Error{Code: CodeConversationRunning}
	ErrNotARepository      = &Error{Code: CodeNotARepository}
	ErrWorktreeDirty       = &Error{Code: CodeWorktreeDirty}
)

// Errorf makes an *Error with a code.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// HTTPStatus maps an error code to its HTTP status.
func HTTPStatus(code string) int {
	switch code {
	case CodeNotFound:
		return http.StatusNotFound
	case CodeBadRequest:
		return http.StatusBadRequest
	case CodeConflict, CodeDialogOpen, CodeStaleDialog, CodeDraftPresent, CodeScreenUnclear, CodeConversationRunning,
		CodeNotARepository, CodeWorktreeDirty:
		return http.StatusConflict
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeForbidden, CodePolicyDenied:
		return http.StatusForbidden
	case CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeTooMany:
		return http.StatusTooManyRequests
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	}
	return http.StatusInternalServerError
}

// AsError turns any error into an *Error, keeping an existing code.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternal, Message: err.Error()}
}
