package client_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/oauth"
	"github.com/connected-vehicle/vcs/internal/server"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

// childTarget, in the environment, makes the test binary a child process that fetches that
// URL through NewTransport and reports the outcome on stdout (see TestProxy).
const childTarget = "VCS_CLIENT_TEST_PROXY_TARGET"

func TestMain(m *testing.M) {
	if target := os.Getenv(childTarget); target != "" {
		os.Exit(proxyChild(target))
	}
	os.Exit(m.Run())
}

func proxyChild(target string) int {
	hc := &http.Client{Transport: client.NewTransport("proxy-test", nil), Timeout: 30 * time.Second}
	resp, err := hc.Get(target)
	if err != nil {
		fmt.Println("error:", err)
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Printf("status: %d\nbody: %s\n", resp.StatusCode, body)
	return 0
}

// exchange is one request through the debug transport.
func exchange(t *testing.T, hc *http.Client, method, target string, header http.Header, contentType, body string) []byte {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, target, resp.StatusCode, b)
	}
	return b
}

func TestDebugTransportRedacts(t *testing.T) {
	env := servertest.New(t)
	var log bytes.Buffer
	hc := &http.Client{Transport: client.NewTransport("1.2.3", &log)}
	var secrets []string // every value that must not reach the log
	keep := func(vals ...string) {
		for _, v := range vals {
			if v == "" {
				t.Fatal("an empty secret: the test would prove nothing")
			}
			secrets = append(secrets, v)
		}
	}
	keep(server.DevClientSecret)

	// 1. A form body with client_secret, code and code_verifier; a response with
	// access_token and refresh_token.
	conf := env.OAuthConfig("http://127.0.0.1:41234/callback")
	verifier := oauth2.GenerateVerifier()
	code, _ := env.Authorize(conf, server.DevUsername, server.DevPassword, oauth2.S256ChallengeOption(verifier))
	keep(code, verifier)
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {conf.RedirectURL},
		"code_verifier": {verifier}, "client_id": {server.DevClientID}, "client_secret": {server.DevClientSecret}}
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		TokenType    string `json:"token_type"`
	}
	if err := json.Unmarshal(exchange(t, hc, "POST", env.URL+oauth.PathToken, nil, "application/x-www-form-urlencoded", form.Encode()), &tok); err != nil {
		t.Fatal(err)
	}
	keep(tok.AccessToken, tok.RefreshToken)

	// 2. A refresh: refresh_token in the form, new tokens in the response.
	form = url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken},
		"client_id": {server.DevClientID}, "client_secret": {server.DevClientSecret}}
	var refreshed struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.Unmarshal(exchange(t, hc, "POST", env.URL+oauth.PathToken, nil, "application/x-www-form-urlencoded", form.Encode()), &refreshed); err != nil {
		t.Fatal(err)
	}
	keep(refreshed.AccessToken, refreshed.RefreshToken)

	// 3. An Authorization header, and a token in the query.
	body := exchange(t, hc, "GET", env.URL+"/vehicle/?searchLimit=2&access_token="+url.QueryEscape(refreshed.AccessToken),
		http.Header{"Authorization": {"Bearer " + refreshed.AccessToken}}, "", "")
	if !strings.Contains(string(body), "Trail Jeep") {
		t.Fatalf("vehicles: %s", body)
	}

	// 4. A JSON body with a password, a response with accessToken.code.
	clientToken := env.ClientToken()
	keep(clientToken)
	account := `{"firstName": "Ann", "lastName": "Lee", "zipcode": "33602", "timeZone": "America/New_York",
		"preferredContact": "EMAIL", "username": "ann", "password": "Ann's-Pa55word"}`
	keep("Ann's-Pa55word")
	var created struct {
		Account struct {
			ID          int64 `json:"id"`
			AccessToken struct {
				Code string `json:"code"`
			} `json:"accessToken"`
		} `json:"account"`
	}
	if err := json.Unmarshal(exchange(t, hc, "POST", env.URL+"/account/", http.Header{"Authorization": {"Bearer " + clientToken}},
		"application/json", account), &created); err != nil {
		t.Fatal(err)
	}
	keep(created.Account.AccessToken.Code)

	// 5. HTTP Basic client authentication and a token in a revocation form.
	basic := http.Header{}
	req := &http.Request{Header: basic}
	req.SetBasicAuth(server.DevClientID, server.DevClientSecret)
	keep(strings.TrimPrefix(basic.Get("Authorization"), "Basic "))
	exchange(t, hc, "POST", env.URL+oauth.PathRevoke, basic, "application/x-www-form-urlencoded",
		url.Values{"token": {tok.AccessToken}, "token_type_hint": {"access_token"}}.Encode())

	got := log.String()
	for _, s := range secrets {
		if strings.Contains(got, s) {
			t.Errorf("the log shows the secret %q", s)
		}
		if strings.Contains(got, url.QueryEscape(s)) {
			t.Errorf("the log shows the secret %q, escaped", s)
		}
	}
	for _, want := range []string{
		"> POST " + env.URL + oauth.PathToken + "\n",
		"> User-Agent: vcs/1.2.3\n",
		"> Content-Type: application/x-www-form-urlencoded\n",
		"client_id=" + server.DevClientID,
		"client_secret=%5BREDACTED%5D",
		"code=%5BREDACTED%5D",
		"code_verifier=%5BREDACTED%5D",
		"grant_type=authorization_code",
		"grant_type=refresh_token",
		"refresh_token=%5BREDACTED%5D",
		"redirect_uri=" + url.QueryEscape(conf.RedirectURL),
		"< HTTP/1.1 200 OK (",
		`"access_token":"[REDACTED]"`,
		`"refresh_token":"[REDACTED]"`,
		`"token_type":"bearer"`,
		`"expires_in":86400`,
		"> GET " + env.URL + "/vehicle/?access_token=%5BREDACTED%5D&searchLimit=2\n",
		"> Authorization: [REDACTED]\n",
		"Trail Jeep",
		`"firstName":"Ann"`,
		`"password":"[REDACTED]"`,
		`"accessToken":{"code":"[REDACTED]"}`,
		`"username":"ann"`,
		"token=%5BREDACTED%5D",
		"token_type_hint=access_token",
		"> POST " + env.URL + oauth.PathRevoke + "\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("log:\n%s", got)
	}
}

