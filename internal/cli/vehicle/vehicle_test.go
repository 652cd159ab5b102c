package vehicle

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/connected-vehicle/vcs/internal/golden"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/cli/clitest"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/config"
	"github.com/connected-vehicle/vcs/internal/output"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

// matchGolden compares got, less what changes from run to run, with testdata/name.
func matchGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name, golden.ScrubDateTimes(got))
}

// parse runs a command's flag parsing with stdin (see clitest.Parse).
func parse[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *O) error) *cobra.Command, stdin string, args ...string) (*O, error) {
	t.Helper()
	return clitest.Parse(t, newCmd, clitest.ParseOptions{Stdin: stdin}, args...)
}

// wantUsageError checks that err is a usage error (exit code 2) that says want.
func wantUsageError(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want a usage error saying %q", want)
	}
	if code := cmdutil.ExitCode(err); code != cmdutil.ExitUsage {
		t.Errorf("exit code %d for %v, want %d", code, err, cmdutil.ExitUsage)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// loggedIn starts the service and a CLI logged in as the demo user; debug logs the CLI's
// HTTP exchanges to its stderr.
func loggedIn(t *testing.T, debug bool) (*servertest.Env, *clitest.CLI) {
	t.Helper()
	env := servertest.New(t)
	c := clitest.New(t, env)
	c.F.Globals.Debug = debug // read once, when the HTTP client is first built
	c.LoginDemo(t, env)
	c.Reset()
	return env, c
}

// addVehicles creates n vehicles in the demo account through the service's API.
func addVehicles(t *testing.T, env *servertest.Env, n int) {
	t.Helper()
	tok := env.DemoToken()
	for i := range n {
		r := env.Do("POST", "/vehicle/", tok, map[string]any{"label": "Extra " + string(rune('A'+i))})
		if r.Status != 200 && r.Status != 201 {
			t.Fatalf("create vehicle: %d %s", r.Status, r.Body)
		}
	}
}

// serviceVehicles is what the service answers to GET /vehicle/ for the demo user.
func serviceVehicles(t *testing.T, env *servertest.Env) []api.Vehicle {
	t.Helper()
	r := env.Do("GET", "/vehicle/?searchLimit=500", env.DemoToken(), nil)
	var body struct {
		Vehicle []api.Vehicle `json:"vehicle"`
	}
	r.JSON(t, &body)
	return body.Vehicle
}

func TestNewCmdList(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    ListOptions
		wantErr string
	}{
		{name: "defaults", want: ListOptions{List: cmdutil.ListFlags{Limit: 50}, Output: output.Options{Format: "table"}}},
		{name: "every flag", args: []string{"--all", "-L", "2", "--offset", "4", "-o", "json", "--jq", ".[].vin"},
			want: ListOptions{List: cmdutil.ListFlags{All: true, Limit: 2, Offset: 4}, Output: output.Options{Format: "json", JQ: ".[].vin"}}},
		{name: "limit 1", args: []string{"--limit", "1"}, want: ListOptions{List: cmdutil.ListFlags{Limit: 1}, Output: output.Options{Format: "table"}}},
		{name: "limit 500", args: []string{"--limit=500", "-o", "yaml"}, want: ListOptions{List: cmdutil.ListFlags{Limit: 500}, Output: output.Options{Format: "yaml"}}},
		{name: "limit 0", args: []string{"--limit", "0"}, wantErr: "--limit must be from 1 to 500"},
		{name: "limit 501", args: []string{"--limit", "501"}, wantErr: "--limit must be from 1 to 500"},
		{name: "limit negative", args: []string{"-L", "-3"}, wantErr: "--limit must be from 1 to 500"},
		{name: "limit not a number", args: []string{"--limit", "ten"}, wantErr: "invalid argument"},
		{name: "negative offset", args: []string{"--offset", "-1"}, wantErr: "--offset must not be negative"},
		{name: "unknown format", args: []string{"-o", "xml"}, wantErr: `unknown output format "xml"`},
		{name: "jq with yaml", args: []string{"-o", "yaml", "--jq", "."}, wantErr: "--jq filters JSON"},
		{name: "invalid jq", args: []string{"--jq", ".[", "-o", "json"}, wantErr: "invalid --jq expression"},
		{name: "unknown flag", args: []string{"--colour"}, wantErr: "unknown flag: --colour"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(t, NewCmdList, "", tt.args...)
			if tt.wantErr != "" {
				wantUsageError(t, err, tt.wantErr)
				if got != nil {
					t.Errorf("the run function was called with %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.List.All != tt.want.List.All || got.List.Limit != tt.want.List.Limit || got.List.Offset != tt.want.List.Offset || got.Output != tt.want.Output {
				t.Errorf("options = all %v limit %d offset %d output %+v, want all %v limit %d offset %d output %+v",
					got.List.All, got.List.Limit, got.List.Offset, got.Output, tt.want.List.All, tt.want.List.Limit, tt.want.List.Offset, tt.want.Output)
			}
			if got.IO == nil || got.APIClient != nil {
				// The factory of parse has IO streams and no API client.
				t.Errorf("options not wired to the factory: IO %v", got.IO)
			}
		})
	}
}

func TestNewCmdGet(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantRef string
		wantOut output.Options
		wantErr string
	}{
		{name: "by id", args: []string{"3"}, wantRef: "3", wantOut: output.Options{Format: "table"}},
		{name: "by serial as json", args: []string{"C2015000003", "-o", "json"}, wantRef: "C2015000003", wantOut: output.Options{Format: "json"}},
		{name: "jq", args: []string{"1", "--jq", ".name"}, wantRef: "1", wantOut: output.Options{Format: "table", JQ: ".name"}},
		{name: "no vehicle", args: nil, wantErr: "give the vehicle's id or device serial"},
		{name: "two vehicles", args: []string{"1", "2"}, wantErr: "too many arguments"},
		{name: "bad format", args: []string{"1", "-o", "csv"}, wantErr: "unknown output format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(t, NewCmdGet, "", tt.args...)
			if tt.wantErr != "" {
				wantUsageError(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Ref != tt.wantRef || got.Output != tt.wantOut {
				t.Errorf("ref %q output %+v, want %q %+v", got.Ref, got.Output, tt.wantRef, tt.wantOut)
			}
		})
	}
}

func listOpts(c *clitest.CLI, args ...string) *ListOptions {
	opts := &ListOptions{List: cmdutil.ListFlags{Limit: 50}, IO: c.IO, APIClient: c.F.APIClient, Output: output.Options{Format: output.FormatTable}}
	for i := 0; i < len(args); i += 2 {
		switch args[i] {
		case "-o":
			opts.Output.Format = args[i+1]
		case "--jq":
			opts.Output.JQ = args[i+1]
		}
	}
	return opts
}

func TestListRun(t *testing.T) {
	env, c := loggedIn(t, false)
	ctx := context.Background()
	want := serviceVehicles(t, env)
	if len(want) != 3 {
		t.Fatalf("the seed has %d vehicles, want 3", len(want))
	}

	t.Run("tty table", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdoutTTY(true)
		defer c.IO.SetStdoutTTY(false)
		if err := listRun(ctx, listOpts(c)); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "list.tty.golden", c.Stdout.String())
		if c.Stderr.Len() != 0 {
			t.Errorf("stderr = %q, want nothing when every vehicle is shown", c.Stderr)
		}
		for line := range strings.Lines(c.Stdout.String()) {
			if strings.TrimRight(line, "\n") != strings.TrimRight(line, " \n") {
				t.Errorf("trailing spaces in %q", line)
			}
		}
	})
	t.Run("piped tsv", func(t *testing.T) {
		c.Reset()
		if err := listRun(ctx, listOpts(c)); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "list.tsv.golden", c.Stdout.String())
		lines := strings.Split(strings.TrimSuffix(c.Stdout.String(), "\n"), "\n")
		if len(lines) != 3 || strings.Count(lines[0], "\t") != 7 || strings.Contains(c.Stdout.String(), "NAME") {
			t.Errorf("want 3 rows of 8 tab-separated cells without a header:\n%s", c.Stdout)
		}
	})
	t.Run("json", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdoutTTY(true) // the format wins over the terminal
		defer c.IO.SetStdoutTTY(false)
		if err := listRun(ctx, listOpts(c, "-o", "json")); err != nil {
			t.Fatal(err)
		}
		out := c.Stdout.String()
		if !strings.HasPrefix(out, "[\n  {\n") {
			t.Errorf("not an indented JSON array:\n%s", out)
		}
		var got []api.Vehicle
		if err := json.Unmarshal(c.Stdout.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(want)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("-o json = %s\nthe service has %s", gotJSON, wantJSON)
		}
		if c.Stderr.Len() != 0 {
			t.Errorf("stderr = %q", c.Stderr)
		}
	})
	t.Run("yaml", func(t *testing.T) {
		c.Reset()
		if err := listRun(ctx, listOpts(c, "-o", "yaml")); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "list.yaml.golden", c.Stdout.String())
		var got []map[string]any
		if err := yaml.Unmarshal(c.Stdout.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[2]["label"] != "Family Subaru" || got[0]["deviceId"] != "C2015000001" {
			t.Errorf("yaml = %v", got)
		}
	})
	t.Run("jq", func(t *testing.T) {
		c.Reset()
		if err := listRun(ctx, listOpts(c, "--jq", ".[].vehicleId")); err != nil {
			t.Fatal(err)
		}
		if got := c.Stdout.String(); got != "1\n2\n3\n" {
			t.Errorf("--jq '.[].vehicleId' = %q", got)
		}
		c.Reset()
		if err := listRun(ctx, listOpts(c, "--jq", ".[0].label")); err != nil {
			t.Fatal(err)
		}
		if got := c.Stdout.String(); got != "Trail Jeep\n" {
			t.Errorf("--jq '.[0].label' = %q, want the bare string", got)
		}
	})
}

