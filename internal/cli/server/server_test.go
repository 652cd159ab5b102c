package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/connected-vehicle/vcs/internal/golden"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/server"
)

func TestNewCmdServerFlags(t *testing.T) {
	for _, tc := range []struct {
		args    string
		wantErr string
		check   func(*testing.T, *Options)
	}{
		{args: "", check: func(t *testing.T, o *Options) {
			if o.Addr != "127.0.0.1:8080" || o.Env != "sandbox" || o.Dev || o.Output.Format != "table" {
				t.Errorf("defaults = %+v", o)
			}
		}},
		{args: "--dev --addr 127.0.0.1:0 -o json", check: func(t *testing.T, o *Options) {
			if !o.Dev || o.Addr != "127.0.0.1:0" || o.Output.Format != "json" {
				t.Errorf("options = %+v", o)
			}
		}},
		{args: "--dev --env production", wantErr: "--dev runs a sandbox"},
		{args: "--env staging", wantErr: "--env must be"},
		{args: "--base-path api", wantErr: "--base-path must start with /"},
		{args: "-o xml", wantErr: "unknown output format"},
		{args: "--bogus", wantErr: "unknown flag"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *Options
			cmd := NewCmdServer(&cmdutil.Factory{IOStreams: ios}, func(_ context.Context, o *Options) error { got = o; return nil })
			args := strings.Fields(tc.args)
			cmd.SetArgs(args)
			cmd.SetOut(ios.ErrOut)
			cmd.SetErr(ios.ErrOut)
			cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })
			err := cmd.Execute()
			if tc.wantErr != "" {
				var fe *cmdutil.FlagError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &fe) {
					t.Fatalf("err = %v, want a usage error containing %q", err, tc.wantErr)
				}
				if cmdutil.ExitCode(err) != cmdutil.ExitUsage {
					t.Errorf("exit code %d, want 2", cmdutil.ExitCode(err))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
		})
	}
}

// TestDevServerJSON runs `vcs server --dev -o json` for real: one JSON object on stdout once
// it serves, the settings in it work, and cancelling stops it cleanly.
func TestDevServerJSON(t *testing.T) {
	ios, _, stdout, stderr := iostreams.Test()
	ready := make(chan Settings, 1)
	opts := &Options{IO: ios, Dev: true, Addr: "127.0.0.1:0", Env: server.EnvSandbox,
		LogFormat: "text", LogLevel: "info", Ready: func(s Settings) { ready <- s }}
	opts.Output.Format = "json"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServer(ctx, opts) }()

	var s Settings
	select {
	case s = <-ready:
	case err := <-done:
		t.Fatalf("server stopped: %v\n%s", err, stderr)
	}
	var printed map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &printed); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	for _, k := range []string{"base_url", "auth_url", "client_id", "client_secret", "username", "password"} {
		if v, _ := printed[k].(string); v == "" {
			t.Errorf("%s missing from %s", k, stdout)
		}
	}
	if printed["client_id"] != server.DevClientID || !strings.HasPrefix(s.BaseURL, "http://127.0.0.1:") {
		t.Errorf("settings = %s", stdout)
	}

	req, _ := http.NewRequest("POST", s.BaseURL+"/oauth/token", strings.NewReader("grant_type=client_credentials"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(s.ClientID, s.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("client credentials with the printed settings: %d", resp.StatusCode)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if _, err := os.Stat(s.DataDir); !os.IsNotExist(err) {
		t.Errorf("temporary data directory %s left behind", s.DataDir)
	}
}

func TestDevServerBanner(t *testing.T) {
	ios, _, stdout, _ := iostreams.Test()
	opts := &Options{IO: ios, Dev: true}
	opts.Output.Format = "table"
	err := printSettings(opts, Settings{BaseURL: "http://127.0.0.1:8080", AuthURL: "http://127.0.0.1:8080",
		ClientID: "vcs-dev", ClientSecret: "vcs-dev-secret", Username: "demo", Password: "demo-password",
		Env: "sandbox", DataDir: "/tmp/vcs-dev-1"})
	if err != nil {
		t.Fatal(err)
	}
	matchGolden(t, "dev-banner.golden", stdout.String())
}

func TestClientCommands(t *testing.T) {
	dir := t.TempDir()
	store := storeFlags{DataDir: dir, Env: server.EnvSandbox}

	// create -o json: exactly the SPEC's members, with a secret.
	ios, _, stdout, _ := iostreams.Test()
	create := &ClientCreateOptions{IO: ios, Store: store, Name: "Fleet dashboard",
		RedirectURIs: []string{"https://fleet.example.com/cb", "http://127.0.0.1/callback"}}
	create.Output.Format = "json"
	if err := clientCreateRun(context.Background(), create); err != nil {
		t.Fatal(err)
	}
	var created map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	if len(created) != 4 || created["name"] != "Fleet dashboard" || !strings.HasPrefix(created["client_secret"].(string), "vcss_") {
		t.Fatalf("create -o json = %s", stdout)
	}
	id := created["client_id"].(string)

	// A bad redirect URI is refused with the reason.
	ios, _, _, _ = iostreams.Test()
	bad := &ClientCreateOptions{IO: ios, Store: store, Name: "bad", RedirectURIs: []string{"http://example.com/cb"}}
	bad.Output.Format = "table"
	if err := clientCreateRun(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "https") {
		t.Fatalf("http redirect URI accepted: %v", err)
	}

	// list: a table on a terminal, tab-separated values in a pipe; never the secret.
	for _, tty := range []bool{true, false} {
		ios, _, stdout, _ := iostreams.Test()
		ios.SetStdoutTTY(tty)
		list := &ClientListOptions{IO: ios, Store: store}
		list.Output.Format = "table"
		if err := clientListRun(context.Background(), list); err != nil {
			t.Fatal(err)
		}
		out := strings.ReplaceAll(stdout.String(), id, "CLIENT_ID")
		name := "client-list.tsv.golden"
		if tty {
			name = "client-list.tty.golden"
		}
		matchGolden(t, name, out)
		if strings.Contains(stdout.String(), created["client_secret"].(string)) {
			t.Fatal("list shows the secret")
		}
	}

	// delete: refused without --yes off a terminal; asks on one.
	ios, _, _, _ = iostreams.Test()
	del := &ClientDeleteOptions{IO: ios, Store: store, ID: id}
	if err := clientDeleteRun(context.Background(), del); cmdutil.ExitCode(err) != cmdutil.ExitUsage {
		t.Fatalf("delete without --yes: %v", err)
	}
	ios, stdin, _, _ := iostreams.Test()
	ios.SetStdinTTY(true)
	ios.SetStdoutTTY(true)
	stdin.WriteString("n\n")
	del = &ClientDeleteOptions{IO: ios, Store: store, ID: id}
	if err := clientDeleteRun(context.Background(), del); !errors.Is(err, cmdutil.ErrCancel) {
		t.Fatalf("declined delete: %v", err)
	}
	ios, _, _, _ = iostreams.Test()
	del = &ClientDeleteOptions{IO: ios, Store: store, ID: id, Yes: true}
	if err := clientDeleteRun(context.Background(), del); err != nil {
		t.Fatal(err)
	}
	if err := clientDeleteRun(context.Background(), del); err == nil || !strings.Contains(err.Error(), "no client") {
		t.Fatalf("deleting twice: %v", err)
	}
}

// matchGolden compares got, less what changes from run to run, with testdata/name.
func matchGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name, got)
}
