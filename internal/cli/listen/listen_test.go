package listen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/cli/clitest"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/server"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

// waitTimeout bounds every wait of these tests; they wait for events, not for time.
const waitTimeout = 30 * time.Second

// sink is an output stream a test can wait on: every write wakes the waiters.
type sink struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	lines   int
	changed chan struct{}
}

func newSink() *sink { return &sink{changed: make(chan struct{})} }

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	s.lines += bytes.Count(p, []byte{'\n'})
	close(s.changed)
	s.changed = make(chan struct{})
	return len(p), nil
}

func (s *sink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// Lines are the complete lines written so far.
func (s *sink) Lines() []string {
	text := s.String()
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		return strings.Split(text[:i], "\n")
	}
	return nil
}

// wait returns the lines once ok accepts them, and fails the test if that takes too long.
func (s *sink) wait(tb testing.TB, what string, ok func(lines []string) bool) []string {
	tb.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		lines := s.Lines()
		if ok(lines) {
			return lines
		}
		select {
		case <-ch:
		case <-deadline.C:
			tb.Fatalf("waited %s for %s; got:\n%s", waitTimeout, what, strings.Join(lines, "\n"))
		}
	}
}

// waitLines waits for n lines.
func (s *sink) waitLines(tb testing.TB, n int) []string {
	tb.Helper()
	return s.wait(tb, fmt.Sprintf("%d lines", n), func(l []string) bool { return len(l) >= n })
}

// waitCount waits for n lines without splitting the output each time, for big runs.
func (s *sink) waitCount(tb testing.TB, n int) {
	tb.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		got, ch := s.lines, s.changed
		s.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			tb.Fatalf("waited %s for %d lines; got %d", waitTimeout, n, got)
		}
	}
}

// run is a listen session in the background.
type run struct {
	tb     testing.TB
	url    string // the receiver
	subs   []api.Subscription
	out    *sink
	errOut *sink
	cancel context.CancelFunc
	done   chan error
	ended  bool
	err    error
}

// start runs listenRun for c with the options mod sets (vehicle 1, pretty, by default) and
// returns once it is Ready.
func start(tb testing.TB, c *clitest.CLI, mod func(*ListenOptions)) *run {
	tb.Helper()
	ios, _, _, _ := iostreams.Test()
	s := &run{tb: tb, out: newSink(), errOut: newSink(), done: make(chan error, 1)}
	ios.Out, ios.ErrOut = s.out, s.errOut
	opts := &ListenOptions{IO: ios, APIClient: c.F.APIClient, Vehicles: []string{"1"}, Format: FormatPretty}
	if mod != nil {
		mod(opts)
	}
	ready := make(chan struct{})
	opts.onReady = func(u string, subs []api.Subscription) {
		s.url, s.subs = u, subs
		close(ready)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.done <- listenRun(ctx, opts) }()
	select {
	case <-ready:
	case err := <-s.done:
		s.ended = true
		tb.Fatalf("listen ended before it was ready: %v\nstderr:\n%s", err, s.errOut)
	case <-time.After(waitTimeout):
		tb.Fatalf("listen not ready after %s; stderr:\n%s", waitTimeout, s.errOut)
	}
	tb.Cleanup(func() { s.stop() })
	return s
}

// stop cancels the run, as Ctrl-C does, and returns what listenRun returned.
func (s *run) stop() error {
	if !s.ended {
		s.cancel()
		select {
		case s.err = <-s.done:
		case <-time.After(waitTimeout):
			s.tb.Fatalf("listen did not end %s after Ctrl-C", waitTimeout)
		}
		s.ended = true
	}
	return s.err
}

// secret is the run's bearer secret, as the subscriptions carry it.
func (s *run) auth() string { return s.subs[0].PostHeaders["Authorization"] }

// noSecrets checks that neither stream shows the run's secret or a signing secret.
func (s *run) noSecrets(t *testing.T) {
	t.Helper()
	out := s.out.String() + s.errOut.String()
	secret := strings.TrimPrefix(s.auth(), "Bearer ")
	if len(secret) < 32 || strings.Contains(out, secret) || strings.Contains(out, "whsec_") {
		t.Errorf("the output shows a secret (or the run's is short: %d characters):\n%s", len(secret), out)
	}
}

