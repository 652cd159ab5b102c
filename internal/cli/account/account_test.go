package account

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/connected-vehicle/vcs/internal/golden"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/cli/clitest"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/output"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

// matchGolden compares got, less what changes from run to run, with testdata/name.
func matchGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name, golden.ScrubDateTimes(got))
}

// parseOpts says how parse runs a command.
type parseOpts struct {
	stdin string
	tty   bool // stdin and stdout are terminals
}

// parse runs a command's flag parsing (see clitest.Parse).
func parse[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *O) error) *cobra.Command, p parseOpts, args ...string) (*O, error) {
	t.Helper()
	return clitest.Parse(t, newCmd, clitest.ParseOptions{Stdin: p.stdin, TTY: p.tty}, args...)
}

// withPick adapts the commands that take the --as-client client picker.
func withPick[O any](newCmd func(*cmdutil.Factory, apiClientFunc, func(context.Context, *O) error) *cobra.Command) func(*cmdutil.Factory, func(context.Context, *O) error) *cobra.Command {
	return func(f *cmdutil.Factory, runF func(context.Context, *O) error) *cobra.Command {
		return newCmd(f, f.APIClient, runF)
	}
}

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

// run executes `vcs account ARGS` with the CLI's real factory.
func run(t *testing.T, c *clitest.CLI, stdin string, args ...string) error {
	t.Helper()
	c.Stdin.Reset()
	c.Stdin.WriteString(stdin)
	cmd := NewCmdAccount(c.F)
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })
	return cmd.Execute()
}

func loggedIn(t *testing.T) (*servertest.Env, *clitest.CLI) {
	t.Helper()
	env := servertest.New(t)
	c := clitest.New(t, env)
	c.LoginDemo(t, env)
	c.Reset()
	return env, c
}

// ann is a complete account for creation.
func ann() api.AccountInput {
	return api.AccountInput{
		FirstName: api.Some("Ann"), LastName: api.Some("Lee"), Zipcode: api.Some("33602"),
		Email: api.Some("ann@example.com"), TimeZone: api.Some("America/New_York"),
		PreferredContact: api.Some("EMAIL"), Username: api.Some("ann"), Password: api.Some("ann-password-1"),
	}
}

func createOpts(c *clitest.CLI, format string, in api.AccountInput) *CreateOptions {
	return &CreateOptions{IO: c.IO, ClientAPIClient: c.F.ClientAPIClient, Session: c.F.Session,
		Output: output.Options{Format: format}, Input: in}
}

// createAnn creates the account ann with the development client and returns its id.
func createAnn(t *testing.T, c *clitest.CLI) int64 {
	t.Helper()
	c.Reset()
	if err := createRun(context.Background(), createOpts(c, "json", ann())); err != nil {
		t.Fatal(err)
	}
	var a api.Account
	if err := json.Unmarshal(c.Stdout.Bytes(), &a); err != nil {
		t.Fatalf("%v in %s", err, c.Stdout)
	}
	c.Reset()
	return a.ID
}

func TestNewCmdList(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    ListOptions
		wantErr string
	}{
		{name: "defaults", want: ListOptions{List: cmdutil.ListFlags{Limit: 50}, Output: output.Options{Format: "table"}}},
		{name: "flags", args: []string{"--all", "-L", "500", "--offset", "3", "-o", "json", "--jq", ".[].id"},
			want: ListOptions{List: cmdutil.ListFlags{All: true, Limit: 500, Offset: 3}, Output: output.Options{Format: "json", JQ: ".[].id"}}},
		{name: "limit 0", args: []string{"--limit", "0"}, wantErr: "--limit must be from 1 to 500"},
		{name: "limit 501", args: []string{"--limit", "501"}, wantErr: "--limit must be from 1 to 500"},
		{name: "negative offset", args: []string{"--offset", "-2"}, wantErr: "--offset must not be negative"},
		{name: "yaml and jq", args: []string{"-o", "yaml", "--jq", ".[]"}, wantErr: "--jq filters JSON"},
		{name: "unknown flag", args: []string{"--password", "x"}, wantErr: "unknown flag: --password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(t, withPick(newCmdList), parseOpts{}, tt.args...)
			if tt.wantErr != "" {
				wantUsageError(t, err, tt.wantErr)
				if got != nil {
					t.Error("the run function was called")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.List.All != tt.want.List.All || got.List.Limit != tt.want.List.Limit || got.List.Offset != tt.want.List.Offset || got.Output != tt.want.Output {
				t.Errorf("got all %v limit %d offset %d %+v, want %+v", got.List.All, got.List.Limit, got.List.Offset, got.Output, tt.want)
			}
		})
	}
}

