package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/oauth"
	"github.com/connected-vehicle/vcs/internal/server"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

// TestNoSecretsInLogOrResponses walks every flow that handles a secret, then searches the
// service's log for each of them.
func TestNoSecretsInLogOrResponses(t *testing.T) {
	env := servertest.New(t)
	secrets := map[string]string{"dev client secret": server.DevClientSecret, "demo password": server.DevPassword}

	// Login, with a failure whose "username" is really a password, as people mistype.
	conf := env.OAuthConfig(redirect)
	verifier := oauth2.GenerateVerifier()
	b := servertest.Browser()
	csrf := env.LoginPage(b, conf.AuthCodeURL("state-1", oauth2.S256ChallengeOption(verifier)))
	secrets["csrf"] = csrf
	r := env.SubmitLogin(b, csrf, "typed-my-Pa55word-here", "whatever-else")
	page, _ := io.ReadAll(r.Body)
	r.Body.Close()
	secrets["password typed as username"] = "typed-my-Pa55word-here"
	secrets["wrong password"] = "whatever-else"
	u, _ := url.Parse(env.Server.AuthURL())
	for _, c := range b.Jar.Cookies(u) {
		secrets["session cookie"] = c.Value
	}
	csrf = servertestCSRF(t, page)
	r = env.SubmitLogin(b, csrf, server.DevUsername, server.DevPassword)
	r.Body.Close()
	loc, _ := url.Parse(r.Header.Get("Location"))
	code := loc.Query().Get("code")
	secrets["code"] = code
	secrets["verifier"] = verifier
	tok, err := conf.Exchange(context.Background(), code, oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	secrets["access token"], secrets["refresh token"] = tok.AccessToken, tok.RefreshToken
	tok.Expiry = time.Now().Add(-time.Hour)
	fresh, err := conf.TokenSource(context.Background(), tok).Token()
	if err != nil {
		t.Fatal(err)
	}
	secrets["refreshed access token"], secrets["refreshed refresh token"] = fresh.AccessToken, fresh.RefreshToken
	env.Do("GET", "/vehicle/", fresh.AccessToken, nil)

	// Account creation with a password, and its code.
	ct := env.ClientToken()
	secrets["client token"] = ct
	acct := newAccount("secretive")
	acct["password"] = "very-secret-password-42"
	secrets["new account password"] = "very-secret-password-42"
	r2 := env.Do("POST", "/account/", ct, acct)
	if strings.Contains(string(r2.Body), "very-secret-password-42") {
		t.Fatal("account response contains the password")
	}
	var created api.Envelope[api.Account]
	r2.JSON(t, &created)
	secrets["account code"] = created.Data.AccessToken.Code
	env.Do("POST", "/account/"+itoa(created.Data.ID), ct, map[string]any{"password": "another-secret-pass-7"})
	secrets["changed password"] = "another-secret-pass-7"

	// A failed refresh and a bad bearer token.
	postToken(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"vcsr_guessed-refresh-token"}})
	secrets["guessed refresh token"] = "vcsr_guessed-refresh-token"
	env.Do("GET", "/vehicle/", "vcsa_guessed-access-token", nil)
	secrets["guessed access token"] = "vcsa_guessed-access-token"
	// Revocation, as logout does it.
	postRevoke(t, env, fresh.RefreshToken)

	// A client created by an operator.
	c, err := env.Server.OAuth.CreateClient(context.Background(), "partner", []string{"https://partner.example/cb"})
	if err != nil {
		t.Fatal(err)
	}
	secrets["new client secret"] = c.Secret

	log := env.Logs.String()
	if !strings.Contains(log, `"msg":"request"`) || !strings.Contains(log, "login failed") {
		t.Fatalf("the log did not capture the requests:\n%s", log)
	}
	for name, s := range secrets {
		if s == "" {
			t.Fatalf("%s was not captured", name)
		}
		if strings.Contains(log, s) {
			t.Errorf("the log contains the %s", name)
		}
	}
}

func postRevoke(t *testing.T, env *servertest.Env, token string) {
	t.Helper()
	req, _ := http.NewRequest("POST", env.URL+oauth.PathRevoke, strings.NewReader(url.Values{"token": {token}}.Encode()))
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
}

// TestRestartKeepsEverything closes the database and opens it again: accounts, vehicles,
// clients and tokens survive.
func TestRestartKeepsEverything(t *testing.T) {
	env := servertest.New(t)
	a, tok := createUser(t, env, "durable")
	v := createVehicle(t, env, tok, map[string]any{"vin": "JF2GPAKC5D2889395", "deviceId": "KEEP-1"})
	partner, err := env.Server.OAuth.CreateClient(t.Context(), "kept partner", nil)
	if err != nil {
		t.Fatal(err)
	}

	env.Restart()

	r := env.Do("GET", "/vehicle/KEEP-1", tok, nil)
	var got api.Envelope[api.Vehicle]
	r.JSON(t, &got)
	if r.Status != 200 || got.Data.VehicleID != v.VehicleID || got.Data.Name != "2013 Subaru" {
		t.Fatalf("vehicle after restart: %d %s", r.Status, r.Body)
	}
	r = env.Do("GET", "/account/"+itoa(a.ID), tok, nil)
	if r.Status != 200 {
		t.Fatalf("account after restart: %d %s", r.Status, r.Body)
	}
	if tok := env.ClientTokenFor(partner.ID, partner.Secret); tok == "" {
		t.Fatal("partner client lost")
	}
	// Seeding again on the same directory adds nothing.
	r = env.Do("GET", "/vehicle/", env.DemoToken(), nil)
	var list api.Envelope[[]api.Vehicle]
	r.JSON(t, &list)
	if *list.TotalRecords != 3 {
		t.Fatalf("demo vehicles after restart: %d", *list.TotalRecords)
	}
}

// TestHTTPServerLimits: the production http.Server has timeouts and a header limit, and
// they cut off a slow client and refuse an oversized header.
func TestHTTPServerLimits(t *testing.T) {
	env := servertest.New(t)
	srv := server.NewHTTPServer(env.Server.Handler(), nil)
	if srv.ReadHeaderTimeout == 0 || srv.ReadTimeout == 0 || srv.WriteTimeout == 0 || srv.IdleTimeout == 0 || srv.MaxHeaderBytes == 0 {
		t.Fatalf("missing limits: %+v", srv)
	}
	if srv.MaxHeaderBytes > 1<<20 {
		t.Errorf("header limit %d is above 1 MiB", srv.MaxHeaderBytes)
	}

	// The same server with a short header timeout, to watch it act.
	srv.ReadHeaderTimeout = 200 * time.Millisecond
	ts := httptest.NewUnstartedServer(srv.Handler)
	ts.Config = srv
	ts.Start()
	defer ts.Close()

	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /vehicle/ HTTP/1.1\r\nHost: x\r\n") // and never finish the headers
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = bufio.NewReader(conn).ReadString('\n')
	if err == nil && time.Since(start) > 4*time.Second {
		t.Fatal("a client that never finished its headers held the connection")
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server did not close the connection of a slow client")
	}

	req, _ := http.NewRequest("GET", ts.URL+"/vehicle/", nil)
	req.Header.Set("X-Big", strings.Repeat("a", 2*srv.MaxHeaderBytes))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("oversized header: %d, want 431", resp.StatusCode)
	}
}
