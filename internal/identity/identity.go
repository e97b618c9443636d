// Package identity carries who is asking through a request's context: the
// web layer puts the authenticated user there, and the hub scopes every
// session, device and event stream to it.
package identity

import "context"

// Local is the one user of a single-machine `corral serve`, and of the
// daemon's unix socket (whoever can open it owns the machine's sessions).
const Local = "local"

type key struct{}

// With returns ctx carrying user.
func With(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, key{}, user)
}

// User returns the user ctx carries, "" if none.
func User(ctx context.Context) string {
	u, _ := ctx.Value(key{}).(string)
	return u
}
