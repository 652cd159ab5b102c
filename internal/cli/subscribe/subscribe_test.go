package subscribe

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/connected-vehicle/vcs/internal/golden"

	"github.com/spf13/cobra"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/cli/clitest"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/output"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

// matchGolden compares got, less what changes from run to run, with testdata/name.
func matchGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name, scrub(got))
}

var (
	dateTimes = regexp.MustCompile(`\d{8}T\d{6}[+-]\d{4}`)
	ports     = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	secrets   = regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`)
)

// scrub replaces the values that change from run to run.
func scrub(s string) string {
	s = dateTimes.ReplaceAllString(s, "<datetime>")
	s = ports.ReplaceAllString(s, "127.0.0.1:<port>")
	return secrets.ReplaceAllString(s, "whsec_<secret>")
}

// parse runs a command's flag parsing (see clitest.Parse).
func parse[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	return clitest.Parse(t, newCmd, clitest.ParseOptions{}, args...)
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

// loggedIn starts the service and a CLI logged in as the demo user.
func loggedIn(t *testing.T) (*servertest.Env, *clitest.CLI) {
	t.Helper()
	env := servertest.New(t)
	c := clitest.New(t, env)
	c.LoginDemo(t, env)
	c.Reset()
	return env, c
}

// receiver is a webhook endpoint that verifies what it gets and answers status.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	secret string
	got    []api.NotificationBody
	errs   []error
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{status: status}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if wh, err := standardwebhooks.NewWebhook(r.secret); err != nil {
			r.errs = append(r.errs, err)
		} else if err := wh.Verify(body, req.Header); err != nil {
			r.errs = append(r.errs, err)
		}
		if got := req.Header.Get("X-Team"); got != "fleet" {
			r.errs = append(r.errs, errors.New("X-Team header = "+got))
		}
		var n api.NotificationBody
		if err := json.Unmarshal(body, &n); err != nil {
			r.errs = append(r.errs, err)
		}
		r.got = append(r.got, n)
		w.WriteHeader(r.status)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) setSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret = s
}

func (r *receiver) received() ([]api.NotificationBody, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]api.NotificationBody(nil), r.got...), append([]error(nil), r.errs...)
}

// serviceSubscription is what the service has for a subscription of the demo user's client.
func serviceSubscription(t *testing.T, env *servertest.Env, vehicle string, id int64) api.Subscription {
	t.Helper()
	r := env.Do("GET", "/vehicle/"+vehicle+"/eventSubscription/"+strconv.FormatInt(id, 10), env.DemoToken(), nil)
	if r.Status != 200 {
		t.Fatalf("get subscription %d: %d %s", id, r.Status, r.Body)
	}
	var body struct {
		Subscription api.Subscription `json:"subscription"`
	}
	r.JSON(t, &body)
	return body.Subscription
}

// createSubscription subscribes through the service's API.
func createSubscription(t *testing.T, env *servertest.Env, tok, vehicle, postURL string, headers map[string]string) api.Subscription {
	t.Helper()
	in := map[string]any{"postUrl": postURL, "minimumTime": 0, "notificationPeriod": "CONTINUOUS"}
	if headers != nil {
		in["postHeaders"] = headers
	}
	r := env.Do("POST", "/vehicle/"+vehicle+"/eventSubscription/WAYPOINT/", tok, in)
	if r.Status != 200 {
		t.Fatalf("create subscription: %d %s", r.Status, r.Body)
	}
	var body struct {
		Subscription api.Subscription `json:"subscription"`
	}
	r.JSON(t, &body)
	return body.Subscription
}

func TestNewCmdCreate(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    CreateOptions
		wantErr string
	}{
		{name: "minimal", args: []string{"3", "--post-url", "https://example.com/h"},
			want: CreateOptions{Ref: "3", PostURL: "https://example.com/h", Period: "CONTINUOUS", Output: output.Options{Format: "table"}}},
		{name: "every flag", args: []string{"C2015000003", "--post-url=https://example.com/h", "-H", "Authorization: Bearer abc",
			"--header", "X-Team:fleet", "--minimum-time", "5", "--period", "onetime", "-o", "json"},
			want: CreateOptions{Ref: "C2015000003", PostURL: "https://example.com/h", MinimumTime: 5, Period: "ONETIME",
				Headers: map[string]string{"Authorization": "Bearer abc", "X-Team": "fleet"}, Output: output.Options{Format: "json"}}},
		{name: "flags before the vehicle", args: []string{"--post-url", "https://example.com/h", "-H", "A: b", "2"},
			want: CreateOptions{Ref: "2", PostURL: "https://example.com/h", Period: "CONTINUOUS", Headers: map[string]string{"A": "b"}, Output: output.Options{Format: "table"}}},
		{name: "value keeps inner colons and spaces", args: []string{"1", "--post-url", "https://e.x", "-H", "X-Url:  http://a:8/b c "},
			want: CreateOptions{Ref: "1", PostURL: "https://e.x", Period: "CONTINUOUS", Headers: map[string]string{"X-Url": "http://a:8/b c"}, Output: output.Options{Format: "table"}}},
		{name: "no post url", args: []string{"3"}, wantErr: "--post-url is required"},
		{name: "blank post url", args: []string{"3", "--post-url", " "}, wantErr: "--post-url is required"},
		{name: "no vehicle", args: []string{"--post-url", "https://e.x"}, wantErr: "give the vehicle's id or device serial, or a command"},
		{name: "two vehicles", args: []string{"1", "2", "--post-url", "https://e.x"}, wantErr: "too many arguments"},
		{name: "header without colon", args: []string{"1", "--post-url", "https://e.x", "-H", "Authorization Bearer x"}, wantErr: "write a header as 'Name: value'"},
		{name: "header with space in name", args: []string{"1", "--post-url", "https://e.x", "-H", "X Team: a"}, wantErr: `"X Team" is not a valid header name`},
		{name: "header without name", args: []string{"1", "--post-url", "https://e.x", "-H", ": a"}, wantErr: `"" is not a valid header name`},
		{name: "header without value", args: []string{"1", "--post-url", "https://e.x", "-H", "X-Team:  "}, wantErr: "the header has no value"},
		{name: "header value with a control character", args: []string{"1", "--post-url", "https://e.x", "-H", "X-Team: a\x01b"}, wantErr: "characters a header cannot carry"},
		{name: "header twice", args: []string{"1", "--post-url", "https://e.x", "-H", "X-Team: a", "-H", "x-team: b"}, wantErr: "-H x-team is given twice"},
		{name: "bad period", args: []string{"1", "--post-url", "https://e.x", "--period", "WEEKLY"}, wantErr: `--period must be CONTINUOUS or ONETIME, not "WEEKLY"`},
		{name: "minimum time not a number", args: []string{"1", "--post-url", "https://e.x", "--minimum-time", "soon"}, wantErr: "invalid argument"},
		{name: "bad format", args: []string{"1", "--post-url", "https://e.x", "-o", "xml"}, wantErr: "unknown output format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(t, newCmdCreate, tt.args...)
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
			gotJ, _ := json.Marshal(got.Headers)
			wantJ, _ := json.Marshal(tt.want.Headers)
			if got.Ref != tt.want.Ref || got.PostURL != tt.want.PostURL || got.MinimumTime != tt.want.MinimumTime ||
				got.Period != tt.want.Period || string(gotJ) != string(wantJ) || got.Output != tt.want.Output {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestNewCmdManage(t *testing.T) {
	t.Run("list", func(t *testing.T) {
		got, err := parse(t, NewCmdList, "3", "--all", "-L", "7", "--offset", "2", "--desc", "-o", "yaml")
		if err != nil {
			t.Fatal(err)
		}
		if got.Ref != "3" || !got.All || got.Limit != 7 || got.Offset != 2 || !got.Desc || got.Output.Format != "yaml" {
			t.Errorf("options = %+v", *got)
		}
		_, err = parse(t, NewCmdList, "3", "-L", "0")
		wantUsageError(t, err, "--limit must be from 1 to 500")
		_, err = parse(t, NewCmdList, "3", "--offset", "-1")
		wantUsageError(t, err, "--offset must not be negative")
		_, err = parse(t, NewCmdList)
		wantUsageError(t, err, "give the vehicle's id or device serial")
	})
	t.Run("get", func(t *testing.T) {
		got, err := parse(t, NewCmdGet, "C2015000003", "17", "--jq", ".postUrl")
		if err != nil {
			t.Fatal(err)
		}
		if got.Ref != "C2015000003" || got.ID != 17 || got.Output.JQ != ".postUrl" {
			t.Errorf("options = %+v", *got)
		}
		_, err = parse(t, NewCmdGet, "3")
		wantUsageError(t, err, "give the vehicle's id or device serial and the subscription's id")
		_, err = parse(t, NewCmdGet, "3", "x7")
		wantUsageError(t, err, `subscription id "x7" must be a positive integer`)
		_, err = parse(t, NewCmdGet, "3", "0")
		wantUsageError(t, err, `subscription id "0" must be a positive integer`)
	})
	t.Run("delete", func(t *testing.T) {
		got, err := parse(t, NewCmdDelete, "3", "17", "-y")
		if err != nil {
			t.Fatal(err)
		}
		if got.Ref != "3" || got.ID != 17 || !got.Yes {
			t.Errorf("options = %+v", *got)
		}
		_, err = parse(t, NewCmdDelete, "3", "17", "18")
		wantUsageError(t, err, "too many arguments")
	})
	t.Run("test", func(t *testing.T) {
		got, err := parse(t, NewCmdTest, "3", "17", "-o", "json")
		if err != nil {
			t.Fatal(err)
		}
		if got.Ref != "3" || got.ID != 17 || got.Output.Format != "json" {
			t.Errorf("options = %+v", *got)
		}
		_, err = parse(t, NewCmdTest, "3", "-2")
		wantUsageError(t, err, "unknown shorthand flag")
	})
}

// TestSubcommandsAndCreate runs the real command tree: a subcommand name as the first
// argument runs the subcommand, anything else is a vehicle to subscribe to.
func TestSubcommandsAndCreate(t *testing.T) {
	env, c := loggedIn(t)
	run := func(args ...string) error {
		c.Reset()
		cmd := NewCmdSubscribe(c.F)
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })
		return cmd.ExecuteContext(context.Background())
	}

	if err := run("3", "--post-url", "https://example.com/a", "-o", "json"); err != nil {
		t.Fatal(err)
	}
	var sub api.Subscription
	if err := json.Unmarshal(c.Stdout.Bytes(), &sub); err != nil || sub.VehicleID != 3 || sub.PostURL != "https://example.com/a" {
		t.Fatalf("subscribe 3 printed %s (%v)", c.Stdout, err)
	}
	if err := run("--post-url", "https://example.com/b", "C2015000003", "--jq", ".id"); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != strconv.FormatInt(sub.ID+1, 10)+"\n" {
		t.Errorf("subscribe by serial printed %q, want the next id", got)
	}

	if err := run("list", "3", "--jq", ".[].postUrl"); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "https://example.com/a\nhttps://example.com/b\n" {
		t.Errorf("subscribe list 3 = %q", got)
	}
	if err := run("get", "3", strconv.FormatInt(sub.ID, 10), "--jq", ".postUrl"); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "https://example.com/a\n" {
		t.Errorf("subscribe get = %q", got)
	}
	if err := run("delete", "3", strconv.FormatInt(sub.ID, 10), "--yes"); err != nil {
		t.Fatal(err)
	}
	if s := serviceSubscription(t, env, "3", sub.ID); s.DeletionTimestamp == nil {
		t.Errorf("subscribe delete left subscription %d undeleted", sub.ID)
	}
	// Flags of create do not belong to the subcommands.
	wantUsageError(t, run("list", "3", "--post-url", "https://e.x"), "unknown flag: --post-url")
	wantUsageError(t, run("3"), "--post-url is required")
	if n := len(serviceSubscriptions(t, env, "3")); n != 2 {
		t.Errorf("the service has %d subscriptions of vehicle 3, want the 2 created", n)
	}
}

func serviceSubscriptions(t *testing.T, env *servertest.Env, vehicle string) []api.Subscription {
	t.Helper()
	r := env.Do("GET", "/vehicle/"+vehicle+"/eventSubscription/?searchLimit=500", env.DemoToken(), nil)
	var body struct {
		Subscriptions []api.Subscription `json:"subscriptions"`
	}
	r.JSON(t, &body)
	return body.Subscriptions
}

func createOpts(c *clitest.CLI, ref, postURL string) *CreateOptions {
	return &CreateOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: ref, PostURL: postURL, Period: "CONTINUOUS",
		Output: output.Options{Format: output.FormatTable}}
}

func TestCreateRun(t *testing.T) {
	env, c := loggedIn(t)
	ctx := context.Background()

	t.Run("tty block with the secret", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdoutTTY(true)
		defer c.IO.SetStdoutTTY(false)
		opts := createOpts(c, "C2015000002", "http://127.0.0.1:9/hook")
		opts.Headers = map[string]string{"Authorization": "Bearer hunter2", "X-Team": "fleet"}
		opts.MinimumTime = 5
		if err := createRun(ctx, opts); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "create.tty.golden", c.Stdout.String())
		sub := serviceSubscription(t, env, "2", 1)
		if !strings.Contains(c.Stdout.String(), "Signing secret  "+sub.SigningSecret+"\n") {
			t.Errorf("the block does not show the subscription's signing secret:\n%s", c.Stdout)
		}
		if strings.Contains(c.Stdout.String(), "hunter2") {
			t.Errorf("the Authorization header's value is printed:\n%s", c.Stdout)
		}
		if sub.PostHeaders["Authorization"] != "Bearer hunter2" || sub.MinimumTime != 5 || sub.VehicleID != 2 {
			t.Errorf("the service has %+v", sub)
		}
	})
	t.Run("piped tsv", func(t *testing.T) {
		c.Reset()
		opts := createOpts(c, "2", "http://127.0.0.1:9/other")
		opts.Period = "ONETIME"
		if err := createRun(ctx, opts); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "create.tsv.golden", c.Stdout.String())
		sub := serviceSubscription(t, env, "2", 2)
		if !strings.Contains(c.Stdout.String(), "signingSecret\t"+sub.SigningSecret+"\n") || sub.NotificationPeriod != "ONETIME" {
			t.Errorf("tsv %q, service %+v", c.Stdout, sub)
		}
	})
	t.Run("json is the object with its secret", func(t *testing.T) {
		c.Reset()
		opts := createOpts(c, "1", "https://example.com/hook")
		opts.Headers = map[string]string{"X-Api-Key": "k-123", "X-Team": "fleet"}
		opts.Output.Format = output.FormatJSON
		if err := createRun(ctx, opts); err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(c.Stdout.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		sub := serviceSubscription(t, env, "1", 3)
		headers, _ := got["postHeaders"].(map[string]any)
		if got["id"] != float64(3) || got["signingSecret"] != sub.SigningSecret || got["_type"] != "WAYPOINT" ||
			headers["X-Team"] != "fleet" || headers["X-Api-Key"] != "<redacted>" {
			t.Errorf("-o json = %s", c.Stdout)
		}
		if c.Stderr.Len() != 0 {
			t.Errorf("stderr = %q", c.Stderr)
		}
	})
	t.Run("the service's field errors", func(t *testing.T) {
		c.Reset()
		opts := createOpts(c, "1", "ftp://example.com/hook")
		opts.MinimumTime = 99999
		opts.Headers = map[string]string{"Content-Type": "text/plain"}
		err := createRun(ctx, opts)
		var apiErr *api.Error
		if !errors.As(err, &apiErr) || apiErr.Status() != 400 || cmdutil.ExitCode(err) != cmdutil.ExitError {
			t.Fatalf("err = %v, want the service's 400", err)
		}
		for _, want := range []string{"subscribe to vehicle 1", "postUrl must use https", "minimumTime must be minutes from 0 to 10080",
			"Content-Type is set by the service"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		if c.Stdout.Len() != 0 {
			t.Errorf("stdout = %q", c.Stdout)
		}
	})
	t.Run("unknown vehicle", func(t *testing.T) {
		err := createRun(ctx, createOpts(c, "99", "https://example.com/hook"))
		if err == nil || !strings.Contains(err.Error(), "vehicle not found") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestListAndGetRun(t *testing.T) {
	env, c := loggedIn(t)
	ctx := context.Background()
	tok := env.DemoToken()
	first := createSubscription(t, env, tok, "3", "https://example.com/one", map[string]string{"Authorization": "Bearer hunter2", "X-Team": "fleet"})
	second := createSubscription(t, env, tok, "3", "http://127.0.0.1:9/two", nil)
	third := createSubscription(t, env, tok, "3", "https://example.com/three", nil)
	if r := env.Do("DELETE", "/vehicle/3/eventSubscription/"+strconv.FormatInt(second.ID, 10), tok, nil); r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	noSecrets := func(t *testing.T) {
		t.Helper()
		out := c.Stdout.String() + c.Stderr.String()
		for _, s := range []string{first.SigningSecret, second.SigningSecret, third.SigningSecret, "whsec_", "hunter2"} {
			if strings.Contains(out, s) {
				t.Errorf("the output shows a secret (%.10s...):\n%s", s, out)
			}
		}
	}
	list := func(mod func(*ListOptions)) *ListOptions {
		o := &ListOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "3", Limit: 50, Output: output.Options{Format: output.FormatTable}}
		if mod != nil {
			mod(o)
		}
		return o
	}

	t.Run("list tty", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdoutTTY(true)
		defer c.IO.SetStdoutTTY(false)
		if err := listRun(ctx, list(nil)); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "list.tty.golden", c.Stdout.String())
		noSecrets(t)
	})
	t.Run("list tsv", func(t *testing.T) {
		c.Reset()
		if err := listRun(ctx, list(nil)); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "list.tsv.golden", c.Stdout.String())
		lines := strings.Split(strings.TrimSuffix(c.Stdout.String(), "\n"), "\n")
		if len(lines) != 3 || strings.Count(lines[1], "\t") != 6 || !strings.HasPrefix(lines[1], strconv.FormatInt(second.ID, 10)+"\t3\t") {
			t.Errorf("want 3 rows of 7 cells, oldest first:\n%s", c.Stdout)
		}
		noSecrets(t)
	})
	t.Run("list json without secrets", func(t *testing.T) {
		c.Reset()
		if err := listRun(ctx, list(func(o *ListOptions) { o.Output.Format = output.FormatJSON })); err != nil {
			t.Fatal(err)
		}
		var got []map[string]any
		if err := json.Unmarshal(c.Stdout.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[1]["deletionTimestamp"] == nil || got[0]["deletionTimestamp"] != nil {
			t.Errorf("-o json = %s", c.Stdout)
		}
		for _, s := range got {
			if _, ok := s["signingSecret"]; ok {
				t.Errorf("subscription %v has a signingSecret member", s["id"])
			}
		}
		if h := got[0]["postHeaders"].(map[string]any); h["Authorization"] != "<redacted>" || h["X-Team"] != "fleet" {
			t.Errorf("postHeaders = %v", h)
		}
		noSecrets(t)
	})
	t.Run("list all, newest first, by pages", func(t *testing.T) {
		c.Reset()
		c.F.Globals.Debug = false
		err := listRun(ctx, list(func(o *ListOptions) { o.All, o.Limit, o.Desc, o.Output.JQ = true, 1, true, ".[].id" }))
		if err != nil {
			t.Fatal(err)
		}
		want := strconv.FormatInt(third.ID, 10) + "\n" + strconv.FormatInt(second.ID, 10) + "\n" + strconv.FormatInt(first.ID, 10) + "\n"
		if got := c.Stdout.String(); got != want {
			t.Errorf("--all --limit 1 --desc = %q, want %q", got, want)
		}
	})
	t.Run("one page on a terminal says there are more", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdoutTTY(true)
		defer c.IO.SetStdoutTTY(false)
		if err := listRun(ctx, list(func(o *ListOptions) { o.Limit = 2 })); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(c.Stderr.String(), "Showing 2 of 3 subscriptions; use --all for every one.") {
			t.Errorf("stderr = %q", c.Stderr)
		}
	})
	t.Run("list none", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdoutTTY(true)
		defer c.IO.SetStdoutTTY(false)
		if err := listRun(ctx, list(func(o *ListOptions) { o.Ref = "1" })); err != nil {
			t.Fatal(err)
		}
		if c.Stdout.Len() != 0 || c.Stderr.String() != "No subscriptions to vehicle 1.\n" {
			t.Errorf("stdout %q stderr %q", c.Stdout, c.Stderr)
		}
	})

	get := func(ref string, id int64, format string) *GetOptions {
		return &GetOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: ref, ID: id, Output: output.Options{Format: format}}
	}
	t.Run("get tty", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdoutTTY(true)
		defer c.IO.SetStdoutTTY(false)
		if err := getRun(ctx, get("C2015000003", first.ID, output.FormatTable)); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "get.tty.golden", c.Stdout.String())
		noSecrets(t)
	})
	t.Run("get tsv", func(t *testing.T) {
		c.Reset()
		if err := getRun(ctx, get("3", second.ID, output.FormatTable)); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "get.tsv.golden", c.Stdout.String())
		noSecrets(t)
	})
	t.Run("get yaml", func(t *testing.T) {
		c.Reset()
		if err := getRun(ctx, get("3", first.ID, output.FormatYAML)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(c.Stdout.String(), "postUrl: https://example.com/one\n") {
			t.Errorf("yaml:\n%s", c.Stdout)
		}
		noSecrets(t)
	})
	t.Run("get another vehicle's", func(t *testing.T) {
		err := getRun(ctx, get("2", first.ID, output.FormatTable))
		var apiErr *api.Error
		if !errors.As(err, &apiErr) || apiErr.Status() != 404 || !strings.Contains(err.Error(), "subscription not found") {
			t.Errorf("err = %v, want 404", err)
		}
	})
}

func TestDeleteRun(t *testing.T) {
	env, c := loggedIn(t)
	ctx := context.Background()
	tok := env.DemoToken()
	sub := createSubscription(t, env, tok, "1", "https://example.com/hook", nil)
	opts := func(yes bool) *DeleteOptions {
		return &DeleteOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "1", ID: sub.ID, Yes: yes}
	}

	t.Run("piped without --yes", func(t *testing.T) {
		c.Reset()
		wantUsageError(t, deleteRun(ctx, opts(false)), "--yes")
		if s := serviceSubscription(t, env, "1", sub.ID); s.DeletionTimestamp != nil {
			t.Error("deleted without confirmation")
		}
	})
	t.Run("declined on a terminal", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdinTTY(true)
		c.IO.SetStdoutTTY(true)
		defer func() { c.IO.SetStdinTTY(false); c.IO.SetStdoutTTY(false) }()
		c.Stdin.WriteString("n\n")
		if err := deleteRun(ctx, opts(false)); !errors.Is(err, cmdutil.ErrCancel) {
			t.Errorf("err = %v, want ErrCancel", err)
		}
		if !strings.Contains(c.Stderr.String(), "Delete subscription "+strconv.FormatInt(sub.ID, 10)+" of vehicle 1? [y/N]") {
			t.Errorf("stderr = %q", c.Stderr)
		}
		if s := serviceSubscription(t, env, "1", sub.ID); s.DeletionTimestamp != nil {
			t.Error("deleted though declined")
		}
	})
	t.Run("confirmed on a terminal", func(t *testing.T) {
		c.Reset()
		c.IO.SetStdinTTY(true)
		c.IO.SetStdoutTTY(true)
		defer func() { c.IO.SetStdinTTY(false); c.IO.SetStdoutTTY(false) }()
		c.Stdin.WriteString("y\n")
		if err := deleteRun(ctx, opts(false)); err != nil {
			t.Fatal(err)
		}
		if s := serviceSubscription(t, env, "1", sub.ID); s.DeletionTimestamp == nil {
			t.Error("not deleted")
		}
		if !strings.Contains(c.Stderr.String(), "Deleted subscription "+strconv.FormatInt(sub.ID, 10)+" of vehicle 1\n") {
			t.Errorf("stderr = %q", c.Stderr)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		o := opts(true)
		o.ID = 999
		err := deleteRun(ctx, o)
		var apiErr *api.Error
		if !errors.As(err, &apiErr) || apiErr.Status() != 404 {
			t.Errorf("err = %v, want 404", err)
		}
	})
}

func TestTestRun(t *testing.T) {
	env, c := loggedIn(t)
	ctx := context.Background()
	tok := env.DemoToken()
	// The vehicle's last waypoint is what a test notification carries.
	r := env.Do("POST", "/vehicle/2/dataSet/", tok, map[string]any{"timestamp": "20261122T023433+0000", "ignitionStatus": "RUNNING",
		"datum": []map[string]any{{"timestamp": "20261122T023433+0000", "key": "GEN_WAYPOINT", "value": "28.036441,-82.593687"}}})
	if r.Status != 200 {
		t.Fatalf("data set: %d %s", r.Status, r.Body)
	}
	opts := func(id int64, format string) *TestOptions {
		return &TestOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "2", ID: id, Output: output.Options{Format: format}}
	}

	t.Run("delivered", func(t *testing.T) {
		recv := newReceiver(t, http.StatusOK)
		sub := createSubscription(t, env, tok, "2", recv.URL+"/hook", map[string]string{"X-Team": "fleet"})
		recv.setSecret(sub.SigningSecret)
		c.Reset()
		c.IO.SetStdoutTTY(true)
		defer c.IO.SetStdoutTTY(false)
		if err := testRun(ctx, opts(sub.ID, output.FormatTable)); err != nil {
			t.Fatal(err)
		}
		matchGolden(t, "test.tty.golden", regexp.MustCompile(`\d+ms`).ReplaceAllString(c.Stdout.String(), "<n>ms"))
		got, errs := recv.received()
		if len(errs) != 0 || len(got) != 1 || got[0].SubscriptionID != sub.ID || got[0].RecordedWaypoint.Latitude != 28.036441 {
			t.Errorf("the receiver got %+v, errors %v", got, errs)
		}
		if !regexp.MustCompile(`(?m)^status +DELIVERED$`).MatchString(c.Stdout.String()) || !strings.Contains(c.Stdout.String(), "200 OK") {
			t.Errorf("stdout:\n%s", c.Stdout)
		}
	})
	t.Run("refused", func(t *testing.T) {
		recv := newReceiver(t, http.StatusServiceUnavailable)
		sub := createSubscription(t, env, tok, "2", recv.URL+"/hook", map[string]string{"X-Team": "fleet"})
		recv.setSecret(sub.SigningSecret)
		c.Reset()
		err := testRun(ctx, opts(sub.ID, output.FormatTable))
		if err == nil || cmdutil.ExitCode(err) != cmdutil.ExitError || !strings.Contains(err.Error(), "was not delivered: the receiver answered 503") {
			t.Errorf("err = %v, want a failure saying the receiver answered 503", err)
		}
		matchGolden(t, "test-refused.tsv.golden", regexp.MustCompile(`\d+ms`).ReplaceAllString(c.Stdout.String(), "<n>ms"))
		if got, _ := recv.received(); len(got) != 1 {
			t.Errorf("the receiver got %d requests, want 1 (a test is not retried)", len(got))
		}
	})
	t.Run("unreachable, as json", func(t *testing.T) {
		recv := newReceiver(t, http.StatusOK)
		sub := createSubscription(t, env, tok, "2", recv.URL+"/hook", nil)
		recv.Close() // nothing listens there any more
		c.Reset()
		err := testRun(ctx, opts(sub.ID, output.FormatJSON))
		if err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("err = %v", err)
		}
		var n api.Notification
		if jerr := json.Unmarshal(c.Stdout.Bytes(), &n); jerr != nil || n.Status != api.StatusFailed || !n.Test || n.HTTPStatusCode != 0 {
			t.Errorf("-o json = %s (%v)", c.Stdout, jerr)
		}
	})
	t.Run("deleted subscription", func(t *testing.T) {
		sub := createSubscription(t, env, tok, "2", "https://example.com/hook", nil)
		env.Do("DELETE", "/vehicle/2/eventSubscription/"+strconv.FormatInt(sub.ID, 10), tok, nil)
		err := testRun(ctx, opts(sub.ID, output.FormatTable))
		var apiErr *api.Error
		if !errors.As(err, &apiErr) || apiErr.Status() != 409 {
			t.Errorf("err = %v, want 409", err)
		}
	})
}

func TestHeaderRedaction(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "X-Api-Key": true, "X-Auth-Token": true, "Cookie": true, "X-Client-Secret": true,
		"X-Team": false, "Accept-Language": false, "X-Request-Id": false,
	} {
		if got := sensitive(name); got != want {
			t.Errorf("sensitive(%q) = %v, want %v", name, got, want)
		}
	}
	got := headerList(map[string]string{"x-team": "fleet", "Authorization": "Bearer x", "Accept": "a"})
	if got != "Accept: a; Authorization: <redacted>; x-team: fleet" {
		t.Errorf("headerList = %q", got)
	}
}
