// Package cmdutil holds what every command shares: the factory of its dependencies, the
// errors that decide its exit code, and flag helpers.
package cmdutil

import (
	"context"
	"net/http"
	"time"

	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/config"
	"github.com/connected-vehicle/vcs/internal/credstore"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/session"
)

// Globals are the persistent flags of the root command.
type Globals struct {
	Profile         string
	Token           string
	Debug           bool
	InsecureStorage bool
}

// Browser opens URLs for the user.
type Browser interface {
	Browse(url string) error
}

// Factory hands commands their dependencies. Members that cost something to build are
// functions, called only by the commands that need them, so that a command starts without
// reading files or the keyring it does not use; tests replace any of them.
type Factory struct {
	IOStreams *iostreams.IOStreams
	// Version is the binary's version, for User-Agent headers and `vcs version`.
	Version string
	// Globals holds the persistent flags once cobra has parsed them.
	Globals *Globals
	Browser Browser
	Now     func() time.Time

	// Config reads the configuration file.
	Config func() (*config.Config, error)
	// Profile resolves the active profile: flags, environment, file, built-in.
	Profile func() (config.Profile, error)
	// Credentials opens the credential store (OS keyring, or the file fallback).
	Credentials func() (*credstore.Store, error)
	// HTTPClient sends unauthenticated requests (proxies, User-Agent, --debug).
	HTTPClient func() (*http.Client, error)
	// Session is the active profile's login.
	Session func() (*session.Session, error)
	// APIClient calls the service with the user's token (or --token / VCS_TOKEN).
	APIClient func(ctx context.Context) (*client.Client, error)
	// ClientAPIClient calls the service with a client-credentials token of the profile's
	// partner client.
	ClientAPIClient func(ctx context.Context) (*client.Client, error)
}
