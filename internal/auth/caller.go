// Package auth carries the authenticated caller of a request through its context, so that
// every service operation can check what the caller may see without trusting its handler.
package auth

import "context"

// Caller is who presented the access token of a request.
type Caller struct {
	// ClientID is the partner client the token was issued to.
	ClientID string
	// AccountID is the account the token acts for; 0 for a client token
	// (client_credentials), which acts for the partner itself.
	AccountID int64
}

// IsClient reports a client token, one that acts for no account.
func (c Caller) IsClient() bool { return c.AccountID == 0 }

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller in ctx, and false when the request is unauthenticated.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok && c.ClientID != ""
}
