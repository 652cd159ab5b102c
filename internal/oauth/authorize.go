package oauth

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/password"
	"github.com/connected-vehicle/vcs/internal/store"
)

//go:embed templates/*.html
var templateFS embed.FS

var templates = template.Must(template.ParseFS(templateFS, "templates/*.html"))

// sessionCookie holds the id of the login session that an authorize request starts.
const sessionCookie = "vcs_login"

// HandleAuthorize serves GET /OAuth/authorize: it checks the request, remembers it in a
// login session and sends the browser to the login page. An unknown client or a redirect
// URI that does not match is shown as an error page and never redirected to (RFC 6749
// §4.1.2.1); other faults go back to the redirect URI with error=.
func (s *Server) HandleAuthorize(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	for _, k := range []string{"client_id", "redirect_uri"} {
		if len(q[k]) > 1 {
			s.errorPage(w, http.StatusBadRequest, "Invalid request", "The parameter "+k+" appears more than once.")
			return
		}
	}
	clientID, redirectURI := q.Get("client_id"), q.Get("redirect_uri")
	if clientID == "" {
		s.errorPage(w, http.StatusBadRequest, "Invalid request", "The application did not say who it is (client_id is missing).")
		return
	}
	client, err := s.db.Read().GetClient(ctx, clientID)
	if errors.Is(err, store.ErrNotFound) {
		s.errorPage(w, http.StatusBadRequest, "Unknown application", "The application that sent you here is not registered with this service.")
		return
	} else if err != nil {
		s.serverErrorPage(w, r, err)
		return
	}
	if redirectURI == "" || !redirectAllowed(client.RedirectURIs, redirectURI) {
		s.errorPage(w, http.StatusBadRequest, "Invalid redirect address",
			"The address this application asked to return you to is not one it registered, so you will not be sent there.")
		return
	}

	state := q.Get("state")
	fail := func(code, desc string) { redirectWith(w, r, redirectURI, errorParams(code, desc, state)) }
	for _, k := range []string{"response_type", "state", "code_challenge", "code_challenge_method"} {
		if len(q[k]) > 1 {
			fail(api.OAuthInvalidRequest, "parameter "+k+" is repeated")
			return
		}
	}
	if rt := q.Get("response_type"); rt != "code" {
		fail(api.OAuthUnsupportedRespType, "response_type must be code")
		return
	}
	challenge, method := q.Get("code_challenge"), q.Get("code_challenge_method")
	switch {
	case challenge == "" && method != "":
		fail(api.OAuthInvalidRequest, "code_challenge_method without code_challenge")
		return
	case challenge != "" && method != "S256":
		fail(api.OAuthInvalidRequest, "code_challenge_method must be S256")
		return
	case challenge != "" && !pkceVerifier.MatchString(challenge):
		fail(api.OAuthInvalidRequest, "code_challenge is not a valid S256 challenge")
		return
	}

	sessionID, sessionHash := newSecret("")
	sess := &store.LoginSession{Hash: sessionHash, ClientID: client.ID, RedirectURI: redirectURI,
		State: state, CodeChallenge: challenge, CSRFHash: "-", ExpiresAt: s.now().Add(LoginTTL)}
	if err := s.db.WriteTx(ctx, func(q *store.Queries) error { return q.InsertLoginSession(ctx, sess) }); err != nil {
		s.serverErrorPage(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: sessionID, Path: "/", MaxAge: int(LoginTTL.Seconds()),
		Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode,
	})
	noStore(w)
	http.Redirect(w, r, s.cfg.AuthURL+PathLogin, http.StatusFound)
}

// loginPage is what the login template shows.
type loginPage struct {
	ClientName string
	Username   string
	CSRF       string
	Message    string
	Action     string
}

// HandleLoginForm serves GET /OAuth/login: the form, with a fresh CSRF token.
func (s *Server) HandleLoginForm(w http.ResponseWriter, r *http.Request) {
	sess, client, ok := s.loginSession(w, r)
	if !ok {
		return
	}
	s.renderLogin(w, r, http.StatusOK, sess, client, "", "")
}

// HandleLogin serves POST /OAuth/login: checks the CSRF token and the password, then sends
// the browser back to the client with a code.
func (s *Server) HandleLogin(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	r.Body = http.MaxBytesReader(w, r.Body, maxFormSize)
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, http.StatusBadRequest, "Invalid request", "The sign-in form could not be read.")
		return
	}
	sess, client, ok := s.loginSession(w, r)
	if !ok {
		return
	}
	username := r.PostForm.Get("username")
	if !hashesEqual(hashSecret(r.PostForm.Get("csrf")), sess.CSRFHash) {
		s.renderLogin(w, r, http.StatusForbidden, sess, client, username, "The sign-in form expired. Please try again.")
		return
	}
	if r.PostForm.Get("action") == "cancel" {
		s.endSession(ctx, w, sess)
		redirectWith(w, r, sess.RedirectURI, errorParams(api.OAuthAccessDenied, "the user cancelled the sign-in", sess.State))
		return
	}
	addr := clientAddr(r)
	if wait := s.limiter.wait(username, addr, s.now()); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())))
		s.renderLogin(w, r, http.StatusTooManyRequests, sess, client, username,
			"Too many failed sign-in attempts. Try again in "+humanWait(wait)+".")
		return
	}
	account, err := s.db.Read().GetAccountByUsername(ctx, username)
	var hash string
	switch {
	case err == nil:
		hash = account.PasswordHash
	case !errors.Is(err, store.ErrNotFound):
		s.serverErrorPage(w, r, err)
		return
	}
	if !password.Check(hash, r.PostForm.Get("password")) {
		s.limiter.fail(username, addr, s.now())
		// The username is not logged: people type their password into it by mistake.
		s.log.InfoContext(ctx, "login failed", "client_id", client.ID, "remote_addr", addr)
		s.renderLogin(w, r, http.StatusUnauthorized, sess, client, username, "Incorrect username or password.")
		return
	}
	s.limiter.succeed(username)

	code, codeHash := newSecret(prefixCode)
	redirect := sess.RedirectURI
	err = s.db.WriteTx(ctx, func(q *store.Queries) error {
		// Deleting the session inside the transaction makes a replayed form post fail.
		if _, err := q.GetLoginSession(ctx, sess.Hash); err != nil {
			return err
		}
		if err := q.DeleteLoginSession(ctx, sess.Hash); err != nil {
			return err
		}
		return q.InsertAuthCode(ctx, &store.AuthCode{Hash: codeHash, ClientID: client.ID, AccountID: account.ID,
			RedirectURI: &redirect, CodeChallenge: sess.CodeChallenge, Family: newID("f_"), ExpiresAt: s.now().Add(CodeTTL)})
	})
	if errors.Is(err, store.ErrNotFound) {
		s.errorPage(w, http.StatusBadRequest, "Sign-in expired", "This sign-in was already completed or has expired. Start again from the application.")
		return
	} else if err != nil {
		s.serverErrorPage(w, r, err)
		return
	}
	s.log.InfoContext(ctx, "login succeeded", "client_id", client.ID, "account_id", account.ID)
	clearSessionCookie(w)
	params := url.Values{"code": {code}}
	if sess.State != "" {
		params.Set("state", sess.State)
	}
	redirectWith(w, r, redirect, params)
}