func TestListAllFollowsNextLinks(t *testing.T) {
	env, c := loggedIn(t, true)
	ctx := context.Background()
	addVehicles(t, env, 4) // 7 vehicles: pages of 2 are 2+2+2+1

	opts := listOpts(c, "--jq", ".[].vehicleId")
	opts.List.All, opts.List.Limit = true, 2
	if err := listRun(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "1\n2\n3\n4\n5\n6\n7\n" {
		t.Errorf("--all --limit 2 = %q, want every vehicle once, in order", got)
	}
	if n := strings.Count(c.Stderr.String(), "> GET "); n != 4 {
		t.Errorf("%d requests, want 4 pages:\n%s", n, c.Stderr)
	}
	for _, offset := range []string{"searchOffset=2", "searchOffset=4", "searchOffset=6"} {
		if !strings.Contains(c.Stderr.String(), offset) {
			t.Errorf("no request with %s:\n%s", offset, c.Stderr)
		}
	}

	t.Run("from an offset", func(t *testing.T) {
		c.Reset()
		opts := listOpts(c, "--jq", ".[].vehicleId")
		opts.List.All, opts.List.Limit, opts.List.Offset = true, 2, 3
		if err := listRun(ctx, opts); err != nil {
			t.Fatal(err)
		}
		if got := c.Stdout.String(); got != "4\n5\n6\n7\n" {
			t.Errorf("--all --offset 3 = %q", got)
		}
	})
	t.Run("one page on a terminal says there are more", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdoutTTY(true)
		defer c.IO.SetStdoutTTY(false)
		opts := listOpts(c)
		opts.List.Limit = 2
		if err := listRun(ctx, opts); err != nil {
			t.Fatal(err)
		}
		if rows := strings.Count(c.Stdout.String(), "\n"); rows != 3 {
			t.Errorf("%d lines, want a header and 2 rows:\n%s", rows, c.Stdout)
		}
		if !strings.Contains(c.Stderr.String(), "Showing 2 of 7 vehicles; use --all for every one.") {
			t.Errorf("stderr = %s", c.Stderr)
		}
	})
	t.Run("all on a terminal shows every row", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdoutTTY(true)
		defer c.IO.SetStdoutTTY(false)
		opts := listOpts(c)
		opts.List.All, opts.List.Limit = true, 3
		if err := listRun(ctx, opts); err != nil {
			t.Fatal(err)
		}
		if rows := strings.Count(c.Stdout.String(), "\n"); rows != 8 {
			t.Errorf("%d lines, want a header and 7 rows:\n%s", rows, c.Stdout)
		}
		if strings.Contains(c.Stderr.String(), "Showing") {
			t.Errorf("stderr = %s", c.Stderr)
		}
	})
}