func loggedIn(tb testing.TB) (*servertest.Env, *clitest.CLI, string) {
	tb.Helper()
	env := servertest.New(tb)
	c := clitest.New(tb, env)
	c.LoginDemo(tb, env)
	c.Reset()
	return env, c, env.DemoToken()
}

type point struct{ lat, lng float64 }

// route is n distinct points, so that each line can be told from the others.
func route(n int, start float64) []point {
	out := make([]point, n)
	for i := range out {
		out[i] = point{start + float64(i)*0.001, -82.593687 - float64(i)*0.002}
	}
	return out
}

// record posts a data set per point for the vehicle, as its device would, and returns when
// the time they were recorded at.
func record(tb testing.TB, env *servertest.Env, tok, vehicle string, pts []point) time.Time {
	tb.Helper()
	at := api.NewDateTime(time.Now())
	for _, p := range pts {
		r := env.Do("POST", "/vehicle/"+vehicle+"/dataSet/", tok, map[string]any{
			"timestamp": at, "ignitionStatus": api.IgnitionRunning,
			"datum": []map[string]any{{"timestamp": at, "key": api.KeyWaypoint, "value": api.WaypointValue(p.lat, p.lng)}},
		})
		if r.Status != 200 {
			tb.Fatalf("record a data set: %d %s", r.Status, r.Body)
		}
	}
	return at.Time
}

func serviceSubscription(t *testing.T, env *servertest.Env, tok string, vehicle, id int64) api.Subscription {
	t.Helper()
	r := env.Do("GET", fmt.Sprintf("/vehicle/%d/eventSubscription/%d", vehicle, id), tok, nil)
	if r.Status != 200 {
		t.Fatalf("get subscription %d: %d %s", id, r.Status, r.Body)
	}
	var body struct {
		Subscription api.Subscription `json:"subscription"`
	}
	r.JSON(t, &body)
	return body.Subscription
}

// wantDeleted checks with the service that every subscription of the run is deleted.
func wantDeleted(t *testing.T, env *servertest.Env, tok string, subs []api.Subscription) {
	t.Helper()
	for _, s := range subs {
		if got := serviceSubscription(t, env, tok, s.VehicleID, s.ID); got.DeletionTimestamp == nil {
			t.Errorf("subscription %d of vehicle %d is not deleted", s.ID, s.VehicleID)
		}
	}
}

var prettyLine = regexp.MustCompile(`^(\d\d:\d\d:\d\d\.\d{3})  vehicle (\d+)  (-?\d+\.\d{6}),(-?\d+\.\d{6})  recorded (\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)  delay (-?\d+\.\d\d)s(?:  forward (.+))?$`)

// pretty is a parsed line of the pretty format.
type pretty struct {
	vehicle  string
	pos      string
	delay    float64
	recorded string
	forward  string
}

func parsePretty(t *testing.T, line string) pretty {
	t.Helper()
	m := prettyLine.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("line %q is not in the pretty format", line)
	}
	d, _ := strconv.ParseFloat(m[6], 64)
	return pretty{vehicle: m[2], pos: m[3] + "," + m[4], recorded: m[5], delay: d, forward: m[7]}
}

func (p point) String() string {
	return strconv.FormatFloat(p.lat, 'f', 6, 64) + "," + strconv.FormatFloat(p.lng, 'f', 6, 64)
}

// parseListen runs `vcs listen` with args and returns the options its run function got.
func parseListen(t *testing.T, args ...string) (*ListenOptions, error) {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, Globals: &cmdutil.Globals{}}
	var got *ListenOptions
	cmd := NewCmdListen(f, func(_ context.Context, o *ListenOptions) error {
		got = o
		return nil
	})
	if args == nil {
		args = []string{}
	}
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })
	_, err := cmd.ExecuteC()
	return got, err
}

