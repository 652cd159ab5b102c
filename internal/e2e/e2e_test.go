// Package e2e tests the built vcs binary as people run it: real processes, real signals.
package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
)

// vcsBin is the binary under test, built once by TestMain.
var vcsBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vcs-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	vcsBin = filepath.Join(dir, "vcs")
	build := exec.Command("go", "build", "-o", vcsBin, "../../cmd/vcs")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build vcs:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// settings is what `vcs server --dev -o json` prints.
type settings struct {
	BaseURL      string `json:"base_url"`
	AuthURL      string `json:"auth_url"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

// server is a running `vcs server` process.
type server struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	settings
}

// startServer runs `vcs server --dev` on dataDir and waits for its settings.
func startServer(t *testing.T, dataDir string) *server {
	t.Helper()
	cmd := exec.Command(vcsBin, "server", "--dev", "--addr", "127.0.0.1:0", "--data-dir", dataDir, "-o", "json")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = &syncWriter{w: s.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// The one JSON object arrives once the server listens.
	if err := json.NewDecoder(stdout).Decode(&s.settings); err != nil {
		t.Fatalf("server settings: %v\n%s", err, s.stderr)
	}
	return s
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// clientToken gets a client-credentials token of the development client.
func (s *server) clientToken(t *testing.T) string {
	t.Helper()
	req, _ := http.NewRequest("POST", s.BaseURL+"/oauth/token", strings.NewReader("grant_type=client_credentials"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(s.ClientID, s.ClientSecret)
	var tok api.Token
	s.do(t, req, &tok)
	return tok.AccessToken
}

func (s *server) do(t *testing.T, req *http.Request, out any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", req.Method, req.URL, resp.StatusCode, body)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("%s %s: %v", req.Method, req.URL, err)
		}
	}
}

// call sends a data API request with token and a JSON body (nil for none).
func (s *server) call(t *testing.T, method, path, token string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.BaseURL+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	s.do(t, req, out)
}

// TestDeliveriesSurviveSIGKILL kills the server while notifications wait for a receiver
// that has not answered yet, starts it again on the same data, and checks that every
// notification is delivered after the restart.
func TestDeliveriesSurviveSIGKILL(t *testing.T) {
	dataDir := t.TempDir()
	gate := make(chan struct{})
	var mu sync.Mutex
	delivered := map[string]int{}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
		case <-r.Context().Done(): // the killed server's connection
			return
		}
		mu.Lock()
		delivered[r.Header.Get("webhook-id")]++
		mu.Unlock()
	}))
	defer recv.Close()

	first := startServer(t, dataDir)
	tok := first.clientToken(t)
	first.call(t, "POST", "/vehicle/3/eventSubscription/WAYPOINT/", tok,
		map[string]any{"minimumTime": 0, "postUrl": recv.URL, "notificationPeriod": "CONTINUOUS"}, nil)
	const points = 20
	for i := range points {
		ignition := api.IgnitionRunning
		switch i {
		case 0:
			ignition = api.IgnitionOn
		case points - 1:
			ignition = api.IgnitionOff
		}
		now := api.NewDateTime(time.Now())
		first.call(t, "POST", "/vehicle/3/dataSet/", tok, map[string]any{"timestamp": now, "ignitionStatus": ignition,
			"datum": []map[string]any{{"timestamp": now, "key": api.KeyWaypoint, "value": api.WaypointValue(28.03+float64(i)/1000, -82.59)}}}, nil)
	}
	// Every notification is recorded; the first is on its way to the stalled receiver.
	var list api.Envelope[[]api.Notification]
	first.call(t, "GET", "/vehicle/3/eventNotification/?searchLimit=500", tok, nil, &list)
	if *list.TotalRecords != points {
		t.Fatalf("%d notifications recorded, want %d", *list.TotalRecords, points)
	}
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()
	close(gate)

	second := startServer(t, dataDir)
	tok = second.clientToken(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		second.call(t, "GET", "/vehicle/3/eventNotification/?searchLimit=500", tok, nil, &list)
		done := 0
		for _, n := range list.Data {
			if n.Status == api.StatusDelivered {
				done++
			}
		}
		if done == points {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d notifications delivered after the restart\n%s", done, points, second.stderr)
		}
		time.Sleep(50 * time.Millisecond) // polling the API with a deadline
	}
	mu.Lock()
	defer mu.Unlock()
	for _, n := range list.Data {
		if delivered[fmt.Sprint(n.ID)] == 0 {
			t.Errorf("notification %d is DELIVERED but the receiver never got it", n.ID)
		}
	}
	if len(delivered) != points {
		t.Errorf("the receiver got %d distinct notifications, want %d", len(delivered), points)
	}
}

// lines reads r line by line into a channel.
func lines(r io.Reader) <-chan string {
	ch := make(chan string, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// vcsCmd is a client command against s, authenticated with token (VCS_TOKEN skips the
// credential store).
func (s *server) vcsCmd(t *testing.T, token string, args ...string) *exec.Cmd {
	cmd := exec.Command(vcsBin, args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir(), "VCS_BASE_URL="+s.BaseURL,
		"VCS_AUTH_URL="+s.AuthURL, "VCS_TOKEN="+token, "NO_COLOR=1")
	return cmd
}

// TestListenSeesASimulatedTrip runs `vcs listen 3 --format json` and `vcs simulate trip 3`
// as separate processes against a `vcs server` process: every waypoint the simulator
// recorded arrives once, in order of recorded time, with its coordinates; Ctrl-C removes
// the subscription.
func TestListenSeesASimulatedTrip(t *testing.T) {
	srv := startServer(t, t.TempDir())
	tok := srv.clientToken(t)

	listen := srv.vcsCmd(t, tok, "listen", "3", "--format", "json")
	stdout, err := listen.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderrR, err := listen.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := listen.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listen.Process.Kill(); _ = listen.Wait() })
	errLines := lines(stderrR)
	var stderrLog []string
	ready := false
	for !ready {
		select {
		case l, ok := <-errLines:
			if !ok {
				t.Fatalf("vcs listen exited before Ready!:\n%s", strings.Join(stderrLog, "\n"))
			}
			stderrLog = append(stderrLog, l)
			ready = strings.HasPrefix(l, "Ready!")
		case <-time.After(20 * time.Second):
			t.Fatalf("no Ready! within 20 s:\n%s", strings.Join(stderrLog, "\n"))
		}
	}

	sim := srv.vcsCmd(t, tok, "simulate", "trip", "3", "--from", "28.0270,-82.5886", "--to", "28.0884,-82.5786",
		"--speed", "40", "--interval", "30", "--time-scale", "600", "-o", "json")
	out, err := sim.Output()
	if err != nil {
		t.Fatalf("vcs simulate: %v\n%s", err, out)
	}
	var drive api.Simulation
	if err := json.Unmarshal(out, &drive); err != nil || drive.Status != api.SimCompleted || drive.TripID == nil {
		t.Fatalf("simulation: %v %s", err, out)
	}

	// What the simulator recorded: the trip's data sets, in order.
	var trip api.Envelope[api.Trip]
	srv.call(t, "GET", fmt.Sprintf("/vehicle/3/trip/%d", *drive.TripID), tok, nil, &trip)
	var want []api.Waypoint
	for _, d := range trip.Data.Data {
		for _, r := range d.Datum {
			if r.Key == api.KeyWaypoint {
				lat, lng, _ := r.Value.Waypoint()
				want = append(want, api.Waypoint{Timestamp: r.Timestamp, Latitude: lat, Longitude: lng})
			}
		}
	}
	if len(want) < 5 {
		t.Fatalf("the trip recorded only %d waypoints", len(want))
	}

	outLines := lines(stdout)
	var got []api.NotificationBody
	for len(got) < len(want) {
		select {
		case l := <-outLines:
			var n api.NotificationBody
			if err := json.Unmarshal([]byte(l), &n); err != nil {
				t.Fatalf("vcs listen printed a line that is not a notification: %q", l)
			}
			got = append(got, n)
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d waypoints arrived", len(got), len(want))
		}
	}
	seen := map[int64]bool{}
	for i, n := range got {
		if seen[n.ID] {
			t.Errorf("notification %d printed twice", n.ID)
		}
		seen[n.ID] = true
		w := want[i]
		if n.VehicleID != 3 || n.RecordedWaypoint.Latitude != w.Latitude || n.RecordedWaypoint.Longitude != w.Longitude {
			t.Errorf("waypoint %d: got %+v, the simulator sent %+v", i, n.RecordedWaypoint, w)
		}
		if i > 0 && n.RecordedWaypoint.Timestamp.Before(got[i-1].RecordedWaypoint.Timestamp.Time) {
			t.Errorf("waypoint %d arrived out of recorded-time order", i)
		}
	}

	// Ctrl-C: the subscription goes, and vcs listen exits 0.
	if err := listen.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for range errLines {
	}
	if err := listen.Wait(); err != nil {
		t.Fatalf("vcs listen after Ctrl-C: %v", err)
	}
	var subs api.Envelope[[]api.Subscription]
	srv.call(t, "GET", "/vehicle/3/eventSubscription/", tok, nil, &subs)
	for _, s := range subs.Data {
		if s.DeletionTimestamp == nil {
			t.Errorf("subscription %d is still active after Ctrl-C", s.ID)
		}
	}
}