func TestNewCmdGetAndDelete(t *testing.T) {
	tests := []struct {
		name    string
		cmd     string
		args    []string
		wantID  int64
		wantYes bool
		wantErr string
	}{
		{name: "own account", cmd: "get", wantID: 0},
		{name: "by id", cmd: "get", args: []string{"5", "-o", "yaml"}, wantID: 5},
		{name: "id not a number", cmd: "get", args: []string{"ann"}, wantErr: `account id "ann" must be a positive integer`},
		{name: "id zero", cmd: "get", args: []string{"0"}, wantErr: "must be a positive integer"},
		{name: "two ids", cmd: "get", args: []string{"1", "2"}, wantErr: "too many arguments"},
		{name: "delete asks", cmd: "delete", args: []string{"5"}, wantID: 5},
		{name: "delete yes", cmd: "delete", args: []string{"5", "-y"}, wantID: 5, wantYes: true},
		{name: "delete no id", cmd: "delete", args: []string{"--yes"}, wantErr: "give the account id"},
		{name: "delete bad id", cmd: "delete", args: []string{"x1", "--yes"}, wantErr: "must be a positive integer"},
		{name: "delete two ids", cmd: "delete", args: []string{"1", "2"}, wantErr: "too many arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var id int64
			var yes, ran bool
			var err error
			if tt.cmd == "get" {
				var got *GetOptions
				got, err = parse(t, withPick(newCmdGet), parseOpts{}, tt.args...)
				if got != nil {
					id, ran = got.ID, true
				}
			} else {
				var got *DeleteOptions
				got, err = parse(t, withPick(newCmdDelete), parseOpts{}, tt.args...)
				if got != nil {
					id, yes, ran = got.ID, got.Yes, true
				}
			}
			if tt.wantErr != "" {
				wantUsageError(t, err, tt.wantErr)
				if ran {
					t.Error("the run function was called")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id != tt.wantID || yes != tt.wantYes {
				t.Errorf("id %d yes %v, want %d %v", id, yes, tt.wantID, tt.wantYes)
			}
		})
	}
}

func TestNewCmdCreate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ann.json")
	if err := os.WriteFile(file, []byte(`{"firstName": "Ann", "lastName": "Lee", "zipcode": "33602", "timeZone": "America/New_York",
		"preferredContact": "EMAIL", "username": "ann", "email": "ann@example.com", "password": "from-the-file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	noPassword := filepath.Join(dir, "nopw.json")
	if err := os.WriteFile(noPassword, []byte(`{"firstName": "Bo", "username": "bo"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	unknown := filepath.Join(dir, "unknown.json")
	if err := os.WriteFile(unknown, []byte(`{"firstName": "Bo", "nickname": "b"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile := ann()
	fromFile.Password = api.Some("from-the-file")

	tests := []struct {
		name      string
		args      []string
		p         parseOpts
		want      api.AccountInput
		wantLogin bool
		wantErr   string
	}{
		{name: "flags and password on stdin",
			args: []string{"--first-name", "Ann", "--last-name", "Lee", "--zipcode", "33602", "--email", "ann@example.com",
				"--time-zone", "America/New_York", "--preferred-contact", "email", "--username", "ann", "--password-stdin"},
			p: parseOpts{stdin: "ann-password-1\nsecond line\n"}, want: ann()},
		{name: "password keeps its spaces, not its line ending", args: []string{"--password-stdin", "--username", "x"},
			p: parseOpts{stdin: " two words \r\n"}, want: api.AccountInput{Username: api.Some("x"), Password: api.Some(" two words ")}},
		{name: "password without a line ending", args: []string{"--password-stdin"},
			p: parseOpts{stdin: "no-newline"}, want: api.AccountInput{Password: api.Some("no-newline")}},
		{name: "file with the password", args: []string{"-f", file}, want: fromFile},
		{name: "flags override the file", args: []string{"-f", file, "--username", "ann2", "--email", "", "--login"},
			want: func() api.AccountInput {
				in := fromFile
				in.Username, in.Email = api.Some("ann2"), api.Null[string]()
				return in
			}(), wantLogin: true},
		{name: "file from stdin", args: []string{"-f", "-"}, p: parseOpts{stdin: `{"username": "cy", "password": "cy-password"}`},
			want: api.AccountInput{Username: api.Some("cy"), Password: api.Some("cy-password")}},
		{name: "file and password on stdin", args: []string{"-f", noPassword, "--password-stdin"}, p: parseOpts{stdin: "bo-password\n"},
			want: api.AccountInput{FirstName: api.Some("Bo"), Username: api.Some("bo"), Password: api.Some("bo-password")}},
		{name: "password is never a flag", args: []string{"--username", "ann", "--password", "secret"}, wantErr: "unknown flag: --password"},
		{name: "password is never a flag, with =", args: []string{"--password=secret"}, wantErr: "unknown flag: --password"},
		{name: "no password and no terminal", args: []string{"--username", "ann"}, wantErr: "--password-stdin"},
		{name: "a terminal that is not a file cannot hide the password", args: []string{"--username", "ann"}, p: parseOpts{tty: true}, wantErr: "no terminal"},
		{name: "empty stdin", args: []string{"--password-stdin"}, wantErr: "no password on standard input"},
		{name: "empty first line", args: []string{"--password-stdin"}, p: parseOpts{stdin: "\nsecret\n"}, wantErr: "no password on standard input"},
		{name: "stdin read twice", args: []string{"-f", "-", "--password-stdin"}, p: parseOpts{stdin: "{}"}, wantErr: "both read stdin"},
		{name: "unknown member", args: []string{"-f", unknown, "--password-stdin"}, p: parseOpts{stdin: "pw-pw-pw-pw\n"}, wantErr: `unknown field "nickname"`},
		{name: "file with no password and no terminal", args: []string{"-f", noPassword}, wantErr: "--password-stdin"},
		{name: "bad output", args: []string{"-f", file, "-o", "toml"}, wantErr: "unknown output format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(t, NewCmdCreate, tt.p, tt.args...)
			if tt.wantErr != "" {
				wantUsageError(t, err, tt.wantErr)
				if got != nil {
					t.Error("the run function was called")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Input != tt.want {
				t.Errorf("input = %+v\nwant    %+v", got.Input, tt.want)
			}
			if got.Login != tt.wantLogin {
				t.Errorf("login = %v", got.Login)
			}
		})
	}
	cmd := NewCmdCreate(&cmdutil.Factory{IOStreams: &iostreams.IOStreams{}}, nil)
	if cmd.Flags().Lookup("password") != nil {
		t.Error("create has a --password flag")
	}
}

func TestNewCmdUpdate(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		p       parseOpts
		wantID  int64
		want    api.AccountInput
		wantErr string
	}{
		{name: "phone", args: []string{"5", "--phone", "+1 813 555 0100"}, wantID: 5, want: api.AccountInput{Phone: api.Some("+1 813 555 0100")}},
		{name: "clear email", args: []string{"1", "--email", ""}, wantID: 1, want: api.AccountInput{Email: api.Null[string]()}},
		{name: "contact upper-cased", args: []string{"1", "--preferred-contact", "phone"}, wantID: 1, want: api.AccountInput{PreferredContact: api.Some("PHONE")}},
		{name: "new password on stdin", args: []string{"1", "--password-stdin"}, p: parseOpts{stdin: "new-password-1\n"}, wantID: 1,
			want: api.AccountInput{Password: api.Some("new-password-1")}},
		{name: "file from stdin", args: []string{"2", "-f", "-"}, p: parseOpts{stdin: `{"lastName": "Lee-Smith", "phone": null}`}, wantID: 2,
			want: api.AccountInput{LastName: api.Some("Lee-Smith"), Phone: api.Null[string]()}},
		{name: "nothing to change", args: []string{"1"}, wantErr: "nothing to change"},
		{name: "empty file changes nothing", args: []string{"1", "-f", "-"}, p: parseOpts{stdin: "{}"}, wantErr: "nothing to change"},
		{name: "no id", args: []string{"--phone", "12345"}, wantErr: "give the account id"},
		{name: "bad id", args: []string{"me", "--phone", "12345"}, wantErr: "must be a positive integer"},
		{name: "password is never a flag", args: []string{"1", "--password", "x"}, wantErr: "unknown flag: --password"},
		{name: "change password without a terminal", args: []string{"1", "--change-password"}, wantErr: "--password-stdin"},
		{name: "change password two ways", args: []string{"1", "--change-password", "--password-stdin"}, p: parseOpts{stdin: "x\n"},
			wantErr: "--change-password and --password-stdin"},
		{name: "read-only member", args: []string{"1", "-f", "-"}, p: parseOpts{stdin: `{"dateCreated": "20260101T000000+0000"}`}, wantErr: "dateCreated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(t, withPick(newCmdUpdate), tt.p, tt.args...)
			if tt.wantErr != "" {
				wantUsageError(t, err, tt.wantErr)
				if got != nil {
					t.Error("the run function was called")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tt.wantID || got.Input != tt.want {
				t.Errorf("id %d input %+v\nwant %d %+v", got.ID, got.Input, tt.wantID, tt.want)
			}
		})
	}
	cmd := newCmdUpdate(&cmdutil.Factory{IOStreams: &iostreams.IOStreams{}}, nil, nil)
	if cmd.Flags().Lookup("password") != nil {
		t.Error("update has a --password flag")
	}
}

func TestListRun(t *testing.T) {
	_, c := loggedIn(t)
	ctx := context.Background()
	opts := func(format, jq string) *ListOptions {
		return &ListOptions{List: cmdutil.ListFlags{Limit: 50}, IO: c.IO, APIClient: c.F.APIClient, Output: output.Options{Format: format, JQ: jq}}
	}

	c.IO.SetStdoutTTY(true)
	if err := listRun(ctx, opts("table", "")); err != nil {
		t.Fatal(err)
	}
	matchGolden(t, "list.tty.golden", c.Stdout.String())
	if c.Stderr.Len() != 0 {
		t.Errorf("stderr = %q", c.Stderr)
	}

	c.Reset()
	c.IO.SetStdoutTTY(false)
	if err := listRun(ctx, opts("table", "")); err != nil {
		t.Fatal(err)
	}
	matchGolden(t, "list.tsv.golden", c.Stdout.String())

	c.Reset()
	if err := listRun(ctx, opts("json", "")); err != nil {
		t.Fatal(err)
	}
	var accounts []api.Account
	if err := json.Unmarshal(c.Stdout.Bytes(), &accounts); err != nil {
		t.Fatalf("%v in %s", err, c.Stdout)
	}
	if len(accounts) != 1 || accounts[0].ID != 1 || accounts[0].Username != "demo" || accounts[0].AccessToken != nil {
		t.Errorf("-o json = %+v", accounts)
	}
	if strings.Contains(c.Stdout.String(), "password") {
		t.Errorf("the password shows:\n%s", c.Stdout)
	}

	c.Reset()
	if err := listRun(ctx, opts("yaml", "")); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Stdout.String(), "- id: 1\n  firstName: Dana\n  lastName: Demo\n") {
		t.Errorf("-o yaml does not keep the members' order:\n%s", c.Stdout)
	}

	c.Reset()
	if err := listRun(ctx, opts("table", ".[] | [.username, .id]")); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != `["demo",1]`+"\n" {
		t.Errorf("--jq = %q", got)
	}
}

func TestAsClient(t *testing.T) {
	env, c := loggedIn(t)
	id := createAnn(t, c)
	if id != 2 {
		t.Fatalf("ann is account %d, want 2", id)
	}
	// An account another client created: the development client must not see it.
	other := env.Server.OAuth
	if _, err := other.EnsureClient(context.Background(), "other", "other-secret-123", "other", []string{"http://127.0.0.1/callback"}); err != nil {
		t.Fatal(err)
	}
	in := ann()
	in.Username = api.Some("stranger")
	if r := env.Do("POST", "/account/", env.ClientTokenFor("other", "other-secret-123"), in); r.Status != 200 && r.Status != 201 {
		t.Fatalf("create stranger: %d %s", r.Status, r.Body)
	}

	if err := run(t, c, "", "list", "--as-client", "--jq", ".[].username"); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "demo\nann\n" {
		t.Errorf("list --as-client = %q, want the accounts the development client created", got)
	}

	c.Reset()
	c.IO.SetStdoutTTY(true)
	if err := run(t, c, "", "list", "--as-client", "--limit", "1"); err != nil {
		t.Fatal(err)
	}
	c.IO.SetStdoutTTY(false)
	matchGolden(t, "list-as-client.tty.golden", c.Stdout.String())
	if !strings.Contains(c.Stderr.String(), "Showing 1 of 2 accounts; use --all for every one.") {
		t.Errorf("stderr = %q", c.Stderr)
	}

	c.Reset()
	if err := run(t, c, "", "list", "--as-client", "--all", "--limit", "1", "--jq", ".[].id"); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "1\n2\n" {
		t.Errorf("list --as-client --all --limit 1 = %q", got)
	}

	// Without --as-client, the login sees only its own account.
	c.Reset()
	if err := run(t, c, "", "list", "--jq", ".[].username"); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "demo\n" {
		t.Errorf("list = %q", got)
	}

	c.Reset()
	if err := run(t, c, "", "get", "2", "--as-client", "--jq", ".username"); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "ann\n" {
		t.Errorf("get 2 --as-client = %q", got)
	}

	c.Reset()
	err := run(t, c, "", "get", "--as-client")
	wantUsageError(t, err, "this token sees 2 accounts: give an account id")

	c.Reset()
	err = run(t, c, "", "get", "3", "--as-client")
	if err == nil || !strings.Contains(err.Error(), "get account 3: account not found") || cmdutil.ExitCode(err) != cmdutil.ExitError {
		t.Errorf("another client's account: %v (exit code %d)", err, cmdutil.ExitCode(err))
	}
}

func TestGetRun(t *testing.T) {
	env, c := loggedIn(t)
	ctx := context.Background()
	createAnn(t, c)

	t.Run("own account without an id", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdoutTTY(true)
		defer c.IO.SetStdoutTTY(false)
		if err := getRun(ctx, &GetOptions{IO: c.IO, APIClient: c.F.APIClient, Output: output.Options{Format: "table"}}); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "get.tty.golden", c.Stdout.String())
	})
	t.Run("by id, piped", func(t *testing.T) {
		c.Reset()
		if err := getRun(ctx, &GetOptions{IO: c.IO, APIClient: c.F.APIClient, ID: 1, Output: output.Options{Format: "table"}}); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "get.tsv.golden", c.Stdout.String())
	})
	t.Run("json matches the service", func(t *testing.T) {
		c.Reset()
		if err := getRun(ctx, &GetOptions{IO: c.IO, APIClient: c.F.APIClient, Output: output.Options{Format: "json"}}); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Account api.Account `json:"account"`
		}
		env.Do("GET", "/account/1", env.DemoToken(), nil).JSON(t, &got)
		want, _ := json.Marshal(got.Account)
		var printed api.Account
		if err := json.Unmarshal(c.Stdout.Bytes(), &printed); err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(printed); string(b) != string(want) {
			t.Errorf("printed %s\nservice %s", b, want)
		}
	})
	for _, id := range []int64{2, 999} {
		t.Run("not visible", func(t *testing.T) {
			c.Reset()
			err := getRun(ctx, &GetOptions{IO: c.IO, APIClient: c.F.APIClient, ID: id, Output: output.Options{Format: "table"}})
			var apiErr *api.Error
			if !errors.As(err, &apiErr) || apiErr.Status() != 404 {
				t.Fatalf("get %d: %v", id, err)
			}
			if want := "get account " + strconv.FormatInt(id, 10) + ": account not found"; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
			if cmdutil.ExitCode(err) != cmdutil.ExitError {
				t.Errorf("exit code %d", cmdutil.ExitCode(err))
			}
		})
	}
}