func TestDebugTransportRedactsTheLoginPage(t *testing.T) {
	// The browser half of a login, through the debug transport: a password and a CSRF token
	// in a form, cookies both ways, and the code in the Location header.
	env := servertest.New(t)
	var log bytes.Buffer
	browser := servertest.Browser()
	browser.Transport = client.NewTransport("1", &log)
	conf := env.OAuthConfig("http://127.0.0.1:41234/callback")
	csrf := env.LoginPage(browser, conf.AuthCodeURL("state-123"))
	resp := env.SubmitLogin(browser, csrf, server.DevUsername, server.DevPassword)
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("login: %d %v", resp.StatusCode, err)
	}
	code := loc.Query().Get("code")
	if code == "" || csrf == "" {
		t.Fatalf("code %q csrf %q", code, csrf)
	}
	got := log.String()
	for _, secret := range []string{server.DevPassword, csrf, url.QueryEscape(csrf), code} {
		if strings.Contains(got, secret) {
			t.Errorf("the log shows %q", secret)
		}
	}
	for _, want := range []string{
		"> Cookie: [REDACTED]\n", "< Set-Cookie: [REDACTED]\n", "password=%5BREDACTED%5D", "csrf=%5BREDACTED%5D",
		"username=" + server.DevUsername, "< HTTP/1.1 302 Found", "state=state-123", "code=%5BREDACTED%5D",
		"< Location: http://127.0.0.1:41234/callback?",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("log:\n%s", got)
	}
}

