package auth

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/cli/clitest"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

func TestNewCmdTokenFlags(t *testing.T) {
	for _, tc := range []struct {
		args    string
		wantErr string
		want    TokenOptions
	}{
		{args: ""},
		{args: "--client", want: TokenOptions{Client: true}},
		{args: "--exchange vcsc_x --save", want: TokenOptions{Exchange: "vcsc_x", Save: true}},
		{args: "--client --refresh", wantErr: "use one of"},
		{args: "--save", wantErr: "--save and --save-as go with --exchange"},
		{args: "--exchange c --save --save-as x", wantErr: "not both"},
		{args: "--exchange c --save-as ../x", wantErr: "profile name"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *TokenOptions
			cmd := NewCmdToken(&cmdutil.Factory{IOStreams: ios, Globals: &cmdutil.Globals{}}, func(_ context.Context, o *TokenOptions) error { got = o; return nil })
			cmd.SetArgs(strings.Fields(tc.args))
			cmd.SetOut(ios.ErrOut)
			cmd.SetErr(ios.ErrOut)
			err := cmd.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || cmdutil.ExitCode(err) != cmdutil.ExitUsage {
					t.Fatalf("err = %v, want usage error %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Client != tc.want.Client || got.Exchange != tc.want.Exchange || got.Save != tc.want.Save {
				t.Errorf("options = %+v", got)
			}
		})
	}
}

func tokenOptions(c *clitest.CLI) *TokenOptions {
	return &TokenOptions{IO: c.IO, Session: c.F.Session, Globals: c.F.Globals}
}

func TestTokenPrintsOnlyTheToken(t *testing.T) {
	env := servertest.New(t)
	c := clitest.New(t, env)
	ts := c.LoginDemo(t, env)
	if err := tokenRun(context.Background(), tokenOptions(c)); err != nil {
		t.Fatal(err)
	}
	if c.Stdout.String() != ts.AccessToken+"\n" {
		t.Fatalf("stdout = %q, want the token and a newline", c.Stdout)
	}

	// --refresh: a new token, stored, and working.
	c.Reset()
	opts := tokenOptions(c)
	opts.Refresh = true
	if err := tokenRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	fresh := strings.TrimSpace(c.Stdout.String())
	if fresh == ts.AccessToken || env.Do("GET", "/vehicle/", fresh, nil).Status != 200 {
		t.Fatal("--refresh did not print a new working token")
	}

	// --client: a client token, which may create accounts.
	c.Reset()
	opts = tokenOptions(c)
	opts.Client = true
	if err := tokenRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	ct := strings.TrimSpace(c.Stdout.String())
	if r := env.Do("POST", "/account/", ct, map[string]any{"firstName": "A", "lastName": "B", "zipcode": "33602",
		"timeZone": "UTC", "preferredContact": "EMAIL", "username": "viaclient", "password": "password-1"}); r.Status != 200 {
		t.Fatalf("client token creating an account: %d %s", r.Status, r.Body)
	}
}

func TestTokenExchangeSave(t *testing.T) {
	env := servertest.New(t)
	r := env.Do("POST", "/account/", env.ClientToken(), map[string]any{"firstName": "Ex", "lastName": "Change",
		"zipcode": "33602", "timeZone": "UTC", "preferredContact": "EMAIL", "username": "exchanger", "password": "password-1"})
	var created api.Envelope[api.Account]
	r.JSON(t, &created)

	c := clitest.New(t, env)
	opts := tokenOptions(c)
	opts.Exchange, opts.Save = created.Data.AccessToken.Code, true
	if err := tokenRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	ts, err := c.Session(t).Load(context.Background())
	if err != nil || ts.Username != "exchanger" || ts.AccountID != created.Data.ID {
		t.Fatalf("saved %+v, %v", ts, err)
	}
	if strings.TrimSpace(c.Stdout.String()) != ts.AccessToken {
		t.Errorf("printed token is not the saved one")
	}
	// The code works once.
	c.Reset()
	if err := tokenRun(context.Background(), opts); cmdutil.ExitCode(err) != cmdutil.ExitAuth {
		t.Fatalf("second exchange: %v", err)
	}
}

