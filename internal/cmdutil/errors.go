package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"golang.org/x/oauth2"

	"github.com/connected-vehicle/vcs/internal/api"
)

// Exit codes (SPEC §6).
const (
	ExitOK     = 0
	ExitError  = 1 // an API error, a network failure, anything else
	ExitUsage  = 2 // bad flags or arguments, or a destructive command declined
	ExitAuth   = 4 // not logged in, or the credentials were rejected
	exitSignal = 130
)

// FlagError is a usage mistake: bad flags or arguments.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// FlagErrorf returns a FlagError with a formatted message.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// ErrCancel is returned when the user declines a destructive command.
var ErrCancel = errors.New("cancelled")

// ErrSilent fails a command whose failure was already reported.
var ErrSilent = errors.New("silent error")

// authFailure is an error that means "log in again" (exit code 4); session.AuthError is one.
type authFailure interface{ AuthFailure() }

// ExitCode maps the error a command returned to the process's exit code.
func ExitCode(err error) int {
	var flagErr *FlagError
	var authErr authFailure
	var apiErr *api.Error
	var oauthErr *oauth2.RetrieveError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, context.Canceled):
		return exitSignal
	case errors.As(err, &flagErr), errors.Is(err, ErrCancel):
		return ExitUsage
	case errors.As(err, &authErr):
		return ExitAuth
	case errors.As(err, &apiErr) && apiErr.Status() == http.StatusUnauthorized:
		return ExitAuth
	case errors.As(err, &oauthErr) && (oauthErr.ErrorCode == "invalid_client" || oauthErr.ErrorCode == "invalid_grant"):
		return ExitAuth
	default:
		return ExitError
	}
}
