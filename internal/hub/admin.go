package hub

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/corral-dev/corral/internal/api"
)

// The hub's management on the daemon's unix socket, for the commands of
// `corral hub` that must reach the running hub at once: whoever can open
// the socket (mode 0600) owns the hub. The commands fall back to the
// database when no hub answers (cli/hub.go); CutRevoked catches up with what
// changed there within RecheckDevices.
const (
	AdminRevokeDevice = "/admin/v1/devices/revoke"
	AdminRemoveUser   = "/admin/v1/users/remove"
)

// AdminRequest names a user, and for a device its name.
type AdminRequest struct {
	User string `json:"user"`
	Name string `json:"name,omitempty"`
}

// maxAdminBody bounds an admin request.
const maxAdminBody = 4 << 10

// AdminHandler serves POST AdminRevokeDevice (RevokeDevice; the answer is
// the device) and POST AdminRemoveUser (RemoveUser). Like the local API it
// refuses requests that carry Origin or Referer: a browser has no
// business here.
func (h *Hub) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+AdminRevokeDevice, func(w http.ResponseWriter, r *http.Request) {
		h.admin(w, r, func(ctx context.Context, req AdminRequest) (any, error) {
			return h.RevokeDevice(ctx, req.User, req.Name)
		})
	})
	mux.HandleFunc("POST "+AdminRemoveUser, func(w http.ResponseWriter, r *http.Request) {
		h.admin(w, r, func(ctx context.Context, req AdminRequest) (any, error) {
			return struct{}{}, h.RemoveUser(ctx, req.User)
		})
	})
	return mux
}

func (h *Hub) admin(w http.ResponseWriter, r *http.Request, fn func(context.Context, AdminRequest) (any, error)) {
	if r.Header.Get("Origin") != "" || r.Header.Get("Referer") != "" {
		writeAdmin(w, nil, api.Errorf(api.CodeForbidden, "not from a browser"))
		return
	}
	var req AdminRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAdminBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeAdmin(w, nil, api.Errorf(api.CodeBadRequest, "bad request body: %v", err))
		return
	}
	res, err := fn(r.Context(), req)
	writeAdmin(w, res, err)
}

func writeAdmin(w http.ResponseWriter, res any, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		e := api.AsError(err)
		w.WriteHeader(api.HTTPStatus(e.Code))
		json.NewEncoder(w).Encode(e)
		return
	}
	json.NewEncoder(w).Encode(res)
}
