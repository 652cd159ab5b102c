// Package server assembles the connected-vehicle service: it opens the environment's
// database, builds the OAuth server and the data API over it, and serves them over HTTP
// with timeouts and size limits that a slow or hostile client cannot get round.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/connected-vehicle/vcs/internal/fleet"
	"github.com/connected-vehicle/vcs/internal/httpapi"
	"github.com/connected-vehicle/vcs/internal/oauth"
	"github.com/connected-vehicle/vcs/internal/store"
	"github.com/connected-vehicle/vcs/internal/store/sqlite"
)

// Environments. Each has its own database, so data and tokens never cross between them.
const (
	EnvSandbox    = "sandbox"
	EnvProduction = "production"
)

// Config configures a Server.
type Config struct {
	// DataDir holds one SQLite database per environment.
	DataDir string
	// Env is EnvSandbox or EnvProduction.
	Env string
	// BasePath prefixes the data API and token endpoint ("" by default).
	BasePath string
	// PublicBaseURL and PublicAuthURL are the addresses the service writes into links and
	// redirects; PublicAuthURL defaults to PublicBaseURL without its base path.
	PublicBaseURL string
	PublicAuthURL string
	Logger        *slog.Logger
	// PasswordCost is the bcrypt cost of new password hashes (0: the default).
	PasswordCost int
	// LoginLimits bounds failed logins (zero: the defaults).
	LoginLimits oauth.LoginLimits
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Server is an open service: its database and its handler.
type Server struct {
	cfg   Config
	db    *store.DB
	OAuth *oauth.Server
	Fleet *fleet.Service
	http  *httpapi.Handler
}

// DatabasePath is where the environment's database lives in dataDir.
func DatabasePath(dataDir, env string) string { return filepath.Join(dataDir, env+".db") }

// OpenStore opens the environment's database, creating it when needed.
func OpenStore(ctx context.Context, dataDir, env string) (*store.DB, error) {
	if env != EnvSandbox && env != EnvProduction {
		return nil, fmt.Errorf("unknown environment %q: use %s or %s", env, EnvSandbox, EnvProduction)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	return sqlite.Open(ctx, DatabasePath(dataDir, env))
}

// Open opens the service described by cfg.
func Open(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Env == "" {
		cfg.Env = EnvSandbox
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.PublicBaseURL == "" {
		return nil, errors.New("server: the public base URL is not set")
	}
	cfg.BasePath = strings.TrimSuffix(cfg.BasePath, "/")
	if cfg.PublicAuthURL == "" {
		cfg.PublicAuthURL = strings.TrimSuffix(strings.TrimSuffix(cfg.PublicBaseURL, "/"), cfg.BasePath)
	}
	db, err := OpenStore(ctx, cfg.DataDir, cfg.Env)
	if err != nil {
		return nil, err
	}
	o := oauth.New(db, oauth.Config{
		BaseURL: cfg.PublicBaseURL, AuthURL: cfg.PublicAuthURL,
		Logger: cfg.Logger, Now: cfg.Now, LoginLimits: cfg.LoginLimits,
	})
	f := fleet.New(db, o, fleet.Options{PasswordCost: cfg.PasswordCost, Now: cfg.Now})
	h := httpapi.New(f, o, httpapi.Config{BasePath: cfg.BasePath, BaseURL: cfg.PublicBaseURL, Logger: cfg.Logger})
	return &Server{cfg: cfg, db: db, OAuth: o, Fleet: f, http: h}, nil
}

// Handler returns the service's HTTP handler.
func (s *Server) Handler() http.Handler { return s.http }

// Close closes the database.
func (s *Server) Close() error { return s.db.Close() }

// Limits of the HTTP server: a client that sends slowly, never finishes, or sends too much
// cannot hold a connection or memory.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
	shutdownTimeout   = 10 * time.Second
)

// NewHTTPServer returns an http.Server for h with the service's limits.
func NewHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// Serve serves on ln until ctx ends, then shuts down gracefully: requests under way get
// shutdownTimeout to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := NewHTTPServer(s.http, s.cfg.Logger)
	janitorDone := make(chan struct{})
	jctx, stopJanitor := context.WithCancel(ctx)
	go func() {
		defer close(janitorDone)
		s.janitor(jctx)
	}()
	defer func() {
		stopJanitor()
		<-janitorDone
	}()

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// janitor deletes expired login sessions and codes, and tokens a week after they expire
// (kept that long so that their holders hear "expired" rather than "unknown").
func (s *Server) janitor(ctx context.Context) {
	t := time.NewTicker(10 * time.Minute)
	defer t.Stop()
	for {
		now := time.Now()
		if s.cfg.Now != nil {
			now = s.cfg.Now()
		}
		err := s.db.WriteTx(ctx, func(q *store.Queries) error {
			_, err := q.DeleteExpired(ctx, now, now.Add(-7*24*time.Hour))
			return err
		})
		if err != nil && ctx.Err() == nil {
			s.cfg.Logger.WarnContext(ctx, "delete expired sessions and tokens", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// AuthURL is the public address of the authorization pages.
func (s *Server) AuthURL() string { return s.cfg.PublicAuthURL }
