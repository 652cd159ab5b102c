package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/oauth"
	"github.com/connected-vehicle/vcs/internal/server"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

const redirect = "http://127.0.0.1:41234/callback"

// postToken sends a raw token request with the development client's Basic credentials.
func postToken(t *testing.T, env *servertest.Env, form url.Values) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, env.URL+oauth.PathToken, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(server.DevClientID, server.DevClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("token response %q: %v", raw, err)
	}
	return resp.StatusCode, resp.Header, body
}

func oauthErrorCode(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}

func TestAuthorizationCodeFlow(t *testing.T) {
	env := servertest.New(t)
	conf := env.OAuthConfig(redirect)
	verifier := oauth2.GenerateVerifier()
	code, state := env.Authorize(conf, server.DevUsername, server.DevPassword, oauth2.S256ChallengeOption(verifier))
	if state != "st-demo" {
		t.Errorf("state = %q, want st-demo", state)
	}

	// The seed's token response, byte for byte in its members and headers.
	status, hdr, body := postToken(t, env, url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {verifier},
	})
	if status != http.StatusOK {
		t.Fatalf("status %d: %v", status, body)
	}
	for k, want := range map[string]string{
		"Content-Type": "application/json;charset=UTF-8", "Cache-Control": "no-store", "Pragma": "no-cache",
	} {
		if got := hdr.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if body["token_type"] != "bearer" || body["mapi"] != server.DevClientID || body["expires_in"] != float64(86400) {
		t.Errorf("token response = %v", body)
	}
	access, _ := body["access_token"].(string)
	if access == "" || body["refresh_token"] == "" {
		t.Fatalf("missing tokens in %v", body)
	}

	// The token works on the data API for the demo account.
	r := env.Do("GET", "/account/", access, nil)
	var list api.Envelope[[]api.Account]
	r.JSON(t, &list)
	if r.Status != 200 || len(list.Data) != 1 || list.Data[0].Username != server.DevUsername {
		t.Fatalf("GET /account/ = %d %s", r.Status, r.Body)
	}
}

func TestAuthorizationCodeWithGolangOAuth2(t *testing.T) {
	env := servertest.New(t)
	tok := env.Login(server.DevUsername, server.DevPassword)
	if tok.TokenType != "bearer" || tok.RefreshToken == "" || time.Until(tok.Expiry) < 23*time.Hour {
		t.Fatalf("token = %+v", tok)
	}
	if got := tok.Extra("mapi"); got != server.DevClientID {
		t.Errorf("mapi = %v", got)
	}
	// The x/oauth2 client authenticates its data calls with the token.
	c := env.OAuthConfig(redirect).Client(context.Background(), tok)
	resp, err := c.Get(env.URL + "/vehicle/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /vehicle/ = %d", resp.StatusCode)
	}
}

func TestCodeReuseRevokesTokens(t *testing.T) {
	env := servertest.New(t)
	conf := env.OAuthConfig(redirect)
	code, _ := env.Authorize(conf, server.DevUsername, server.DevPassword)
	tok, err := conf.Exchange(context.Background(), code)
	if err != nil {
		t.Fatal(err)
	}
	if r := env.Do("GET", "/vehicle/", tok.AccessToken, nil); r.Status != 200 {
		t.Fatalf("fresh token: %d", r.Status)
	}
	_, err = conf.Exchange(context.Background(), code)
	if oauthErrorCode(err) != "invalid_grant" {
		t.Fatalf("second exchange: %v, want invalid_grant", err)
	}
	r := env.Do("GET", "/vehicle/", tok.AccessToken, nil)
	if r.Status != 401 || r.Error(t).Code != api.CodeUnauthorized {
		t.Fatalf("token of a reused code: %d %s, want 401 UNAUTHORIZED", r.Status, r.Body)
	}
	status, _, body := postToken(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}})
	if status != 400 || body["error"] != "invalid_grant" {
		t.Fatalf("refresh token of a reused code: %d %v", status, body)
	}
}