func TestNewCmdListen(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    ListenOptions
		wantErr string
	}{
		{name: "one vehicle", args: []string{"3"}, want: ListenOptions{Vehicles: []string{"3"}, Format: "pretty"}},
		{name: "vehicles once each", args: []string{"3", "C2015000001", "3"}, want: ListenOptions{Vehicles: []string{"3", "C2015000001"}, Format: "pretty"}},
		{name: "every flag", args: []string{"--all", "--forward-to", "http://localhost:3000/h", "--public-url", "https://x.example",
			"--port", "4242", "--format", "json"},
			want: ListenOptions{All: true, ForwardTo: "http://localhost:3000/h", PublicURL: "https://x.example", Port: 4242, Format: "json"}},
		{name: "nothing to listen to", wantErr: "give one or more vehicles (id or device serial), or --all"},
		{name: "vehicles and all", args: []string{"1", "--all"}, wantErr: "give vehicles or --all, not both"},
		{name: "bad format", args: []string{"1", "--format", "yaml"}, wantErr: `--format must be pretty or json, not "yaml"`},
		{name: "relative forward", args: []string{"1", "--forward-to", "localhost:3000"}, wantErr: "--forward-to must be an absolute http or https URL"},
		{name: "ftp forward", args: []string{"1", "--forward-to", "ftp://localhost/x"}, wantErr: "--forward-to must be an absolute http or https URL"},
		{name: "bad public url", args: []string{"1", "--public-url", "/hook"}, wantErr: "--public-url must be an absolute http or https URL"},
		{name: "port too big", args: []string{"1", "--port", "70000"}, wantErr: "--port must be from 1 to 65535"},
		{name: "unknown flag", args: []string{"1", "--output", "json"}, wantErr: "unknown flag: --output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseListen(t, tt.args...)
			if tt.wantErr != "" {
				if err == nil || cmdutil.ExitCode(err) != cmdutil.ExitUsage || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want a usage error saying %q", err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("the run function was called")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Vehicles, tt.want.Vehicles) || got.All != tt.want.All || got.ForwardTo != tt.want.ForwardTo ||
				got.PublicURL != tt.want.PublicURL || got.Port != tt.want.Port || got.Format != tt.want.Format {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestListenPretty(t *testing.T) {
	env, c, tok := loggedIn(t)
	s := start(t, c, nil)
	if len(s.subs) != 1 || s.subs[0].VehicleID != 1 || s.subs[0].PostURL != s.url || s.subs[0].MinimumTime != 0 ||
		s.subs[0].NotificationPeriod != api.PeriodContinuous || !strings.HasPrefix(s.auth(), "Bearer ") {
		t.Fatalf("subscriptions %+v, receiver %s", s.subs, s.url)
	}

	pts := route(6, 28.036441)
	recordedAt := record(t, env, tok, "1", pts)
	lines := s.out.waitLines(t, len(pts))
	for i, line := range lines {
		p := parsePretty(t, line)
		if p.vehicle != "1" || p.pos != pts[i].String() {
			t.Errorf("line %d = %q, want vehicle 1 at %s", i, line, pts[i])
		}
		if p.recorded != recordedAt.Local().Format("15:04:05") {
			t.Errorf("line %d shows recorded %s, want %s", i, p.recorded, recordedAt.Local().Format("15:04:05"))
		}
		// The waypoint's time has whole seconds: the delay is at least what was cut off.
		if p.delay < 0 || p.delay > waitTimeout.Seconds() {
			t.Errorf("line %d shows a delay of %.2fs", i, p.delay)
		}
	}

	if err := s.stop(); err != nil {
		t.Fatalf("listen after Ctrl-C: %v, want nil (exit 0)", err)
	}
	if got := s.out.Lines(); len(got) != len(pts) {
		t.Errorf("%d lines in the end, want %d:\n%s", len(got), len(pts), s.out)
	}
	errLines := s.errOut.Lines()
	sub := s.subs[0]
	want := []string{
		"Ready! Receiving the waypoints of vehicle 1 at " + s.url,
		"Press Ctrl-C to stop and delete the subscriptions.",
		fmt.Sprintf("Deleted subscription %d.", sub.ID),
		"Received 6 notifications (0 duplicates dropped, 0 requests refused).",
	}
	if !slices.Equal(errLines, want) {
		t.Errorf("stderr:\n%s\nwant:\n%s", strings.Join(errLines, "\n"), strings.Join(want, "\n"))
	}
	wantDeleted(t, env, tok, s.subs)
	s.noSecrets(t)
}

func TestListenJSON(t *testing.T) {
	env, c, tok := loggedIn(t)
	s := start(t, c, func(o *ListenOptions) { o.Vehicles, o.Format = []string{"C2015000002"}, FormatJSON })
	pts := route(4, 40.1)
	record(t, env, tok, "2", pts)
	lines := s.out.waitLines(t, len(pts))
	var lastID int64
	for i, line := range lines {
		var n api.NotificationBody
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&n); err != nil {
			t.Fatalf("line %d is not a notification body: %v\n%s", i, err, line)
		}
		// The service marshals api.NotificationBody: marshalling what was decoded gives the
		// received bytes back only when the line is exactly the received object.
		again, _ := json.Marshal(n)
		if string(again) != line {
			t.Errorf("line %d is not the body as sent:\n got %s\nwant %s", i, line, again)
		}
		got := point{n.RecordedWaypoint.Latitude, n.RecordedWaypoint.Longitude}
		if n.SubscriptionID != s.subs[0].ID || n.VehicleID != 2 || got.String() != pts[i].String() || n.ID <= lastID || n.Type != api.EventWaypoint {
			t.Errorf("line %d = %s, want vehicle 2 at %s after notification %d", i, line, pts[i], lastID)
		}
		lastID = n.ID
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if got := len(s.out.Lines()); got != len(pts) {
		t.Errorf("%d lines, want %d", got, len(pts))
	}
	if errText := s.errOut.String(); !strings.HasPrefix(errText, "Ready! Receiving the waypoints of vehicle 2 at http://127.0.0.1:") {
		t.Errorf("stderr:\n%s", errText)
	}
	wantDeleted(t, env, tok, s.subs)
	s.noSecrets(t)
}

// signed is a notification for sub, signed as the service signs it.
func signed(t testing.TB, sub api.Subscription, signingSecret string, id int64, p point, at time.Time) (body []byte, h http.Header) {
	t.Helper()
	body, err := json.Marshal(api.NotificationBody{ID: id, SubscriptionID: sub.ID, Domain: "127.0.0.1", Type: api.EventWaypoint,
		Name: api.EventWaypoint, Timestamp: api.NewDateTime(at), NotificationPeriod: api.PeriodContinuous,
		CreatorClientID: sub.CreatorClientID, AccountID: 1, VehicleID: sub.VehicleID,
		RecordedWaypoint: api.Waypoint{Timestamp: api.NewDateTime(at), Latitude: p.lat, Longitude: p.lng}})
	if err != nil {
		t.Fatal(err)
	}
	wh, err := standardwebhooks.NewWebhook(signingSecret)
	if err != nil {
		t.Fatal(err)
	}
	msgID := strconv.FormatInt(id, 10)
	sig, err := wh.Sign(msgID, at, body)
	if err != nil {
		t.Fatal(err)
	}
	h = http.Header{}
	h.Set("Authorization", sub.PostHeaders["Authorization"])
	h.Set("Content-Type", "application/json;charset=UTF-8")
	h.Set(standardwebhooks.HeaderWebhookID, msgID)
	h.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
	h.Set(standardwebhooks.HeaderWebhookSignature, sig)
	return body, h
}

// send posts body with h to url and returns the status.
func send(t testing.TB, method, url string, body []byte, h http.Header) int {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestListenRefusesForgeriesAndDropsDuplicates(t *testing.T) {
	_, c, _ := loggedIn(t)
	s := start(t, c, nil)
	sub := s.subs[0]
	now := time.Now()
	const otherSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

	first := point{10.5, 20.25}
	body, h := signed(t, sub, sub.SigningSecret, 900001, first, now)
	forged := func(mod func(b []byte, h http.Header) ([]byte, http.Header)) ([]byte, http.Header) {
		b, hh := signed(t, sub, sub.SigningSecret, 900002, point{1, 2}, now)
		return mod(b, hh)
	}
	refusals := []struct {
		name   string
		method string
		status int
		warn   string
		body   []byte
		header http.Header
	}{}
	add := func(name string, status int, warn string, b []byte, hh http.Header) {
		refusals = append(refusals, struct {
			name   string
			method string
			status int
			warn   string
			body   []byte
			header http.Header
		}{name, "POST", status, warn, b, hh})
	}
	b, hh := forged(func(b []byte, h http.Header) ([]byte, http.Header) { h.Del("Authorization"); return b, h })
	add("no secret", 401, "wrong or missing Authorization header", b, hh)
	b, hh = forged(func(b []byte, h http.Header) ([]byte, http.Header) {
		h.Set("Authorization", h.Get("Authorization")+"x")
		return b, h
	})
	add("wrong secret", 401, "wrong or missing Authorization header", b, hh)
	b, hh = signed(t, sub, otherSecret, 900003, point{3, 4}, now)
	add("signed with another key", 401, "bad webhook signature: no matching signature", b, hh)
	b, hh = forged(func(b []byte, h http.Header) ([]byte, http.Header) {
		return bytes.Replace(b, []byte(`"latitude":1`), []byte(`"latitude":9`), 1), h
	})
	add("body changed after signing", 401, "bad webhook signature: no matching signature", b, hh)
	b, hh = forged(func(b []byte, h http.Header) ([]byte, http.Header) {
		h.Del(standardwebhooks.HeaderWebhookSignature)
		return b, h
	})
	add("no signature", 401, "bad webhook signature: webhook-id, webhook-timestamp or webhook-signature missing", b, hh)
	b, hh = signed(t, sub, sub.SigningSecret, 900004, point{5, 6}, now.Add(-10*time.Minute))
	add("replayed long after", 401, "bad webhook signature: webhook-timestamp too old", b, hh)
	other := sub
	other.ID = sub.ID + 1000
	b, hh = signed(t, other, sub.SigningSecret, 900005, point{7, 8}, now)
	add("another subscription", 401, fmt.Sprintf("subscription %d is not one of this session's", other.ID), b, hh)
	add("not a notification", 400, "the body is not a waypoint notification", []byte(`{"hello": "world"}`), http.Header{"Authorization": {s.auth()}})

	for _, r := range refusals {
		if got := send(t, r.method, s.url, r.body, r.header); got != r.status {
			t.Errorf("%s: status %d, want %d", r.name, got, r.status)
		}
	}
	if got := send(t, "GET", s.url, nil, http.Header{"Authorization": {s.auth()}}); got != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", got)
	}
	warnings := s.errOut.wait(t, "a warning per refused request", func(l []string) bool {
		return len(slices.DeleteFunc(slices.Clone(l), func(s string) bool { return !strings.Contains(s, "warning") })) >= len(refusals)+1
	})
	for _, r := range refusals {
		if !slices.ContainsFunc(warnings, func(w string) bool {
			return strings.Contains(w, fmt.Sprintf("(%d): %s", r.status, r.warn)) && strings.Contains(w, "refused a request from 127.0.0.1:")
		}) {
			t.Errorf("%s: no warning saying %q:\n%s", r.name, r.warn, strings.Join(warnings, "\n"))
		}
	}

	// The real one is taken, its replay acknowledged and not shown, and the line after it
	// proves that nothing else came in between.
	if got := send(t, "POST", s.url, body, h); got != http.StatusNoContent {
		t.Fatalf("signed notification: status %d, want 204", got)
	}
	if got := send(t, "POST", s.url, body, h); got != http.StatusNoContent {
		t.Errorf("its duplicate: status %d, want 204", got)
	}
	last := point{11.5, 21.25}
	body2, h2 := signed(t, sub, sub.SigningSecret, 900006, last, now)
	if got := send(t, "POST", s.url, body2, h2); got != http.StatusNoContent {
		t.Fatalf("second notification: status %d", got)
	}
	lines := s.out.waitLines(t, 2)
	if len(lines) != 2 || parsePretty(t, lines[0]).pos != first.String() || parsePretty(t, lines[1]).pos != last.String() {
		t.Errorf("stdout:\n%s\nwant %s then %s, once each", s.out, first, last)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if got := s.out.Lines(); len(got) != 2 {
		t.Errorf("stdout in the end:\n%s", s.out)
	}
	if want := fmt.Sprintf("Received 2 notifications (1 duplicate dropped, %d requests refused).", len(refusals)+1); !strings.Contains(s.errOut.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, s.errOut)
	}
	s.noSecrets(t)
}

// forwardTarget is the local app of --forward-to: it records what it gets.
type forwardTarget struct {
	*httptest.Server
	mu  sync.Mutex
	got []*http.Request
	raw [][]byte
}

func newForwardTarget(t *testing.T, status int) *forwardTarget {
	ft := &forwardTarget{}
	ft.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ft.mu.Lock()
		ft.got, ft.raw = append(ft.got, r), append(ft.raw, b)
		ft.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(ft.Close)
	return ft
}

func (ft *forwardTarget) requests() ([]*http.Request, [][]byte) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return slices.Clone(ft.got), slices.Clone(ft.raw)
}

func TestListenForward(t *testing.T) {
	env, c, tok := loggedIn(t)

	t.Run("pretty", func(t *testing.T) {
		ft := newForwardTarget(t, http.StatusAccepted)
		s := start(t, c, func(o *ListenOptions) { o.ForwardTo = ft.URL + "/hooks/waypoint" })
		pts := route(3, 30)
		record(t, env, tok, "1", pts)
		lines := s.out.waitLines(t, len(pts))
		for i, line := range lines {
			if p := parsePretty(t, line); p.forward != "202 Accepted" || p.pos != pts[i].String() {
				t.Errorf("line %d = %q, want %s and the forward's 202", i, line, pts[i])
			}
		}
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
		reqs, bodies := ft.requests()
		if len(reqs) != len(pts) {
			t.Fatalf("the app got %d requests, want %d", len(reqs), len(pts))
		}
		wh, _ := standardwebhooks.NewWebhook(s.subs[0].SigningSecret)
		for i, r := range reqs {
			var n api.NotificationBody
			_ = json.Unmarshal(bodies[i], &n)
			if r.URL.Path != "/hooks/waypoint" || r.Method != "POST" || n.RecordedWaypoint.Latitude != pts[i].lat {
				t.Errorf("forward %d: %s %s with %s", i, r.Method, r.URL.Path, bodies[i])
			}
			// The body and webhook-* headers as the service sent them: the app can verify.
			if err := wh.Verify(bodies[i], r.Header); err != nil {
				t.Errorf("forward %d does not verify: %v", i, err)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/json;charset=UTF-8" {
				t.Errorf("forward %d: Content-Type %q", i, ct)
			}
			if a := r.Header.Get("Authorization"); a != "" {
				t.Errorf("forward %d passes the run's secret on", i)
			}
		}
		if !strings.Contains(s.errOut.String(), "Forwarding each notification to "+ft.URL+"/hooks/waypoint.") {
			t.Errorf("stderr:\n%s", s.errOut)
		}
		s.noSecrets(t)
	})
	t.Run("json shows the status on stderr", func(t *testing.T) {
		ft := newForwardTarget(t, http.StatusInternalServerError)
		s := start(t, c, func(o *ListenOptions) { o.ForwardTo, o.Format = ft.URL, FormatJSON })
		record(t, env, tok, "1", route(2, 31))
		lines := s.out.waitLines(t, 2)
		var ids []int64
		for _, l := range lines {
			var n api.NotificationBody
			if err := json.Unmarshal([]byte(l), &n); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			ids = append(ids, n.ID)
		}
		s.errOut.wait(t, "the forwards' status", func(l []string) bool {
			return slices.ContainsFunc(l, func(s string) bool {
				return strings.HasSuffix(s, fmt.Sprintf("forwarded notification %d: 500 Internal Server Error", ids[1]))
			})
		})
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(s.errOut.String(), ": 500 Internal Server Error"); n != 2 {
			t.Errorf("%d forward statuses on stderr, want 2:\n%s", n, s.errOut)
		}
		if reqs, _ := ft.requests(); len(reqs) != 2 {
			t.Errorf("the app got %d requests, want 2 (a failed forward is not retried)", len(reqs))
		}
	})
	t.Run("app down", func(t *testing.T) {
		ft := newForwardTarget(t, http.StatusOK)
		ft.Close()
		s := start(t, c, func(o *ListenOptions) { o.ForwardTo = ft.URL })
		record(t, env, tok, "1", route(1, 32))
		line := s.out.waitLines(t, 1)[0]
		if p := parsePretty(t, line); !strings.HasPrefix(p.forward, "failed: ") || !strings.Contains(p.forward, "connection refused") {
			t.Errorf("line %q, want the forward's failure", line)
		}
		if err := s.stop(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestListenAll(t *testing.T) {
	env, c, tok := loggedIn(t)
	for _, label := range []string{"Van 4", "Van 5"} {
		if r := env.Do("POST", "/vehicle/", tok, map[string]any{"label": label}); r.Status != 200 {
			t.Fatalf("create vehicle: %d %s", r.Status, r.Body)
		}
	}
	// Pages of 2 make --all follow the next links: 2+2+1 vehicles.
	s := start(t, c, func(o *ListenOptions) { o.Vehicles, o.All, o.pageSize = nil, true, 2 })
	var vehicles []int64
	for _, sub := range s.subs {
		vehicles = append(vehicles, sub.VehicleID)
	}
	if !slices.Equal(vehicles, []int64{1, 2, 3, 4, 5}) {
		t.Fatalf("subscribed vehicles %v, want 1 to 5", vehicles)
	}
	record(t, env, tok, "5", []point{{1.5, 2.5}})
	record(t, env, tok, "3", []point{{3.5, 4.5}})
	lines := s.out.waitLines(t, 2)
	var got []string
	for _, l := range lines {
		p := parsePretty(t, l)
		got = append(got, p.vehicle+"@"+p.pos)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"3@3.500000,4.500000", "5@1.500000,2.500000"}) {
		t.Errorf("lines:\n%s", s.out)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.errOut.String(), "Ready! Receiving the waypoints of vehicles 1, 2, 3, 4 and 5 at ") ||
		!strings.Contains(s.errOut.String(), "Deleted subscriptions 1, 2, 3, 4 and 5.\n") {
		t.Errorf("stderr:\n%s", s.errOut)
	}
	wantDeleted(t, env, tok, s.subs)
}

func TestListenSameVehicleTwice(t *testing.T) {
	env, c, tok := loggedIn(t)
	s := start(t, c, func(o *ListenOptions) { o.Vehicles = []string{"1", "C2015000001"} })
	if len(s.subs) != 2 {
		t.Fatalf("%d subscriptions", len(s.subs))
	}
	pts := route(3, 50)
	record(t, env, tok, "1", pts)
	// Both subscriptions' notifications reached the receiver, so the second one's copies had
	// their chance to be shown.
	for _, sub := range s.subs {
		waitDelivered(t, env, tok, sub, len(pts))
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if got := s.out.Lines(); len(got) != len(pts) {
		t.Errorf("stdout:\n%s\nwant each waypoint once", s.out)
	}
	errText := s.errOut.String()
	if !strings.Contains(errText, "1 and C2015000001 are the same vehicle (1): showing its waypoints once.") ||
		strings.Contains(errText, "warning") || !strings.Contains(errText, fmt.Sprintf("Deleted subscriptions %d and %d.\n", s.subs[0].ID, s.subs[1].ID)) {
		t.Errorf("stderr:\n%s", errText)
	}
	wantDeleted(t, env, tok, s.subs)
}

// waitDelivered polls the service's notification history until n notifications of sub are
// delivered; the outcome is recorded a moment after the receiver's answer.
func waitDelivered(t *testing.T, env *servertest.Env, tok string, sub api.Subscription, n int) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		r := env.Do("GET", fmt.Sprintf("/vehicle/%d/eventNotification/?searchLimit=500", sub.VehicleID), tok, nil)
		var body struct {
			Notifications []api.Notification `json:"notifications"`
		}
		r.JSON(t, &body)
		delivered := 0
		for _, x := range body.Notifications {
			if x.SubscriptionID == sub.ID && x.Status == api.StatusDelivered {
				delivered++
			}
		}
		if delivered >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d notifications of subscription %d delivered after %s", delivered, n, sub.ID, waitTimeout)
		}
		<-tick.C
	}
}

func TestListenFailsHalfway(t *testing.T) {
	env, c, tok := loggedIn(t)
	ios, _, _, _ := iostreams.Test()
	out, errOut := newSink(), newSink()
	ios.Out, ios.ErrOut = out, errOut
	opts := &ListenOptions{IO: ios, APIClient: c.F.APIClient, Vehicles: []string{"1", "2", "999"}, Format: FormatPretty,
		onReady: func(string, []api.Subscription) { t.Error("ready though a subscription failed") }}
	err := listenRun(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "subscribe to vehicle 999: vehicle not found") || cmdutil.ExitCode(err) != cmdutil.ExitError {
		t.Fatalf("err = %v", err)
	}
	for _, v := range []string{"1", "2"} {
		r := env.Do("GET", "/vehicle/"+v+"/eventSubscription/", tok, nil)
		var body struct {
			Subscriptions []api.Subscription `json:"subscriptions"`
		}
		r.JSON(t, &body)
		if len(body.Subscriptions) != 1 || body.Subscriptions[0].DeletionTimestamp == nil {
			t.Errorf("vehicle %s has %+v, want one deleted subscription", v, body.Subscriptions)
		}
	}
	if errOut.String() != "Deleted subscriptions 1 and 2.\n" || strings.Contains(errOut.String(), "Ready!") || out.String() != "" {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}
}

func TestListenProductionHint(t *testing.T) {
	env := servertest.New(t, servertest.WithEnv(server.EnvProduction))
	c := clitest.New(t, env)
	c.LoginDemo(t, env)
	ios, _, _, _ := iostreams.Test()
	opts := &ListenOptions{IO: ios, APIClient: c.F.APIClient, Vehicles: []string{"1"}, Format: FormatPretty}
	err := listenRun(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "postUrl must use https") || !strings.Contains(err.Error(), "--public-url") {
		t.Errorf("err = %v, want the service's refusal and the tunnel hint", err)
	}
}

func TestPrinterStopsOnWriteError(t *testing.T) {
	failed := make(chan error, 1)
	var errOut bytes.Buffer // read only after Close, which waits for the writer
	p := newPrinter(failingWriter{}, &errOut, func(err error) { failed <- err })
	p.Out([]byte("one\n"))
	select {
	case err := <-failed:
		if !errors.Is(err, errClosedPipe) {
			t.Errorf("failed with %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no failure reported")
	}
	// Later lines are drained, not blocked on.
	for range queueLen + 10 {
		p.Out([]byte("more\n"))
	}
	p.Err([]byte("why the session ends\n"))
	if err := p.Close(); !errors.Is(err, errClosedPipe) {
		t.Errorf("Close = %v", err)
	}
	if errOut.String() != "why the session ends\n" {
		t.Errorf("stderr = %q, want the message written after stdout failed", errOut.String())
	}
}

var errClosedPipe = errors.New("closed pipe")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errClosedPipe }

func TestDelayAndList(t *testing.T) {
	for d, want := range map[time.Duration]string{
		420 * time.Millisecond: "0.42s", 59*time.Second + 990*time.Millisecond: "59.99s",
		-1200 * time.Millisecond: "-1.20s", 3*time.Minute + 12*time.Second + 400*time.Millisecond: "3m12s",
	} {
		if got := delay(d); got != want {
			t.Errorf("delay(%s) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int]string{0: "", 1: "1", 2: "1 and 2", 3: "1, 2 and 3", 12: "1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more"} {
		items := make([]string, n)
		for i := range items {
			items[i] = strconv.Itoa(i + 1)
		}
		if got := list(items, 10); got != want {
			t.Errorf("list(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDedupWindow(t *testing.T) {
	d := newDedup(3)
	for _, id := range []string{"1", "2", "3"} {
		if !d.add(id) {
			t.Fatalf("%s not new", id)
		}
	}
	if d.add("2") {
		t.Error("2 seen again as new")
	}
	if !d.add("4") || !d.add("1") {
		t.Error("the oldest id is not forgotten once the window is full")
	}
	if len(d.set) != 3 {
		t.Errorf("the set holds %d ids, want the window's 3", len(d.set))
	}
}

// TestListenDebugRedacts: with --debug the subscription requests are logged, and neither the
// run's bearer secret (a postHeaders value) nor the signing secrets in the answers show.
func TestListenDebugRedacts(t *testing.T) {
	env := servertest.New(t)
	c := clitest.New(t, env)
	c.F.Globals.Debug = true // read once, when the HTTP client is first built
	c.LoginDemo(t, env)
	s := start(t, c, nil)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	debug := c.Stderr.String()
	secret := strings.TrimPrefix(s.auth(), "Bearer ")
	if !strings.Contains(debug, "> POST "+env.URL+"/vehicle/1/eventSubscription/WAYPOINT/") ||
		!strings.Contains(debug, fmt.Sprintf("> DELETE %s/vehicle/1/eventSubscription/%d", env.URL, s.subs[0].ID)) {
		t.Fatalf("the debug log has no subscription requests:\n%s", debug)
	}
	if strings.Contains(debug, secret) || strings.Contains(debug, s.subs[0].SigningSecret) || strings.Contains(debug, "whsec_") {
		t.Errorf("the debug log shows a secret:\n%s", debug)
	}
}
