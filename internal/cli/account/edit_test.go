package account

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/cli/clitest"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/config"
	"github.com/connected-vehicle/vcs/internal/output"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

var codeLine = regexp.MustCompile(`vcs token --exchange (\S+) --save`)

func TestCreateWithClientToken(t *testing.T) {
	// Creating needs only the profile's client, not a login.
	env := servertest.New(t)
	c := clitest.New(t, env)
	ctx := context.Background()

	if err := createRun(ctx, createOpts(c, "table", ann())); err != nil {
		t.Fatal(err)
	}
	matchGolden(t, "create.tsv.golden", c.Stdout.String())
	m := codeLine.FindStringSubmatch(c.Stderr.String())
	if m == nil || !strings.HasPrefix(c.Stderr.String(), "Created account 2. Its one-time code (valid 10 minutes):\n") {
		t.Fatalf("stderr = %q", c.Stderr)
	}
	for _, secret := range []string{"ann-password-1", m[1]} {
		if strings.Contains(c.Stdout.String(), secret) {
			t.Errorf("stdout shows %q:\n%s", secret, c.Stdout)
		}
	}
	if _, err := c.Session(t).Load(ctx); cmdutil.ExitCode(err) != cmdutil.ExitAuth {
		t.Errorf("create without --login stored credentials: %v", err)
	}

	// The code shown is the new account's: it exchanges (once, with no redirect URI) for
	// tokens of that account.
	tok, err := env.OAuthConfig("").Exchange(ctx, m[1])
	if err != nil {
		t.Fatalf("exchange the printed code: %v", err)
	}
	var got struct {
		Account []api.Account `json:"account"`
	}
	env.Do("GET", "/account/", tok.AccessToken, nil).JSON(t, &got)
	if len(got.Account) != 1 || got.Account[0].Username != "ann" || got.Account[0].ID != 2 {
		t.Errorf("the code's tokens see %+v", got.Account)
	}

	// With -o json the code is in the object, and nothing is said on stderr.
	c.Reset()
	in := ann()
	in.Username = api.Some("ann-json")
	if err := createRun(ctx, createOpts(c, "json", in)); err != nil {
		t.Fatal(err)
	}
	var a api.Account
	if err := json.Unmarshal(c.Stdout.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if a.ID != 3 || a.Username != "ann-json" || a.AccessToken == nil || a.AccessToken.Code == "" || c.Stderr.Len() != 0 {
		t.Errorf("created %+v, stderr %q", a, c.Stderr)
	}
	if strings.Contains(c.Stdout.String(), "password") {
		t.Errorf("the password member shows:\n%s", c.Stdout)
	}
}

func TestCreateLogin(t *testing.T) {
	env, c := loggedIn(t) // as demo: --login replaces that login
	ctx := context.Background()
	opts := createOpts(c, "json", ann())
	opts.Login = true
	if err := createRun(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if want := "Created account 2 and logged in to local as ann\n"; c.Stderr.String() != want {
		t.Errorf("stderr = %q, want %q", c.Stderr, want)
	}
	var a map[string]any
	if err := json.Unmarshal(c.Stdout.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if _, ok := a["accessToken"]; ok || a["username"] != "ann" {
		t.Errorf("printed %v: the spent code must not show", a)
	}

	ts, err := c.Session(t).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Username != "ann" || ts.AccountID != 2 || ts.AccessToken == "" || ts.RefreshToken == "" {
		t.Fatalf("stored %+v", ts)
	}
	var own struct {
		Account []api.Account `json:"account"`
	}
	env.Do("GET", "/account/", ts.AccessToken, nil).JSON(t, &own)
	if len(own.Account) != 1 || own.Account[0].ID != 2 {
		t.Errorf("the stored token sees %+v", own.Account)
	}

	// The commands now act as ann.
	c.Reset()
	if err := run(t, c, "", "get", "--jq", ".username"); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "ann\n" {
		t.Errorf("get after --login = %q", got)
	}
}

func TestCreateCommandEndToEnd(t *testing.T) {
	// `vcs account create ... --password-stdin` from flags to service and back to a login.
	env := servertest.New(t)
	c := clitest.New(t, env)
	err := run(t, c, "bo-password-1\n", "create", "--first-name", "Bo", "--last-name", "Ng", "--zipcode", "10001",
		"--time-zone", "America/New_York", "--preferred-contact", "phone", "--phone", "+1 212 555 0100",
		"--username", "bob", "--password-stdin", "-o", "json", "--jq", "[.id, .username, .preferredContact, .email]")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != `[2,"bob","PHONE",null]`+"\n" {
		t.Errorf("stdout = %q", got)
	}
	// The password went through stdin to the service: bo can log in with it.
	if tok := env.Login("bob", "bo-password-1"); tok.AccessToken == "" {
		t.Error("no token for bob")
	}
}

func TestCreateErrors(t *testing.T) {
	env := servertest.New(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		in       func() api.AccountInput
		secret   string // VCS_CLIENT_SECRET
		wantCode int
		wants    []string
	}{
		{name: "username taken", in: func() api.AccountInput { in := ann(); in.Username = api.Some("demo"); return in },
			wantCode: cmdutil.ExitError, wants: []string{"create account: ", `username "demo" is taken`}},
		{name: "required members", in: func() api.AccountInput {
			return api.AccountInput{Username: api.Some("zed"), Password: api.Some("zed-password")}
		},
			wantCode: cmdutil.ExitError, wants: []string{"firstName is required", "lastName is required", "timeZone is required"}},
		{name: "short password and bad zone", in: func() api.AccountInput {
			in := ann()
			in.Password, in.TimeZone = api.Some("short"), api.Some("Mars/Olympus")
			return in
		}, wantCode: cmdutil.ExitError, wants: []string{"timeZone must be an IANA time zone", "password must be 8 to"}},
		{name: "client secret rejected", in: ann, secret: "wrong-secret", wantCode: cmdutil.ExitAuth, wants: []string{"invalid_client"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clitest.New(t, env)
			if tt.secret != "" {
				cfg, err := config.Load(c.ConfigDir, func(k string) string {
					switch k {
					case config.EnvBaseURL:
						return env.URL
					case config.EnvClientSecret:
						return tt.secret
					}
					return ""
				})
				if err != nil {
					t.Fatal(err)
				}
				c.F.Config = func() (*config.Config, error) { return cfg, nil }
			}
			err := createRun(ctx, createOpts(c, "table", tt.in()))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if code := cmdutil.ExitCode(err); code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
			if c.Stdout.Len() != 0 {
				t.Errorf("stdout = %q", c.Stdout)
			}
		})
	}
	var list struct {
		TotalRecords int `json:"totalRecords"`
	}
	env.Do("GET", "/account/", env.ClientToken(), nil).JSON(t, &list)
	if list.TotalRecords != 1 {
		t.Errorf("%d accounts after failed creations, want the demo account alone", list.TotalRecords)
	}
}

func TestUpdateRun(t *testing.T) {
	env, c := loggedIn(t)
	ctx := context.Background()

	err := updateRun(ctx, &UpdateOptions{IO: c.IO, APIClient: c.F.APIClient, ID: 1, Output: output.Options{Format: "json"},
		Input: api.AccountInput{Phone: api.Some("+1 813 555 0100"), Email: api.Null[string](), LastName: api.Some("Demo-Smith")}})
	if err != nil {
		t.Fatal(err)
	}
	var a api.Account
	if err := json.Unmarshal(c.Stdout.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if a.Phone == nil || *a.Phone != "+1 813 555 0100" || a.Email != nil || a.LastName != "Demo-Smith" || a.FirstName != "Dana" || a.Username != "demo" {
		t.Errorf("updated = %+v", a)
	}

	// The password, from stdin, through the whole command: the old one stops working.
	c.Reset()
	if err := run(t, c, "a-new-demo-password\n", "update", "1", "--password-stdin", "--jq", ".username"); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "demo\n" {
		t.Errorf("stdout = %q", got)
	}
	if tok := env.Login("demo", "a-new-demo-password"); tok.AccessToken == "" {
		t.Error("no token with the new password")
	}

	t.Run("field errors", func(t *testing.T) {
		c.Reset()
		err := updateRun(ctx, &UpdateOptions{IO: c.IO, APIClient: c.F.APIClient, ID: 1, Output: output.Options{Format: "table"},
			Input: api.AccountInput{Email: api.Some("not-an-address"), FirstName: api.Null[string]()}})
		var apiErr *api.Error
		if !errors.As(err, &apiErr) || len(apiErr.FieldErrors) != 2 {
			t.Fatalf("error %v", err)
		}
		for _, w := range []string{"update account 1: ", "email must be an address", "firstName cannot be null"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
		if cmdutil.ExitCode(err) != cmdutil.ExitError {
			t.Errorf("exit code %d", cmdutil.ExitCode(err))
		}
	})
	t.Run("as client", func(t *testing.T) {
		id := createAnn(t, c)
		if err := run(t, c, "", "update", strconv.FormatInt(id, 10), "--as-client", "--zipcode", "90210", "--jq", ".zipcode"); err != nil {
			t.Fatal(err)
		}
		if got := c.Stdout.String(); got != "90210\n" {
			t.Errorf("stdout = %q", got)
		}
		c.Reset()
		err := run(t, c, "", "update", strconv.FormatInt(id, 10), "--zipcode", "90210")
		if err == nil || !strings.Contains(err.Error(), "not found") || cmdutil.ExitCode(err) != cmdutil.ExitError {
			t.Errorf("demo updating ann: %v", err)
		}
	})
}

func TestDeleteRun(t *testing.T) {
	env, c := loggedIn(t)
	ctx := context.Background()
	clientTok := env.ClientToken()
	exists := func(id int64) bool {
		return env.Do("GET", "/account/"+strconv.FormatInt(id, 10), clientTok, nil).Status == 200
	}
	tests := []struct {
		name        string
		tty         bool
		answer      string
		yes         bool
		wantDeleted bool
		wantCode    int
	}{
		{name: "piped without --yes", answer: "y\n", wantCode: cmdutil.ExitUsage},
		{name: "piped with --yes", yes: true, wantDeleted: true},
		{name: "tty no", tty: true, answer: "n\n", wantCode: cmdutil.ExitUsage},
		{name: "tty yes", tty: true, answer: "y\n", wantDeleted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := createAnnNamed(t, c, strings.ReplaceAll(tt.name, " ", "-"))
			c.Reset()
			c.Stdin.Reset()
			c.Stdin.WriteString(tt.answer)
			c.IO.SetStdinTTY(tt.tty)
			c.IO.SetStdoutTTY(tt.tty)
			defer c.IO.SetStdinTTY(false)
			defer c.IO.SetStdoutTTY(false)
			err := deleteRun(ctx, &DeleteOptions{IO: c.IO, APIClient: c.F.ClientAPIClient, ID: id, Yes: tt.yes})
			if code := cmdutil.ExitCode(err); code != tt.wantCode {
				t.Errorf("exit code %d for %v, want %d", code, err, tt.wantCode)
			}
			if got := !exists(id); got != tt.wantDeleted {
				t.Errorf("deleted = %v, want %v", got, tt.wantDeleted)
			}
			asked := strings.Contains(c.Stderr.String(), "Delete account "+strconv.FormatInt(id, 10)+" with all its vehicles and data? [y/N] ")
			if asked != tt.tty {
				t.Errorf("asked = %v: stderr %q", asked, c.Stderr)
			}
			if tt.wantDeleted && !strings.HasSuffix(c.Stderr.String(), "Deleted account "+strconv.FormatInt(id, 10)+"\n") {
				t.Errorf("stderr = %q", c.Stderr)
			}
		})
	}

	t.Run("own account with the login, whose token then stops working", func(t *testing.T) {
		c.Reset()
		if err := run(t, c, "", "delete", "1", "--yes"); err != nil {
			t.Fatal(err)
		}
		if exists(1) {
			t.Error("account 1 is still there")
		}
		err := run(t, c, "", "get")
		if code := cmdutil.ExitCode(err); code != cmdutil.ExitAuth {
			t.Errorf("get with a revoked token: exit code %d for %v, want 4", code, err)
		}
	})
}

// createAnnNamed creates an account like ann with another username and returns its id.
func createAnnNamed(t *testing.T, c *clitest.CLI, username string) int64 {
	t.Helper()
	c.Reset()
	in := ann()
	in.Username = api.Some(username)
	if err := createRun(context.Background(), createOpts(c, "json", in)); err != nil {
		t.Fatal(err)
	}
	var a api.Account
	if err := json.Unmarshal(c.Stdout.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	return a.ID
}

func TestNotLoggedIn(t *testing.T) {
	env := servertest.New(t)
	c := clitest.New(t, env)
	for _, args := range [][]string{{"list"}, {"get"}, {"get", "1"}, {"update", "1", "--phone", "12345"}, {"delete", "1", "--yes"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			err := run(t, c, "", args...)
			if code := cmdutil.ExitCode(err); code != cmdutil.ExitAuth {
				t.Errorf("exit code %d for %v, want 4", code, err)
			}
			if err == nil || !strings.Contains(err.Error(), "not logged in") {
				t.Errorf("error %v", err)
			}
		})
	}
	// --as-client needs no login: the profile's client is enough.
	c.Reset()
	if err := run(t, c, "", "list", "--as-client", "--jq", ".[].username"); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "demo\n" {
		t.Errorf("stdout = %q", got)
	}
}

func TestTokenFlag(t *testing.T) {
	env := servertest.New(t)
	c := clitest.New(t, env)
	c.F.Globals.Token = env.DemoToken()
	if err := run(t, c, "", "get", "--jq", ".id"); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "1\n" {
		t.Errorf("stdout = %q", got)
	}
}