func TestListRunEmpty(t *testing.T) {
	env, c := loggedIn(t, false)
	tok := env.DemoToken()
	for _, id := range []string{"1", "2", "3"} {
		if r := env.Do("DELETE", "/vehicle/"+id, tok, nil); r.Status != 200 {
			t.Fatalf("delete %s: %d", id, r.Status)
		}
	}
	c.IO.SetStdoutTTY(true)
	if err := listRun(context.Background(), listOpts(c)); err != nil {
		t.Fatal(err)
	}
	if c.Stdout.Len() != 0 || c.Stderr.String() != "No vehicles.\n" {
		t.Errorf("tty: stdout %q, stderr %q", c.Stdout, c.Stderr)
	}

	c.Reset()
	c.IO.SetStdoutTTY(false)
	if err := listRun(context.Background(), listOpts(c, "-o", "json")); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(c.Stdout.String()); got != "[]" {
		t.Errorf("-o json of no vehicles = %q, want []", got)
	}
}

func TestGetRun(t *testing.T) {
	env, c := loggedIn(t, false)
	ctx := context.Background()
	want := serviceVehicles(t, env)[1]

	for _, ref := range []string{"2", "C2015000002"} {
		t.Run("json by "+ref, func(t *testing.T) {
			c.Reset()
			opts := &GetOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: ref, Output: output.Options{Format: "json"}}
			if err := getRun(ctx, opts); err != nil {
				t.Fatal(err)
			}
			var got api.Vehicle
			if err := json.Unmarshal(c.Stdout.Bytes(), &got); err != nil {
				t.Fatalf("%v in %s", err, c.Stdout)
			}
			if got.VehicleID != 2 || *got.DeviceID != "C2015000002" || got.Name != want.Name || *got.Label != "Weekend Corvette" {
				t.Errorf("get %s = %+v", ref, got)
			}
		})
	}
	t.Run("tty", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdoutTTY(true)
		defer c.IO.SetStdoutTTY(false)
		if err := getRun(ctx, &GetOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "C2015000002", Output: output.Options{Format: "table"}}); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "get.tty.golden", c.Stdout.String())
	})
	t.Run("piped", func(t *testing.T) {
		c.Reset()
		if err := getRun(ctx, &GetOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "2", Output: output.Options{Format: "table"}}); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "get.tsv.golden", c.Stdout.String())
	})
	t.Run("not found", func(t *testing.T) {
		for _, ref := range []string{"999", "NO-SUCH-DEVICE"} {
			c.Reset()
			err := getRun(ctx, &GetOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: ref, Output: output.Options{Format: "table"}})
			if err == nil {
				t.Fatalf("get %s: no error", ref)
			}
			if got := err.Error(); !strings.HasPrefix(got, "get vehicle "+ref+": ") || !strings.Contains(got, "not found") {
				t.Errorf("error %q does not say what failed", got)
			}
			var apiErr *api.Error
			if !errors.As(err, &apiErr) || apiErr.Status() != 404 || apiErr.Code != api.CodeNotFound {
				t.Errorf("error %#v is not the service's 404", err)
			}
			if code := cmdutil.ExitCode(err); code != cmdutil.ExitError {
				t.Errorf("exit code %d, want 1", code)
			}
			if c.Stdout.Len() != 0 {
				t.Errorf("stdout = %q", c.Stdout)
			}
		}
	})
}