// loginSession returns the live login session named by the request's cookie and its
// client, or writes an error page.
func (s *Server) loginSession(w http.ResponseWriter, r *http.Request) (*store.LoginSession, *store.Client, bool) {
	ctx := r.Context()
	expired := func() {
		s.errorPage(w, http.StatusBadRequest, "Sign-in expired",
			"This sign-in page has expired or was opened without starting from an application. Start again from the application.")
	}
	cookie, err := r.Cookie(sessionCookie)
	if err != nil || cookie.Value == "" {
		expired()
		return nil, nil, false
	}
	sess, err := s.db.Read().GetLoginSession(ctx, hashSecret(cookie.Value))
	if errors.Is(err, store.ErrNotFound) || (err == nil && !s.now().Before(sess.ExpiresAt)) {
		expired()
		return nil, nil, false
	} else if err != nil {
		s.serverErrorPage(w, r, err)
		return nil, nil, false
	}
	client, err := s.db.Read().GetClient(ctx, sess.ClientID)
	if err != nil {
		// The client was deleted while its user was signing in.
		expired()
		return nil, nil, false
	}
	return sess, client, true
}

func (s *Server) renderLogin(w http.ResponseWriter, r *http.Request, status int, sess *store.LoginSession, client *store.Client, username, msg string) {
	ctx := r.Context()
	csrf, csrfHash := newSecret("")
	err := s.db.WriteTx(ctx, func(q *store.Queries) error { return q.SetLoginSessionCSRF(ctx, sess.Hash, csrfHash) })
	if err != nil {
		s.serverErrorPage(w, r, err)
		return
	}
	page := loginPage{ClientName: client.Name, Username: username, CSRF: csrf, Message: msg, Action: s.cfg.AuthURL + PathLogin}
	htmlHeaders(w)
	w.WriteHeader(status)
	if err := templates.ExecuteTemplate(w, "login.html", page); err != nil {
		s.log.ErrorContext(ctx, "render login page", "err", err)
	}
}

func (s *Server) endSession(ctx context.Context, w http.ResponseWriter, sess *store.LoginSession) {
	err := s.db.WriteTx(ctx, func(q *store.Queries) error { return q.DeleteLoginSession(ctx, sess.Hash) })
	if err != nil {
		s.log.ErrorContext(ctx, "end login session", "err", err)
	}
	clearSessionCookie(w)
}

func clearSessionCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

type errorPage struct{ Title, Message string }

func (s *Server) errorPage(w http.ResponseWriter, status int, title, msg string) {
	htmlHeaders(w)
	w.WriteHeader(status)
	_ = templates.ExecuteTemplate(w, "error.html", errorPage{title, msg})
}

func (s *Server) serverErrorPage(w http.ResponseWriter, r *http.Request, err error) {
	s.log.ErrorContext(r.Context(), "authorization page failed", "path", r.URL.Path, "err", err)
	s.errorPage(w, http.StatusInternalServerError, "Something went wrong", "The service could not complete your sign-in. Please try again.")
}

// htmlHeaders keep the pages out of caches and frames; the CSP allows the inline style and
// nothing else.
func htmlHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	noStore(w)
}

func noStore(w http.ResponseWriter) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
}

func errorParams(code, desc, state string) url.Values {
	v := url.Values{"error": {code}, "error_description": {desc}}
	if state != "" {
		v.Set("state", state)
	}
	return v
}

// redirectWith sends the browser to target with params added to its query.
func redirectWith(w http.ResponseWriter, r *http.Request, target string, params url.Values) {
	u, err := url.Parse(target)
	if err != nil {
		http.Error(w, "invalid redirect URI", http.StatusBadRequest)
		return
	}
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	noStore(w)
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// clientAddr is the address the request came from; proxies' forwarding headers are not
// trusted, since anyone can send them.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func humanWait(d time.Duration) string {
	if d < time.Minute {
		return strconv.Itoa(int(d.Seconds())) + " seconds"
	}
	m := int((d + time.Minute - 1) / time.Minute)
	if m == 1 {
		return "1 minute"
	}
	return strconv.Itoa(m) + " minutes"
}