func TestRedirectURIMismatchNeverRedirects(t *testing.T) {
	env := servertest.New(t)
	b := servertest.Browser()
	for name, target := range map[string]string{
		"other host":     "https://evil.example/callback",
		"other path":     "http://127.0.0.1:5000/other",
		"localhost name": "http://localhost:5000/callback",
		"https loopback": "https://127.0.0.1:5000/callback",
		"extra query":    "http://127.0.0.1:5000/callback?x=1",
		"missing":        "",
		"userinfo":       "http://evil@127.0.0.1:5000/callback",
		"unknown client": "",
	} {
		t.Run(name, func(t *testing.T) {
			clientID := server.DevClientID
			if name == "unknown client" {
				clientID, target = "nobody", redirect
			}
			q := url.Values{"client_id": {clientID}, "response_type": {"code"}, "state": {"s"}}
			if target != "" {
				q.Set("redirect_uri", target)
			}
			resp, err := b.Get(env.Server.AuthURL() + oauth.PathAuthorize + "?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
				t.Fatalf("status %d, Location %q; want 400 and no redirect", resp.StatusCode, resp.Header.Get("Location"))
			}
			if !strings.Contains(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), "<h1>") {
				t.Errorf("want an HTML error page, got %s", body)
			}
		})
	}
}

func TestAuthorizeErrorsRedirectBack(t *testing.T) {
	env := servertest.New(t)
	b := servertest.Browser()
	for name, tc := range map[string]struct {
		params url.Values
		want   string
	}{
		"response type": {url.Values{"response_type": {"token"}}, "unsupported_response_type"},
		"plain pkce":    {url.Values{"response_type": {"code"}, "code_challenge": {strings.Repeat("a", 43)}, "code_challenge_method": {"plain"}}, "invalid_request"},
		"no method":     {url.Values{"response_type": {"code"}, "code_challenge": {strings.Repeat("a", 43)}}, "invalid_request"},
		"short":         {url.Values{"response_type": {"code"}, "code_challenge": {"abc"}, "code_challenge_method": {"S256"}}, "invalid_request"},
	} {
		t.Run(name, func(t *testing.T) {
			q := tc.params
			q.Set("client_id", server.DevClientID)
			q.Set("redirect_uri", redirect)
			q.Set("state", "xyz")
			resp, err := b.Get(env.Server.AuthURL() + oauth.PathAuthorize + "?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			loc, _ := url.Parse(resp.Header.Get("Location"))
			if resp.StatusCode != 302 || !strings.HasPrefix(loc.String(), redirect) {
				t.Fatalf("status %d Location %q", resp.StatusCode, loc)
			}
			if loc.Query().Get("error") != tc.want || loc.Query().Get("state") != "xyz" {
				t.Errorf("redirect query = %v, want error=%s state=xyz", loc.Query(), tc.want)
			}
		})
	}
}

func TestLoopbackRedirectAnyPort(t *testing.T) {
	env := servertest.New(t)
	for _, uri := range []string{"http://127.0.0.1:1/callback", "http://127.0.0.1:65535/callback", "http://[::1]:8000/callback"} {
		conf := env.OAuthConfig(uri)
		code, _ := env.Authorize(conf, server.DevUsername, server.DevPassword)
		if _, err := conf.Exchange(context.Background(), code); err != nil {
			t.Errorf("%s: %v", uri, err)
		}
	}
}

func TestTokenRedirectURIMustMatchAuthorizeRequest(t *testing.T) {
	env := servertest.New(t)
	conf := env.OAuthConfig(redirect)
	code, _ := env.Authorize(conf, server.DevUsername, server.DevPassword)
	other := *conf
	other.RedirectURL = "http://127.0.0.1:41235/callback" // registered pattern, different port
	if _, err := other.Exchange(context.Background(), code); oauthErrorCode(err) != "invalid_grant" {
		t.Fatalf("exchange with another redirect_uri: %v, want invalid_grant", err)
	}
	// The failed attempt did not spend the code of its rightful holder.
	if _, err := conf.Exchange(context.Background(), code); err != nil {
		t.Fatalf("exchange with the right redirect_uri after a failed one: %v", err)
	}
}

func TestPKCE(t *testing.T) {
	env := servertest.New(t)
	conf := env.OAuthConfig(redirect)
	verifier := oauth2.GenerateVerifier()
	for name, opts := range map[string][]oauth2.AuthCodeOption{
		"missing verifier":         nil,
		"wrong verifier":           {oauth2.VerifierOption(oauth2.GenerateVerifier())},
		"malformed verifier":       {oauth2.VerifierOption("short")},
		"verifier of no challenge": {oauth2.VerifierOption(verifier)},
	} {
		t.Run(name, func(t *testing.T) {
			var code string
			if name == "verifier of no challenge" {
				code, _ = env.Authorize(conf, server.DevUsername, server.DevPassword)
			} else {
				code, _ = env.Authorize(conf, server.DevUsername, server.DevPassword, oauth2.S256ChallengeOption(verifier))
			}
			if _, err := conf.Exchange(context.Background(), code, opts...); oauthErrorCode(err) != "invalid_grant" {
				t.Fatalf("exchange: %v, want invalid_grant", err)
			}
		})
	}
	t.Run("right verifier after a wrong one", func(t *testing.T) {
		code, _ := env.Authorize(conf, server.DevUsername, server.DevPassword, oauth2.S256ChallengeOption(verifier))
		if _, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(oauth2.GenerateVerifier())); oauthErrorCode(err) != "invalid_grant" {
			t.Fatalf("wrong verifier: %v", err)
		}
		if _, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRefreshRotationAndReuse(t *testing.T) {
	env := servertest.New(t)
	first := env.Login(server.DevUsername, server.DevPassword)

	// x/oauth2 refreshes an expired token by itself and gets a new refresh token.
	expired := *first
	expired.Expiry = time.Now().Add(-time.Minute)
	second, err := env.OAuthConfig(redirect).TokenSource(context.Background(), &expired).Token()
	if err != nil {
		t.Fatal(err)
	}
	if second.AccessToken == first.AccessToken || second.RefreshToken == first.RefreshToken || second.RefreshToken == "" {
		t.Fatal("refresh did not rotate both tokens")
	}
	if r := env.Do("GET", "/vehicle/", second.AccessToken, nil); r.Status != 200 {
		t.Fatalf("refreshed token: %d", r.Status)
	}

	// The rotated refresh token comes back: the whole family is revoked.
	status, _, body := postToken(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}})
	if status != 400 || body["error"] != "invalid_grant" {
		t.Fatalf("reuse: %d %v", status, body)
	}
	for name, tok := range map[string]string{"first access": first.AccessToken, "second access": second.AccessToken} {
		if r := env.Do("GET", "/vehicle/", tok, nil); r.Status != 401 {
			t.Errorf("%s after reuse: %d, want 401", name, r.Status)
		}
	}
	status, _, _ = postToken(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {second.RefreshToken}})
	if status != 400 {
		t.Errorf("second refresh token after reuse: %d, want 400", status)
	}
}

