// Package clitest builds the CLI's real factory for tests: a temporary configuration
// directory, the file credential store, buffers for the streams, and a profile that points
// at a servertest service.
package clitest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/connected-vehicle/vcs/internal/cli/factory"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/config"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/server"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
	"github.com/connected-vehicle/vcs/internal/session"
)

// CLI is a factory wired to a service, with its streams.
type CLI struct {
	F      *cmdutil.Factory
	IO     *iostreams.IOStreams
	Stdin  *bytes.Buffer
	Stdout *bytes.Buffer
	Stderr *bytes.Buffer
	// ConfigDir holds config.yaml and credentials.json.
	ConfigDir string
}

// New returns a CLI whose "local" profile is the development client of env, with
// credentials in a 0600 file (the OS keyring is not touched). Nothing is logged in yet.
func New(t testing.TB, env *servertest.Env) *CLI {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vcs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ios, stdin, stdout, stderr := iostreams.Test()
	f := factory.New(ios, "test")
	f.Globals.InsecureStorage = true
	getenv := func(k string) string {
		switch k {
		case config.EnvBaseURL:
			return env.URL
		case config.EnvAuthURL:
			return env.Server.AuthURL()
		}
		return ""
	}
	cfg, err := config.Load(dir, getenv)
	if err != nil {
		t.Fatal(err)
	}
	f.Config = func() (*config.Config, error) { return cfg, nil }
	return &CLI{F: f, IO: ios, Stdin: stdin, Stdout: stdout, Stderr: stderr, ConfigDir: dir}
}

// Session returns the active profile's session.
func (c *CLI) Session(t testing.TB) *session.Session {
	t.Helper()
	s, err := c.F.Session()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// LoginAs logs the profile in as username with a real authorization code flow against env
// and stores the tokens, as `vcs login` would.
func (c *CLI) LoginAs(t testing.TB, env *servertest.Env, username, password string) *session.TokenSet {
	t.Helper()
	tok := env.Login(username, password)
	ts := session.FromOAuth2(tok)
	ts.Username = username
	if err := c.Session(t).Save(context.Background(), ts); err != nil {
		t.Fatal(err)
	}
	return ts
}

// LoginDemo logs the profile in as the seeded demo user.
func (c *CLI) LoginDemo(t testing.TB, env *servertest.Env) *session.TokenSet {
	return c.LoginAs(t, env, server.DevUsername, server.DevPassword)
}

// Reset empties the output buffers between commands.
func (c *CLI) Reset() {
	c.Stdout.Reset()
	c.Stderr.Reset()
}