func TestTokenFromFlagSkipsStore(t *testing.T) {
	env := servertest.New(t)
	c := clitest.New(t, env)
	c.F.Globals.Token = "vcsa_given-on-the-command-line"
	if err := tokenRun(context.Background(), tokenOptions(c)); err != nil {
		t.Fatal(err)
	}
	if c.Stdout.String() != "vcsa_given-on-the-command-line\n" {
		t.Fatalf("stdout = %q", c.Stdout)
	}
}

func TestLogoutRevokesAndForgets(t *testing.T) {
	env := servertest.New(t)
	c := clitest.New(t, env)
	ts := c.LoginDemo(t, env)
	if err := logoutRun(context.Background(), &LogoutOptions{IO: c.IO, Session: c.F.Session}); err != nil {
		t.Fatal(err)
	}
	if r := env.Do("GET", "/vehicle/", ts.AccessToken, nil); r.Status != 401 {
		t.Fatalf("access token after logout: %d, want 401", r.Status)
	}
	if _, err := c.Session(t).Load(context.Background()); cmdutil.ExitCode(err) != cmdutil.ExitAuth {
		t.Fatalf("credentials after logout: %v", err)
	}
	if !strings.Contains(c.Stderr.String(), "Logged out of local") {
		t.Errorf("stderr = %s", c.Stderr)
	}
	// Logging out twice: not logged in.
	if err := logoutRun(context.Background(), &LogoutOptions{IO: c.IO, Session: c.F.Session}); cmdutil.ExitCode(err) != cmdutil.ExitAuth {
		t.Fatalf("second logout: %v", err)
	}
}

// TestTokenExchangeSaveAsNewProfile: --save-as creates a profile on the same service that
// works on its own, refresh included.
func TestTokenExchangeSaveAsNewProfile(t *testing.T) {
	env := servertest.New(t)
	r := env.Do("POST", "/account/", env.ClientToken(), map[string]any{"firstName": "New", "lastName": "Profile",
		"zipcode": "33602", "timeZone": "UTC", "preferredContact": "EMAIL", "username": "newprofile", "password": "password-1"})
	var created api.Envelope[api.Account]
	r.JSON(t, &created)

	c := clitest.New(t, env)
	opts := tokenOptions(c)
	opts.Config = c.F.Config
	opts.Exchange, opts.SaveAs = created.Data.AccessToken.Code, "ann"
	if err := tokenRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}

	// The new profile is in the file (addresses, client id; no secret) and usable with only
	// --profile ann, its client secret from the store.
	cfg, _ := c.F.Config()
	raw, err := os.ReadFile(cfg.Path())
	if err != nil || !strings.Contains(string(raw), "ann:") || !strings.Contains(string(raw), env.URL) || strings.Contains(string(raw), "secret") {
		t.Fatalf("config file: %v\n%s", err, raw)
	}
	c.F.Globals.Profile = "ann"
	s := c.Session(t)
	if s.Profile.BaseURL != env.URL || s.Profile.ClientID != "vcs-dev" {
		t.Fatalf("new profile = %+v", s.Profile)
	}
	ts, err := s.Refresh(context.Background())
	if err != nil {
		t.Fatalf("refresh in the new profile: %v", err)
	}
	if ts.Username != "newprofile" || env.Do("GET", "/vehicle/", ts.AccessToken, nil).Status != 200 {
		t.Fatalf("new profile's login: %+v", ts)
	}
	// The active profile's own login is untouched.
	c.F.Globals.Profile = ""
	if _, err := c.Session(t).Load(context.Background()); err == nil {
		t.Error("--save-as also stored the login in the active profile")
	}
}