func TestNotLoggedIn(t *testing.T) {
	env := servertest.New(t)
	c := clitest.New(t, env)
	ctx := context.Background()
	table := output.Options{Format: "table"}
	runs := map[string]func() error{
		"list": func() error { return listRun(ctx, listOpts(c)) },
		"get": func() error {
			return getRun(ctx, &GetOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "1", Output: table})
		},
		"create": func() error { return createRun(ctx, &CreateOptions{IO: c.IO, APIClient: c.F.APIClient, Output: table}) },
		"update": func() error {
			return updateRun(ctx, &UpdateOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "1", Output: table, Input: api.VehicleInput{Label: api.Some("x")}})
		},
		"delete": func() error {
			return deleteRun(ctx, &DeleteOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "1", Yes: true})
		},
	}
	for name, run := range runs {
		t.Run(name, func(t *testing.T) {
			err := run()
			if code := cmdutil.ExitCode(err); code != cmdutil.ExitAuth {
				t.Errorf("exit code %d for %v, want 4", code, err)
			}
			if err == nil || !strings.Contains(err.Error(), "vcs login") {
				t.Errorf("error %v does not say how to log in", err)
			}
		})
	}
	if r := env.Do("GET", "/vehicle/1", env.DemoToken(), nil); r.Status != 200 {
		t.Errorf("vehicle 1 is gone after commands that were not logged in: %d", r.Status)
	}
}

