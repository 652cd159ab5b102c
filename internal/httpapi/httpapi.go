// Package httpapi is the service's HTTP face: it routes each request to the OAuth server or
// the data API, authenticates bearer tokens, decodes bodies, and writes envelopes and
// errors in the wire format of package api.
package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/auth"
	"github.com/connected-vehicle/vcs/internal/events"
	"github.com/connected-vehicle/vcs/internal/fleet"
	"github.com/connected-vehicle/vcs/internal/oauth"
	"github.com/connected-vehicle/vcs/internal/telemetry"
)

// Config configures the handler.
type Config struct {
	// BasePath prefixes the data API and token endpoints ("" or "/api", ...).
	BasePath string
	// BaseURL is the public address of the data API, base path included; paging links start
	// with it.
	BaseURL string
	Logger  *slog.Logger
}

// Simulator drives simulated trips (sandbox only).
type Simulator interface {
	Start(ctx context.Context, in api.SimulationInput) (*api.Simulation, error)
	Get(ctx context.Context, id int64) (*api.Simulation, error)
	Cancel(ctx context.Context, id int64) (*api.Simulation, error)
}

// Services are what the handler serves.
type Services struct {
	Fleet     *fleet.Service
	OAuth     *oauth.Server
	Events    *events.Service
	Telemetry *telemetry.Service
	// Simulator is nil in production.
	Simulator Simulator
}

// Handler serves the whole service.
type Handler struct {
	svc  Services
	cfg  Config
	log  *slog.Logger
	root http.Handler
}

// New returns the service's handler.
func New(svc Services, cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.BasePath = strings.TrimSuffix(cfg.BasePath, "/")
	cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/")
	h := &Handler{svc: svc, cfg: cfg, log: cfg.Logger}
	mux := http.NewServeMux()
	h.routes(mux)
	h.root = h.recoverPanics(h.logRequests(trimTrailingSlash(mux)))
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.root.ServeHTTP(w, r) }

func (h *Handler) routes(mux *http.ServeMux) {
	// The authorization host's pages; not under the base path.
	route(mux, oauth.PathAuthorize, methods{http.MethodGet: h.svc.OAuth.HandleAuthorize})
	route(mux, oauth.PathLogin, methods{http.MethodGet: h.svc.OAuth.HandleLoginForm, http.MethodPost: h.svc.OAuth.HandleLogin})

	b := h.cfg.BasePath
	route(mux, b+oauth.PathToken, methods{http.MethodPost: h.svc.OAuth.HandleToken})
	route(mux, b+oauth.PathRevoke, methods{http.MethodPost: h.svc.OAuth.HandleRevoke})
	route(mux, b+oauth.PathMetadata, methods{http.MethodGet: h.svc.OAuth.HandleMetadata})
	if b != "" {
		// RFC 8414 §3.1 puts an issuer's metadata at the well-known path followed by the
		// issuer's path; the SPEC's place above is kept too.
		route(mux, oauth.PathMetadata+b, methods{http.MethodGet: h.svc.OAuth.HandleMetadata})
	}

	route(mux, b+"/account", methods{
		http.MethodGet:  h.authed(h.listAccounts),
		http.MethodPost: h.authed(h.createAccount),
	})
	route(mux, b+"/account/{id}", methods{
		http.MethodGet:    h.authed(h.getAccount),
		http.MethodPost:   h.authed(h.updateAccount),
		http.MethodDelete: h.authed(h.deleteAccount),
	})
	route(mux, b+"/vehicle", methods{
		http.MethodGet:  h.authed(h.listVehicles),
		http.MethodPost: h.authed(h.createVehicle),
	})
	route(mux, b+"/vehicle/{vehicle}", methods{
		http.MethodGet:    h.authed(h.getVehicle),
		http.MethodPost:   h.authed(h.updateVehicle),
		http.MethodDelete: h.authed(h.deleteVehicle),
	})
	h.eventRoutes(mux)
	h.simulatorRoutes(mux)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, r, api.Errorf(api.CodeNotFound, "no such endpoint: %s", r.URL.Path))
	})
}

type methods map[string]http.HandlerFunc

// route registers each method of path, and answers the others with 405 and Allow. (HEAD
// comes with GET from ServeMux.)
func route(mux *http.ServeMux, path string, m methods) {
	allow := make([]string, 0, len(m)+1)
	for method, fn := range m {
		mux.HandleFunc(method+" "+path, fn)
		allow = append(allow, method)
		if method == http.MethodGet {
			allow = append(allow, http.MethodHead)
		}
	}
	slices.Sort(allow)
	allowed := strings.Join(allow, ", ")
	mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allowed)
		writeJSON(w, http.StatusMethodNotAllowed, api.ErrorBody{Error: &api.Error{
			HTTPStatus: http.StatusMethodNotAllowed, Code: api.CodeUnsupported,
			Detail: r.Method + " is not allowed here; use " + allowed,
		}})
	})
}

// authed runs fn with the caller of the request's bearer token in its context.
func (h *Handler) authed(fn http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, _ := bearerToken(r)
		caller, err := h.svc.OAuth.Authenticate(r.Context(), token)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		fn(w, r.WithContext(auth.WithCaller(r.Context(), caller)))
	}
}

// bearerToken returns the token of an "Authorization: Bearer" header (RFC 6750 §2.1).
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// writeJSON writes v as the response body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var body []byte
	var err error
	if m, ok := v.(json.Marshaler); ok {
		body, err = m.MarshalJSON() // envelopes: spares encoding/json re-scanning the output
	} else {
		body, err = json.Marshal(v)
	}
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"httpStatus":500,"errorCode":"INTERNAL","detail":"the response could not be encoded"}}`)
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeError writes err as an error body. Errors that are not *api.Error are internal: they
// are logged, and the caller learns only that something failed.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *api.Error
	if !errors.As(err, &ae) {
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			return // the client went away; there is no one to answer
		}
		h.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		ae = &api.Error{Code: api.CodeInternal, Detail: "the service could not complete the request"}
	}
	out := *ae
	out.HTTPStatus = ae.Status()
	if out.HTTPStatus == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="vcs", error="invalid_token", error_description=`+quoteParam(out.Detail))
	}
	writeJSON(w, out.HTTPStatus, api.ErrorBody{Error: &out})
}

// quoteParam writes s as an RFC 9110 quoted-string.
func quoteParam(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r > 0x7e:
			b.WriteByte('?') // header values are ASCII
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// trimTrailingSlash makes "/vehicle/" and "/vehicle" the same path.
func trimTrailingSlash(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
			r2 := r.Clone(r.Context())
			r2.URL.Path = strings.TrimRight(p, "/")
			if r2.URL.Path == "" {
				r2.URL.Path = "/"
			}
			r2.URL.RawPath = ""
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the status a handler wrote, for the request log.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += n
	return n, err
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logRequests logs each request's method, path, status and duration. It never logs query
// strings, headers or bodies: they carry codes, tokens and passwords.
func (h *Handler) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		level := slog.LevelInfo
		if rec.status >= 500 {
			level = slog.LevelError
		}
		h.log.LogAttrs(r.Context(), level, "request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.status),
			slog.Int("bytes", rec.bytes),
			slog.Duration("duration", time.Since(start)),
			slog.String("remote_addr", r.RemoteAddr),
		)
	})
}

// recoverPanics turns a panic into a logged 500 instead of a dropped connection.
func (h *Handler) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				h.log.ErrorContext(r.Context(), "panic serving request", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				h.writeError(w, r, errors.New("panic"))
			}
		}()
		next.ServeHTTP(w, r)
	})
}