func TestConcurrentRefreshOneWins(t *testing.T) {
	env := servertest.New(t)
	tok := env.Login(server.DevUsername, server.DevPassword)
	var wg sync.WaitGroup
	statuses := make([]int, 4)
	for i := range statuses {
		wg.Go(func() {
			statuses[i], _, _ = postToken(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}})
		})
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		if s == 200 {
			ok++
		}
	}
	if ok != 1 {
		t.Fatalf("statuses %v: want exactly one 200", statuses)
	}
}

func TestExpiredAndRevokedTokens(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	env := servertest.New(t, servertest.WithNow(clock))
	tok := env.Login(server.DevUsername, server.DevPassword)

	mu.Lock()
	now = now.Add(oauth.AccessTokenTTL + time.Second)
	mu.Unlock()
	r := env.Do("GET", "/vehicle/1", tok.AccessToken, nil)
	if r.Status != 401 || r.Error(t).Code != api.CodeExpired {
		t.Fatalf("expired token: %d %s, want 401 EXPIRED", r.Status, r.Body)
	}
	if got := r.Header.Get("WWW-Authenticate"); !strings.Contains(got, `error="invalid_token"`) {
		t.Errorf("WWW-Authenticate = %q", got)
	}

	// The refresh token outlives the access token by 30 days.
	status, _, body := postToken(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}})
	if status != 200 {
		t.Fatalf("refresh after access expiry: %d %v", status, body)
	}
	fresh := body["access_token"].(string)

	// Revocation (RFC 7009), as vcs logout does it.
	req, _ := http.NewRequest("POST", env.URL+oauth.PathRevoke, strings.NewReader(url.Values{"token": {body["refresh_token"].(string)}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(server.DevClientID, server.DevClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
	r = env.Do("GET", "/vehicle/1", fresh, nil)
	if r.Status != 401 || r.Error(t).Code != api.CodeUnauthorized {
		t.Fatalf("revoked token: %d %s, want 401 UNAUTHORIZED", r.Status, r.Body)
	}

	for name, hdr := range map[string]string{"none": "", "unknown": "Bearer vcsa_nope", "basic": "Basic Zm9vOmJhcg=="} {
		req, _ := http.NewRequest("GET", env.URL+"/vehicle/", nil)
		if hdr != "" {
			req.Header.Set("Authorization", hdr)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: %d %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
}

func TestAccountCreationCode(t *testing.T) {
	env := servertest.New(t)
	ct := env.ClientToken()
	r := env.Do("POST", "/account/", ct, newAccount("creator"))
	if r.Status != 200 {
		t.Fatalf("create account: %d %s", r.Status, r.Body)
	}
	var created api.Envelope[api.Account]
	r.JSON(t, &created)
	if created.Data.AccessToken == nil || created.Data.AccessToken.Code == "" {
		t.Fatalf("no accessToken.code in %s", r.Body)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("create response with a code must not be cached")
	}
	code := created.Data.AccessToken.Code

	// Exchanged with no redirect_uri; one sent anyway is ignored.
	status, _, body := postToken(t, env, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {"https://ignored.example/"}})
	if status != 200 {
		t.Fatalf("exchange: %d %v", status, body)
	}
	r = env.Do("GET", "/account/", body["access_token"].(string), nil)
	var mine api.Envelope[[]api.Account]
	r.JSON(t, &mine)
	if len(mine.Data) != 1 || mine.Data[0].ID != created.Data.ID {
		t.Fatalf("the code's token sees %s", r.Body)
	}
	if status, _, _ := postToken(t, env, url.Values{"grant_type": {"authorization_code"}, "code": {code}}); status != 400 {
		t.Errorf("second exchange: %d, want 400", status)
	}
	// Account codes never leak into reads.
	r = env.Do("GET", "/account/"+itoa(created.Data.ID), ct, nil)
	if strings.Contains(string(r.Body), "accessToken") || strings.Contains(string(r.Body), "password") {
		t.Errorf("GET account shows write-only members: %s", r.Body)
	}
}

func TestAccountCodeBoundToCreatingClient(t *testing.T) {
	env := servertest.New(t)
	other, err := env.Server.OAuth.CreateClient(context.Background(), "other", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := env.Do("POST", "/account/", env.ClientToken(), newAccount("bound"))
	var created api.Envelope[api.Account]
	r.JSON(t, &created)
	form := url.Values{"grant_type": {"authorization_code"}, "code": {created.Data.AccessToken.Code}}
	req, _ := http.NewRequest("POST", env.URL+oauth.PathToken, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(other.ID, other.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("another client exchanged the code: %d", resp.StatusCode)
	}
}

func TestRevokeOnlyOwnTokens(t *testing.T) {
	env := servertest.New(t)
	tok := env.Login(server.DevUsername, server.DevPassword)
	other, err := env.Server.OAuth.CreateClient(context.Background(), "other", nil)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", env.URL+oauth.PathRevoke, strings.NewReader(url.Values{"token": {tok.RefreshToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(other.ID, other.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "unauthorized_client") {
		t.Fatalf("revoking another client's token: %d %s", resp.StatusCode, body)
	}
	if r := env.Do("GET", "/vehicle/", tok.AccessToken, nil); r.Status != 200 {
		t.Fatalf("the token stopped working: %d", r.Status)
	}
	// Unknown tokens are fine: the goal, a token that does not work, is met.
	postRevoke(t, env, "vcsr_never-issued")
}

func TestClientAuthentication(t *testing.T) {
	env := servertest.New(t)
	send := func(user, pass string, form url.Values) (int, http.Header, string) {
		req, _ := http.NewRequest("POST", env.URL+oauth.PathToken, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	cc := url.Values{"grant_type": {"client_credentials"}}
	if s, h, b := send(server.DevClientID, "wrong", cc); s != 401 || !strings.Contains(b, "invalid_client") || h.Get("WWW-Authenticate") == "" {
		t.Errorf("wrong secret: %d %s", s, b)
	}
	if s, _, b := send("nobody", "x", cc); s != 401 || !strings.Contains(b, "invalid_client") {
		t.Errorf("unknown client: %d %s", s, b)
	}
	if s, _, b := send("", "", cc); s != 401 {
		t.Errorf("no credentials: %d %s", s, b)
	}
	post := url.Values{"grant_type": {"client_credentials"}, "client_id": {server.DevClientID}, "client_secret": {server.DevClientSecret}}
	if s, _, b := send("", "", post); s != 200 || strings.Contains(b, "refresh_token") {
		t.Errorf("client_secret_post: %d %s (client tokens have no refresh token)", s, b)
	}
	if s, _, b := send(server.DevClientID, server.DevClientSecret, post); s != 400 {
		t.Errorf("both methods: %d %s", s, b)
	}
	if s, _, b := send(server.DevClientID, server.DevClientSecret, url.Values{"grant_type": {"password"}}); s != 400 || !strings.Contains(b, "unsupported_grant_type") {
		t.Errorf("password grant: %d %s", s, b)
	}
}

func TestLoginPage(t *testing.T) {
	env := servertest.New(t, servertest.WithLoginLimits(oauth.LoginLimits{UserBurst: 3, UserEvery: time.Hour, AddrBurst: 100, AddrEvery: time.Second}))
	conf := env.OAuthConfig(redirect)
	b := servertest.Browser()
	csrf := env.LoginPage(b, conf.AuthCodeURL("s"))

	resp, err := b.Get(env.Server.AuthURL() + oauth.PathLogin)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`name="username"`, `name="password"`, `type="password"`, `name="csrf"`, server.DevClientName} {
		if !strings.Contains(string(page), want) {
			t.Errorf("login page lacks %s", want)
		}
	}
	csrf = servertestCSRF(t, page)
	if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("login page can be framed: %v", resp.Header)
	}

	// A wrong CSRF token is refused even with the right password.
	r := env.SubmitLogin(b, "forged", server.DevUsername, server.DevPassword)
	page, _ = io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 403 || r.Header.Get("Location") != "" {
		t.Fatalf("forged CSRF: %d", r.StatusCode)
	}
	csrf = servertestCSRF(t, page)

	// Wrong passwords: the form again with a message, then a rate limit.
	for i := range 3 {
		r := env.SubmitLogin(b, csrf, server.DevUsername, "wrong-password")
		page, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 401 || !strings.Contains(string(page), "Incorrect username or password") {
			t.Fatalf("attempt %d: %d", i, r.StatusCode)
		}
		csrf = servertestCSRF(t, page)
	}
	r = env.SubmitLogin(b, csrf, server.DevUsername, server.DevPassword)
	page, _ = io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 429 || r.Header.Get("Retry-After") == "" || !strings.Contains(string(page), "Too many") {
		t.Fatalf("after 3 failures: %d %q, want 429 with Retry-After", r.StatusCode, r.Header.Get("Retry-After"))
	}

	// Without the session cookie there is no form to post.
	r = env.SubmitLogin(servertest.Browser(), csrf, server.DevUsername, server.DevPassword)
	r.Body.Close()
	if r.StatusCode != 400 || r.Header.Get("Location") != "" {
		t.Fatalf("no session: %d", r.StatusCode)
	}
}

func TestLoginCancel(t *testing.T) {
	env := servertest.New(t)
	b := servertest.Browser()
	csrf := env.LoginPage(b, env.OAuthConfig(redirect).AuthCodeURL("s1"))
	resp, err := b.PostForm(env.Server.AuthURL()+oauth.PathLogin, url.Values{"csrf": {csrf}, "action": {"cancel"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != 302 || loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "s1" {
		t.Fatalf("cancel: %d %s", resp.StatusCode, loc)
	}
}

func TestSessionCookieFlags(t *testing.T) {
	env := servertest.New(t)
	resp, err := servertest.Browser().Get(env.OAuthConfig(redirect).AuthCodeURL("s"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies = %v", cookies)
	}
	c := cookies[0]
	if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Fatalf("session cookie %+v: want Secure, HttpOnly, SameSite=Lax", c)
	}
}

func TestMetadata(t *testing.T) {
	env := servertest.New(t)
	r := env.Do("GET", oauth.PathMetadata, "", nil)
	var md api.ServerMetadata
	r.JSON(t, &md)
	if md.Issuer != env.URL || md.TokenEndpoint != env.URL+oauth.PathToken ||
		md.AuthorizationEndpoint != env.Server.AuthURL()+oauth.PathAuthorize ||
		strings.Join(md.CodeChallengeMethodsSupported, ",") != "S256" {
		t.Fatalf("metadata = %+v", md)
	}
}

func servertestCSRF(t *testing.T, page []byte) string {
	t.Helper()
	const marker = `name="csrf" value="`
	i := strings.Index(string(page), marker)
	if i < 0 {
		t.Fatalf("no CSRF field in:\n%s", page)
	}
	rest := string(page[i+len(marker):])
	return rest[:strings.IndexByte(rest, '"')]
}