func TestTokenWithoutStoredCredentials(t *testing.T) {
	env := servertest.New(t)
	ctx := context.Background()

	t.Run("--token", func(t *testing.T) {
		c := clitest.New(t, env)
		c.F.Globals.Token = env.DemoToken()
		if err := listRun(ctx, listOpts(c, "--jq", ".[].vehicleId")); err != nil {
			t.Fatal(err)
		}
		if got := c.Stdout.String(); got != "1\n2\n3\n" {
			t.Errorf("stdout = %q", got)
		}
		if _, err := c.Session(t).Load(ctx); cmdutil.ExitCode(err) != cmdutil.ExitAuth {
			t.Errorf("--token stored credentials: %v", err)
		}
	})
	t.Run("VCS_TOKEN", func(t *testing.T) {
		c := clitest.New(t, env)
		tok := env.DemoToken()
		cfg, err := config.Load(c.ConfigDir, func(k string) string {
			switch k {
			case config.EnvBaseURL:
				return env.URL
			case config.EnvToken:
				return tok
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		c.F.Config = func() (*config.Config, error) { return cfg, nil }
		if err := getRun(ctx, &GetOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "3", Output: output.Options{JQ: ".label", Format: "table"}}); err != nil {
			t.Fatal(err)
		}
		if got := c.Stdout.String(); got != "Family Subaru\n" {
			t.Errorf("stdout = %q", got)
		}
	})
	t.Run("rejected token", func(t *testing.T) {
		c := clitest.New(t, env)
		c.F.Globals.Token = "not-a-real-token"
		err := listRun(ctx, listOpts(c))
		if code := cmdutil.ExitCode(err); code != cmdutil.ExitAuth {
			t.Errorf("exit code %d for %v, want 4", code, err)
		}
		if err == nil || !strings.HasPrefix(err.Error(), "list vehicles: ") {
			t.Errorf("error = %v", err)
		}
	})
}
