package simulate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"
	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/cli/clitest"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/output"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
	"github.com/connected-vehicle/vcs/internal/sim/route"
)

// parse runs `vcs simulate trip` with args (and stdin) the way the root command would, and
// returns the Options its run function received (nil when it was not called).
func parse(t *testing.T, stdin string, args ...string) (*TripOptions, error) {
	t.Helper()
	ios, in, _, _ := iostreams.Test()
	in.WriteString(stdin)
	f := &cmdutil.Factory{IOStreams: ios, Globals: &cmdutil.Globals{}}
	var got *TripOptions
	cmd := NewCmdTrip(f, func(_ context.Context, o *TripOptions) error {
		got = o
		return nil
	})
	if args == nil {
		args = []string{} // nil would make cobra parse the test binary's own arguments
	}
	cmd.SetArgs(args)
	cmd.SetIn(in)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })
	_, err := cmd.ExecuteC()
	return got, err
}

var tampa = orb.LineString{{-82.5886, 28.0270}, {-82.5850, 28.0500}, {-82.5786, 28.0884}}

const gpx = `<?xml version="1.0"?>
<gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
  <trkpt lat="28.0270" lon="-82.5886"/><trkpt lat="28.0500" lon="-82.5850"/><trkpt lat="28.0884" lon="-82.5786"/>
</trkseg></trk></gpx>`

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNewCmdTrip(t *testing.T) {
	geojsonFile := writeFile(t, "route.geojson", `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},
		"geometry":{"type":"LineString","coordinates":[[-82.5886,28.0270],[-82.5850,28.0500],[-82.5786,28.0884]]}}]}`)
	gpxFile := writeFile(t, "route.gpx", gpx)
	csvFile := writeFile(t, "route.csv", "lat,lng\n28,-82\n")
	far := writeFile(t, "far.json", `[[-82,28],[-82,95]]`)

	tests := []struct {
		name    string
		args    []string
		stdin   string
		check   func(t *testing.T, o *TripOptions)
		wantErr string
	}{
		{name: "from and to", args: []string{"3", "--from", "28.0270,-82.5886", "--to", " 28.0884 , -82.5786"},
			check: func(t *testing.T, o *TripOptions) {
				in := o.Input
				if o.Vehicle != "3" || in.From.Value != (api.Point{Latitude: 28.0270, Longitude: -82.5886}) ||
					in.To.Value != (api.Point{Latitude: 28.0884, Longitude: -82.5786}) || in.Route.Set {
					t.Errorf("input = %+v", in)
				}
				// Unset flags are not sent: the service owns the defaults.
				if in.Speed.Set || in.Interval.Set || in.TimeScale.Set || in.VehicleID.Set || o.NoWait ||
					o.Output.Format != output.FormatTable || o.PollInterval != 500*time.Millisecond {
					t.Errorf("options = %+v", o)
				}
			}},
		{name: "every flag", args: []string{"C2015000003", "--from=1,2", "--to=1,2.5", "--speed", "45", "--interval", "5", "--time-scale", "60", "--no-wait", "-o", "json"},
			check: func(t *testing.T, o *TripOptions) {
				in := o.Input
				if o.Vehicle != "C2015000003" || in.Speed != api.Some(45.0) || in.Interval != api.Some(5.0) || in.TimeScale != api.Some(60.0) ||
					!o.NoWait || o.Output.Format != output.FormatJSON {
					t.Errorf("options = %+v, input %+v", o, in)
				}
			}},
		{name: "GeoJSON file", args: []string{"3", "--route", geojsonFile}, check: wantRoute},
		{name: "GPX file", args: []string{"3", "--route", gpxFile, "--speed", "20"}, check: wantRoute},
		{name: "GPX on stdin", args: []string{"3", "--route", "-"}, stdin: gpx, check: wantRoute},
		{name: "no vehicle", args: []string{"--from", "1,2", "--to", "1,3"}, wantErr: "give the vehicle's id or device serial"},
		{name: "no route", args: []string{"3"}, wantErr: "give a route: --from LAT,LNG --to LAT,LNG, or --route FILE"},
		{name: "from alone", args: []string{"3", "--from", "1,2"}, wantErr: "--from and --to go together"},
		{name: "route and to", args: []string{"3", "--route", gpxFile, "--to", "1,2"}, wantErr: "not both"},
		{name: "bad point", args: []string{"3", "--from", "28.0270", "--to", "1,2"}, wantErr: `--from: "28.0270" is not LAT,LNG`},
		{name: "point out of range", args: []string{"3", "--from", "1,2", "--to", "95,2"}, wantErr: "--to: latitude 95 is out of range"},
		{name: "missing file", args: []string{"3", "--route", filepath.Join(t.TempDir(), "nope.gpx")}, wantErr: "no such file"},
		{name: "not a route file", args: []string{"3", "--route", csvFile}, wantErr: "neither GeoJSON nor GPX"},
		{name: "route out of range", args: []string{"3", "--route", far}, wantErr: "point 2: latitude 95 is out of range"},
		{name: "speed not a number", args: []string{"3", "--from", "1,2", "--to", "1,3", "--speed", "fast"}, wantErr: "invalid argument"},
		{name: "bad format", args: []string{"3", "--from", "1,2", "--to", "1,3", "-o", "xml"}, wantErr: `unknown output format "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(t, tt.stdin, tt.args...)
			if tt.wantErr != "" {
				if code := cmdutil.ExitCode(err); err == nil || code != cmdutil.ExitUsage {
					t.Fatalf("error %v (exit %d), want a usage error", err, code)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q does not say %q", err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("the run function was called with %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
		})
	}
}

// wantRoute checks that the route file reached the request as a GeoJSON LineString.
func wantRoute(t *testing.T, o *TripOptions) {
	t.Helper()
	if !o.Input.Route.Present() || o.Input.From.Set || o.Input.To.Set {
		t.Fatalf("input = %+v", o.Input)
	}
	var g struct {
		Type        string      `json:"type"`
		Coordinates [][]float64 `json:"coordinates"`
	}
	if err := json.Unmarshal(o.Input.Route.Value, &g); err != nil || g.Type != "LineString" {
		t.Fatalf("route %s is not a LineString: %v", o.Input.Route.Value, err)
	}
	ls, err := route.Parse(o.Input.Route.Value)
	if err != nil || !ls.Equal(tampa) {
		t.Errorf("route %v, %v; want %v", ls, err, tampa)
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

// drive is the example, played 600 times faster than real time: about a second.
func drive(c *clitest.CLI, vehicle string, timeScale float64) *TripOptions {
	return &TripOptions{
		IO: c.IO, APIClient: c.F.APIClient, Output: output.Options{Format: output.FormatTable}, Vehicle: vehicle,
		Input: api.SimulationInput{
			From: api.Some(api.Point{Latitude: 28.0270, Longitude: -82.5886}), To: api.Some(api.Point{Latitude: 28.0884, Longitude: -82.5786}),
			TimeScale: api.Some(timeScale),
		},
		PollInterval: 20 * time.Millisecond,
	}
}

func simulation(t *testing.T, env *servertest.Env, id string) api.Simulation {
	t.Helper()
	r := env.Do("GET", "/simulator/trip/"+id, env.DemoToken(), nil)
	var e api.Envelope[api.Simulation]
	r.JSON(t, &e)
	return e.Data
}

var percents = regexp.MustCompile(`(?m)^ *(\d+)%  (\d+)/(\d+) reports, ([\d.]+) of ([\d.]+) mi$`)

func TestTripRunPiped(t *testing.T) {
	env, c := loggedIn(t)
	// Named by its device serial: the command finds the id.
	if err := tripRun(t.Context(), drive(c, "C2015000003", 600)); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, c.Stderr)
	}

	// stdout: one tab-separated row, without decoration.
	row := strings.Split(strings.TrimSuffix(c.Stdout.String(), "\n"), "\t")
	if len(row) != 7 || row[1] != "3" || row[2] != api.SimCompleted || row[5] != "4.29" || strings.Contains(c.Stdout.String(), "\n\n") {
		t.Fatalf("stdout = %q, want one row: id, vehicle, status, trip, points, miles, duration", c.Stdout)
	}
	s := simulation(t, env, row[0])
	if s.Status != api.SimCompleted || row[3] != strconv.FormatInt(*s.TripID, 10) || row[4] != fmt.Sprintf("%d/%d", s.PointsTotal, s.PointsTotal) {
		t.Errorf("row %q for the service's %+v", row, s)
	}
	if _, err := time.ParseDuration(row[6]); err != nil {
		t.Errorf("duration %q: %v", row[6], err)
	}

	// stderr: what is driven, a line per tenth of the way (no terminal codes), the end.
	errOut := c.Stderr.String()
	if strings.ContainsAny(errOut, "\r\x1b") {
		t.Errorf("terminal codes in piped progress: %q", errOut)
	}
	if !strings.HasPrefix(errOut, "Driving vehicle 3 (drive "+row[0]+", trip "+row[3]+"): 4.29 mi at 30 mph, a report every 10 s, time x600.") {
		t.Errorf("stderr starts %q", errOut)
	}
	lines := percents.FindAllStringSubmatch(errOut, -1)
	if len(lines) < 2 || len(lines) > 10 {
		t.Fatalf("%d progress lines, want one per tenth of the way at most:\n%s", len(lines), errOut)
	}
	last := -1
	for _, l := range lines {
		p, _ := strconv.Atoi(l[1])
		if p <= last || p/10 == last/10 {
			t.Errorf("progress %d%% after %d%%: a line per new tenth, increasing", p, last)
		}
		last = p
	}
	if last != 100 || !strings.HasSuffix(errOut, fmt.Sprintf("Drive %s completed: 4.29 mi, trip %s closed.\n", row[0], row[3])) {
		t.Errorf("stderr ends %q", errOut[max(0, len(errOut)-200):])
	}
}

func TestTripRunTerminal(t *testing.T) {
	_, c := loggedIn(t)
	c.IO.SetStdoutTTY(true)
	c.IO.SetStderrTTY(true)
	if err := tripRun(t.Context(), drive(c, "3", 600)); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, c.Stderr)
	}
	out := c.Stdout.String()
	if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(lines) != 2 ||
		!regexp.MustCompile(`^ID +VEHICLE +STATUS +TRIP +POINTS +MILES +DURATION$`).MatchString(lines[0]) ||
		!regexp.MustCompile(`^\d+ +3 +COMPLETED +\d+ +(\d+)/(\d+) +4\.29 +\S+$`).MatchString(lines[1]) {
		t.Errorf("stdout =\n%s\nwant a header and a row", out)
	}
	// One line rewritten in place, closed with a newline before the summary.
	errOut := c.Stderr.String()
	updates := strings.Count(errOut, "\r\x1b[K")
	if updates < 3 {
		t.Errorf("%d updates of the progress line:\n%q", updates, errOut)
	}
	if !strings.Contains(errOut, "\r\x1b[K100%  ") || !regexp.MustCompile(`4\.29 of 4\.29 mi\nDrive \d+ completed`).MatchString(errOut) {
		t.Errorf("stderr does not end at 100%%:\n%q", errOut)
	}
}

func TestTripRunJSON(t *testing.T) {
	env, c := loggedIn(t)
	opts := drive(c, "3", 600)
	opts.Output.Format = output.FormatJSON
	if err := tripRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	var got api.Simulation
	if err := json.Unmarshal(c.Stdout.Bytes(), &got); err != nil {
		t.Fatalf("stdout %q: %v", c.Stdout, err)
	}
	want := simulation(t, env, strconv.FormatInt(got.ID, 10))
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if got.Status != api.SimCompleted || string(gotJSON) != string(wantJSON) {
		t.Errorf("-o json = %s\nthe service has %s", gotJSON, wantJSON)
	}
}

func TestTripRunNoWait(t *testing.T) {
	env, c := loggedIn(t)
	opts := drive(c, "3", 1) // would take 9 minutes
	opts.NoWait = true
	opts.Output.Format = output.FormatJSON
	if err := tripRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	var got api.Simulation
	if err := json.Unmarshal(c.Stdout.Bytes(), &got); err != nil || got.Status != api.SimRunning || got.PointsSent != 1 {
		t.Fatalf("stdout %s: %v", c.Stdout, err)
	}
	if s := simulation(t, env, strconv.FormatInt(got.ID, 10)); s.Status != api.SimRunning {
		t.Errorf("the drive is %s after --no-wait returned, want still RUNNING", s.Status)
	}
}

func TestTripRunInterrupted(t *testing.T) {
	env, c := loggedIn(t)
	ctx, interrupt := context.WithCancel(t.Context())
	defer interrupt()
	// A drive that would take 9 minutes, interrupted (Ctrl-C) as soon as it runs.
	opts := drive(c, "3", 1)
	opts.Started = func(*api.Simulation) { interrupt() }
	err := tripRun(ctx, opts)
	if code := cmdutil.ExitCode(err); code != 130 || !errors.Is(err, cmdutil.ErrSilent) {
		t.Fatalf("error %v (exit %d), want a silent one with a signal's exit code", err, code)
	}
	row := strings.Split(strings.TrimSuffix(c.Stdout.String(), "\n"), "\t")
	if len(row) != 7 || row[2] != api.SimCancelled {
		t.Fatalf("stdout = %q, want the cancelled drive", c.Stdout)
	}
	if !strings.Contains(c.Stderr.String(), "Cancelled drive "+row[0]+": the vehicle stopped after 0.00 mi and its trip is closed.") {
		t.Errorf("stderr = %q", c.Stderr)
	}
	if s := simulation(t, env, row[0]); s.Status != api.SimCancelled {
		t.Errorf("the service has the drive %s", s.Status)
	}
	r := env.Do("GET", "/vehicle/3", env.DemoToken(), nil)
	var v api.Envelope[api.Vehicle]
	r.JSON(t, &v)
	if v.Data.Running {
		t.Error("the vehicle still runs after the drive was cancelled")
	}
}

func TestTripRunFailed(t *testing.T) {
	env, c := loggedIn(t)
	tok := env.DemoToken()
	r := env.Do("POST", "/vehicle/", tok, map[string]any{"label": "Doomed"})
	var v api.Envelope[api.Vehicle]
	r.JSON(t, &v)
	id := strconv.FormatInt(v.Data.VehicleID, 10)
	opts := drive(c, id, 200)
	opts.Started = func(*api.Simulation) {
		if r := env.Do("DELETE", "/vehicle/"+id, tok, nil); r.Status != 200 {
			t.Errorf("delete vehicle: %d %s", r.Status, r.Body)
		}
	}
	err := tripRun(t.Context(), opts)
	if code := cmdutil.ExitCode(err); code != cmdutil.ExitError || err == nil || !strings.Contains(err.Error(), "failed: a data set could not be recorded: vehicle not found") {
		t.Fatalf("error %v (exit %d), want the failure with exit 1", err, code)
	}
	if row := strings.Split(c.Stdout.String(), "\t"); len(row) != 7 || row[2] != api.SimFailed {
		t.Errorf("stdout = %q, want the failed drive", c.Stdout)
	}
}

func TestTripRunRefused(t *testing.T) {
	_, c := loggedIn(t)
	opts := drive(c, "3", 600)
	opts.Input.Speed = api.Some(500.0)
	err := tripRun(t.Context(), opts)
	if code := cmdutil.ExitCode(err); code != cmdutil.ExitError || err == nil || !strings.Contains(err.Error(), "speed must be from 1 to 200") {
		t.Errorf("error %v (exit %d), want the service's 400 with exit 1", err, code)
	}
	if c.Stdout.Len() != 0 {
		t.Errorf("stdout = %q", c.Stdout)
	}
	opts = drive(c, "NO-SUCH-DEVICE", 600)
	if err := tripRun(t.Context(), opts); err == nil || !strings.Contains(err.Error(), "vehicle NO-SUCH-DEVICE: vehicle not found") {
		t.Errorf("unknown vehicle: %v", err)
	}
}
