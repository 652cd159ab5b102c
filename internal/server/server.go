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
	"sync"
	"time"

	"github.com/connected-vehicle/vcs/internal/delivery"
	"github.com/connected-vehicle/vcs/internal/events"
	"github.com/connected-vehicle/vcs/internal/fleet"
	"github.com/connected-vehicle/vcs/internal/httpapi"
	"github.com/connected-vehicle/vcs/internal/oauth"
	"github.com/connected-vehicle/vcs/internal/sim"
	"github.com/connected-vehicle/vcs/internal/store"
	"github.com/connected-vehicle/vcs/internal/store/sqlite"
	"github.com/connected-vehicle/vcs/internal/telemetry"
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
	// Version is the binary's version, for the User-Agent of deliveries.
	Version string
	// DeliveryPolicy replaces the environment's retry schedule (tests).
	DeliveryPolicy *delivery.Policy
	// DeliveryTimeout bounds one delivery attempt (0: the default, 10 s).
	DeliveryTimeout time.Duration
}

// Server is an open service: its database, its handler, and the background work
// (webhook delivery, clean-up) that runs from Open to Close.
type Server struct {
	cfg       Config
	db        *store.DB
	OAuth     *oauth.Server
	Fleet     *fleet.Service
	Events    *events.Service
	Telemetry *telemetry.Service
	Delivery  *delivery.Engine
	http      *httpapi.Handler

	stop       context.CancelFunc
	stopSim    func()
	background sync.WaitGroup
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
	sandbox := cfg.Env == EnvSandbox
	f := fleet.New(db, o, fleet.Options{PasswordCost: cfg.PasswordCost, Now: cfg.Now})
	ev := events.New(db, f, events.Config{Domain: events.DomainOf(cfg.PublicBaseURL), Sandbox: sandbox, Now: cfg.Now})
	policy := delivery.ProductionPolicy()
	if sandbox {
		policy = delivery.SandboxPolicy()
	}
	if cfg.DeliveryPolicy != nil {
		policy = *cfg.DeliveryPolicy
	}
	engine := delivery.New(delivery.Config{
		DB: db, Policy: policy, PublicOnly: !sandbox, UserAgent: "vcs/" + cfg.Version,
		Logger: cfg.Logger, Now: cfg.Now, Timeout: cfg.DeliveryTimeout, Exclusive: true, // one SQLite file, one server
	})
	ev.SetAttempter(engine)
	tm := telemetry.New(db, f, ev, telemetry.Config{Sandbox: sandbox, Recorded: engine.Wake, Now: cfg.Now})
	svc := httpapi.Services{Fleet: f, OAuth: o, Events: ev, Telemetry: tm}
	if sandbox {
		svc.Simulator = sim.New(tm, f, sim.Config{Logger: cfg.Logger, Now: cfg.Now})
	}
	h := httpapi.New(svc, httpapi.Config{BasePath: cfg.BasePath, BaseURL: cfg.PublicBaseURL, Logger: cfg.Logger})
	s := &Server{cfg: cfg, db: db, OAuth: o, Fleet: f, Events: ev, Telemetry: tm, Delivery: engine, http: h}

	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	s.background.Add(2)
	go func() {
		defer s.background.Done()
		if err := engine.Run(bg); err != nil {
			cfg.Logger.Error("webhook delivery stopped", "err", err)
		}
	}()
	go func() {
		defer s.background.Done()
		s.janitor(bg)
	}()
	if stopper, ok := svc.Simulator.(interface{ Stop() }); ok {
		s.stopSim = stopper.Stop
	}
	return s, nil
}

// Handler returns the service's HTTP handler.
func (s *Server) Handler() http.Handler { return s.http }

// Close stops the background work — deliveries under way finish first — and closes the
// database.
func (s *Server) Close() error {
	if s.stopSim != nil {
		s.stopSim()
	}
	s.stop()
	s.background.Wait()
	return s.db.Close()
}

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
