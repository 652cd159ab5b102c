// Package server is `vcs server`: it runs the connected-vehicle service, and its `client`
// subcommands register partner clients.
package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/output"
	"github.com/connected-vehicle/vcs/internal/server"
)

// Options are the flags of `vcs server`.
type Options struct {
	IO      *iostreams.IOStreams
	Version string

	Dev           bool
	Addr          string
	DataDir       string
	Env           string
	BasePath      string
	PublicBaseURL string
	PublicAuthURL string
	LogFormat     string
	LogLevel      string
	Output        output.Options

	// Ready, when set, is called once the service is listening (tests use it).
	Ready func(Settings)
}

// Settings describe a running development server; `vcs server --dev -o json` prints them.
type Settings struct {
	BaseURL      string `json:"base_url"`
	AuthURL      string `json:"auth_url"`
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret string `json:"client_secret,omitempty"`
	Username     string `json:"username,omitempty"`
	Password     string `json:"password,omitempty"`
	Env          string `json:"env"`
	DataDir      string `json:"data_dir"`
}

// NewCmdServer returns `vcs server`. runF replaces the run function in tests.
func NewCmdServer(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, Version: f.Version}
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the connected-vehicle service",
		Long: `Run the connected-vehicle service: accounts, vehicles, an OAuth 2.0 authorization
server with a login page, waypoint event subscriptions with durable webhook delivery,
trips, and (in the sandbox) the traffic simulator, on an embedded SQLite database.

With --dev it runs a throw-away sandbox (a temporary database unless --data-dir is given)
with a development client and a demo account, and prints how to use them. Without --dev
nothing is seeded: register partner clients with "vcs server client create".`,
		Example: `  vcs server --dev
  vcs server --dev -o json          # the settings as one JSON object on stdout
  vcs server --addr 0.0.0.0:8443 --env production --public-base-url https://api.example.com`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			if opts.Env != server.EnvSandbox && opts.Env != server.EnvProduction {
				return cmdutil.FlagErrorf("--env must be %s or %s", server.EnvSandbox, server.EnvProduction)
			}
			if opts.Dev && opts.Env == server.EnvProduction {
				return cmdutil.FlagErrorf("--dev runs a sandbox; it cannot be used with --env production")
			}
			if opts.BasePath != "" && (!strings.HasPrefix(opts.BasePath, "/") || strings.HasSuffix(opts.BasePath, "/")) {
				return cmdutil.FlagErrorf("--base-path must start with / and not end with one, e.g. /api")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runServer(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.Dev, "dev", false, "run a development sandbox with a demo account and well-known credentials")
	fl.StringVar(&opts.Addr, "addr", "127.0.0.1:8080", "`host:port` to listen on")
	fl.StringVar(&opts.DataDir, "data-dir", "", "`directory` of the databases (default $XDG_DATA_HOME/vcs; with --dev a temporary one)")
	fl.StringVar(&opts.Env, "env", server.EnvSandbox, "environment: sandbox or production")
	fl.StringVar(&opts.BasePath, "base-path", "", "`path` prefix of the data API and token endpoint, e.g. /api")
	fl.StringVar(&opts.PublicBaseURL, "public-base-url", "", "`URL` of the data API as clients reach it (behind a proxy)")
	fl.StringVar(&opts.PublicAuthURL, "public-auth-url", "", "`URL` of the authorization pages as browsers reach them")
	fl.StringVar(&opts.LogFormat, "log-format", "text", "log format on stderr: text or json")
	fl.StringVar(&opts.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	opts.Output.AddFlags(cmd)

	cmd.AddCommand(newCmdClient(f))
	return cmd
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, cmdutil.FlagErrorf("--log-level must be debug, info, warn or error")
	}
	hopts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, hopts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, hopts)), nil
	}
	return nil, cmdutil.FlagErrorf("--log-format must be text or json")
}

func runServer(ctx context.Context, opts *Options) error {
	log, err := newLogger(opts.IO.ErrOut, opts.LogFormat, opts.LogLevel)
	if err != nil {
		return err
	}
	dataDir, cleanup, err := dataDirFor(opts)
	if err != nil {
		return err
	}
	defer cleanup()

	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", opts.Addr, err)
	}
	defer ln.Close()
	baseURL := opts.PublicBaseURL
	if baseURL == "" {
		baseURL = "http://" + displayAddr(ln.Addr()) + opts.BasePath
	}

	srv, err := server.Open(ctx, server.Config{
		DataDir: dataDir, Env: opts.Env, BasePath: opts.BasePath,
		PublicBaseURL: baseURL, PublicAuthURL: opts.PublicAuthURL, Logger: log, Version: opts.Version,
	})
	if err != nil {
		return err
	}
	defer srv.Close()

	settings := Settings{BaseURL: baseURL, AuthURL: srv.AuthURL(), Env: opts.Env, DataDir: dataDir}
	if opts.Dev {
		seed, err := srv.SeedDev(ctx)
		if err != nil {
			return err
		}
		settings.ClientID, settings.ClientSecret = seed.ClientID, seed.ClientSecret
		settings.Username, settings.Password = seed.Username, seed.Password
	}
	if err := printSettings(opts, settings); err != nil {
		return err
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); opts.Dev && ok && !tcp.IP.IsLoopback() {
		log.Warn("development mode with well-known credentials on a non-loopback address: anyone who can reach it can log in", "addr", ln.Addr().String())
	}
	log.Info("serving", "addr", ln.Addr().String(), "env", opts.Env, "base_url", baseURL, "data_dir", dataDir)
	if opts.Ready != nil {
		opts.Ready(settings)
	}
	err = srv.Serve(ctx, ln)
	log.Info("stopped")
	return err
}

// dataDirFor picks the data directory: the flag, a temporary one for --dev, or the default.
func dataDirFor(opts *Options) (dir string, cleanup func(), err error) {
	switch {
	case opts.DataDir != "":
		return opts.DataDir, func() {}, nil
	case opts.Dev:
		dir, err := os.MkdirTemp("", "vcs-dev-")
		if err != nil {
			return "", nil, fmt.Errorf("create a temporary data directory: %w", err)
		}
		return dir, func() { os.RemoveAll(dir) }, nil
	}
	dir, err = server.DefaultDataDir()
	return dir, func() {}, err
}

// displayAddr is the address to print for a listener: a wildcard host is shown as loopback,
// which is where a person on this machine reaches it.
func displayAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(tcp.Port))
}

func printSettings(opts *Options, s Settings) error {
	if opts.Output.Structured() {
		return opts.Output.Print(opts.IO, s, nil)
	}
	if !opts.Dev {
		return nil // the log line says where it serves
	}
	w := opts.IO.Out
	tmp := ""
	if opts.DataDir == "" {
		tmp = " (deleted on exit)"
	}
	_, err := fmt.Fprintf(w, `vcs server is ready: a %s service in development mode.

  Base URL:       %s
  Auth URL:       %s
  Client ID:      %s
  Client secret:  %s
  Username:       %s
  Password:       %s
  Data:           %s%s

Try, in another terminal:
  vcs login                     # log in as %s in your browser
  vcs vehicle list
  curl -s -u %s:%s -d grant_type=client_credentials %s/oauth/token

The credentials above are well known: do not expose this server. Ctrl-C stops it.
`, s.Env, s.BaseURL, s.AuthURL, s.ClientID, s.ClientSecret, s.Username, s.Password, s.DataDir, tmp,
		s.Username, s.ClientID, s.ClientSecret, s.BaseURL)
	return err
}