func TestDebugTransportBodies(t *testing.T) {
	tests := []struct {
		name, contentType, body, want string
	}{
		{"nested JSON", "application/json", `{"a": [{"password": "p1", "x": 1}], "signingSecret": "whsec_x", "b": {"Token": "t"}}`,
			`{"a":[{"password":"[REDACTED]","x":1}],"b":{"Token":"[REDACTED]"},"signingSecret":"[REDACTED]"}`},
		{"big numbers stay exact", "application/json", `{"id": 9007199254740993}`, `{"id":9007199254740993}`},
		{"links with secrets in their query", "application/json",
			`{"actions": [{"name": "next", "uri": "https://h.example/vehicle?access_token=t0k&searchOffset=2"}], "postUrl": "https://u:pw@h.example/hook"}`,
			`{"actions":[{"name":"next","uri":"https://h.example/vehicle?access_token=%5BREDACTED%5D\u0026searchOffset=2"}],"postUrl":"https://h.example/hook"}`},
		{"links without secrets are kept as they are", "application/json",
			`{"uri": "https://h.example/v?z=1&a=2", "note": "see https://x.example/?code"}`,
			`{"note":"see https://x.example/?code","uri":"https://h.example/v?z=1\u0026a=2"}`},
		{"problem+json", "application/problem+json", `{"code": "c"}`, `{"code":"[REDACTED]"}`},
		{"malformed JSON", "application/json", `{"password": "p1"`, "[17 bytes of malformed JSON]"},
		{"form", "application/x-www-form-urlencoded; charset=utf-8", "password=p1&username=u", "password=%5BREDACTED%5D&username=u"},
		{"malformed form", "application/x-www-form-urlencoded", "password=%zz", "[12 bytes of malformed form]"},
		{"anything else", "text/plain", "password=p1", "[11 bytes of text/plain]"},
		{"no content type", "", "password=p1", "[11 bytes of ]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := client.RedactBody(tt.contentType, []byte(tt.body)); got != tt.want {
				t.Errorf("RedactBody = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDebugTransportNetworkError(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler())
	target := s.URL
	s.Close()
	var log bytes.Buffer
	hc := &http.Client{Transport: client.NewTransport("1", &log)}
	req, _ := http.NewRequest("POST", target+"/oauth/token", strings.NewReader("client_secret=s3cr3t"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if _, err := hc.Do(req); err == nil {
		t.Fatal("no error from a closed server")
	}
	got := log.String()
	if !strings.Contains(got, "> POST "+target+"/oauth/token\n") || !strings.Contains(got, "\n! ") || strings.Contains(got, "s3cr3t") {
		t.Errorf("log:\n%s", got)
	}
}

func TestUserAgent(t *testing.T) {
	var mu sync.Mutex
	var agents []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		agents = append(agents, r.Header.Get("User-Agent"))
		mu.Unlock()
	}))
	defer s.Close()
	hc := &http.Client{Transport: client.NewTransport("9.9.9", nil)}
	resp, err := hc.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// A User-Agent the caller set is kept.
	req, _ := http.NewRequest("GET", s.URL, nil)
	req.Header.Set("User-Agent", "custom/1")
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if req.Header.Get("User-Agent") != "custom/1" {
		t.Error("the caller's request was changed")
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(agents) != "[vcs/9.9.9 custom/1]" {
		t.Errorf("User-Agents %v", agents)
	}
}

// TestProxy runs the request in a child process: net/http reads the proxy variables once
// per process, so this process (which has made requests already) cannot show that
// NewTransport honours them.
func TestProxy(t *testing.T) {
	type seen struct{ method, uri, host, ua string }
	tests := []struct {
		name, env, target string
		want              seen
		wantChild         string
	}{
		{name: "HTTP_PROXY", env: "HTTP_PROXY", target: "http://vcs.example.test/vehicle/?searchLimit=2",
			want:      seen{"GET", "http://vcs.example.test/vehicle/?searchLimit=2", "vcs.example.test", "vcs/proxy-test"},
			wantChild: "status: 200\nbody: proxied\n"},
		{name: "http_proxy", env: "http_proxy", target: "http://vcs.example.test/",
			want:      seen{"GET", "http://vcs.example.test/", "vcs.example.test", "vcs/proxy-test"},
			wantChild: "status: 200\nbody: proxied\n"},
		{name: "HTTPS_PROXY", env: "HTTPS_PROXY", target: "https://vcs.example.test/vehicle/",
			// The proxy refuses the tunnel; that it was asked is what counts. (A CONNECT
			// carries net/http's own User-Agent, not the request's.)
			want:      seen{"CONNECT", "vcs.example.test:443", "vcs.example.test:443", ""},
			wantChild: "error: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []seen
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				ua := r.Header.Get("User-Agent")
				if r.Method == http.MethodConnect {
					ua = ""
				}
				got = append(got, seen{r.Method, r.RequestURI, r.Host, ua})
				mu.Unlock()
				if r.Method == http.MethodConnect {
					http.Error(w, "no tunnels here", http.StatusForbidden)
					return
				}
				io.WriteString(w, "proxied")
			}))
			defer proxy.Close()

			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = []string{childTarget + "=" + tt.target, tt.env + "=" + proxy.URL}
			for _, kv := range os.Environ() {
				name, _, _ := strings.Cut(kv, "=")
				if !strings.HasSuffix(strings.ToLower(name), "_proxy") && name != childTarget {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			if !strings.HasPrefix(string(out), tt.wantChild) {
				t.Errorf("child said %q, want %q...", out, tt.wantChild)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("the proxy saw %+v, want [%+v]", got, tt.want)
			}
		})
	}
}

func TestNoProxyForLoopback(t *testing.T) {
	// The same child, with a proxy that must not be used: loopback is never proxied, so
	// the real service answers.
	env := servertest.New(t)
	hits := 0
	var mu sync.Mutex
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		http.Error(w, "proxy", http.StatusBadGateway)
	}))
	defer proxy.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childTarget+"="+env.URL+oauth.PathMetadata, "HTTP_PROXY="+proxy.URL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 0 || !strings.HasPrefix(string(out), "status: 200\n") || !strings.Contains(string(out), `"issuer"`) {
		t.Errorf("proxy hits %d, child said %s", hits, out)
	}
}
