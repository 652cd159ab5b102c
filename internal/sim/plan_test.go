package sim

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geo"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/sim/route"
)

// The example: a straight drive of about 4.3 miles in Tampa.
var (
	start   = orb.Point{-82.5886, 28.0270}
	end     = orb.Point{-82.5786, 28.0884}
	example = route.Straight(start, end)
)

func metres(mph, secs float64) float64 { return mph * route.MetersPerMile / 3600 * secs }

func running(plan []Report) []Report {
	var out []Report
	for _, r := range plan {
		if r.Ignition == api.IgnitionRunning {
			out = append(out, r)
		}
	}
	return out
}

func TestPlanSequence(t *testing.T) {
	p := Params{SpeedMph: 30, IntervalSecs: 10, Seed: 7}
	plan := Plan(example, p)
	length := route.Length(example)

	if n := len(plan); n < 3 || plan[0].Ignition != api.IgnitionOn || plan[n-1].Ignition != api.IgnitionOff {
		t.Fatalf("plan of %d reports does not go ON ... OFF", n)
	}
	run := running(plan)
	if len(run) != len(plan)-2 {
		t.Fatalf("%d RUNNING reports between ON and OFF, want %d", len(run), len(plan)-2)
	}
	// About length / (30 mph * 10 s) reports, plus a few for speeding up and slowing down.
	if cruise := length / metres(30, 10); float64(len(run)) < cruise || float64(len(run)) > cruise+8 {
		t.Errorf("%d RUNNING reports for %.0f cruising steps", len(run), cruise)
	}

	on := plan[0]
	if on.Point != start || on.SpeedMph != 0 || on.At != 0 || math.Abs(on.Heading-heading(start, end)) > 1e-9 {
		t.Errorf("ON = %+v, want at the start, still, heading %.1f", on, heading(start, end))
	}
	if h := on.Heading; h < 5 || h > 10 {
		t.Errorf("ON heading %.2f: the end lies a little east of north", h)
	}

	prev := on
	for i, r := range run {
		if want := time.Duration(i+1) * 10 * time.Second; r.At != want {
			t.Errorf("report %d at %v, want %v", i+1, r.At, want)
		}
		step := geo.DistanceHaversine(prev.Point, r.Point)
		if i < len(run)-1 {
			// Where the car got at the speed it reports.
			if want := metres(r.SpeedMph, 10); math.Abs(step-want) > 0.005*want {
				t.Errorf("report %d: %.1f m from the last at %.1f mph, want %.1f m", i+1, step, r.SpeedMph, want)
			}
			if math.Abs(r.Along-prev.Along-step) > 0.01 {
				t.Errorf("report %d: along grew by %.2f m, the waypoint moved %.2f m", i+1, r.Along-prev.Along, step)
			}
		} else if max := metres(r.SpeedMph, 10); step > max*1.001 {
			t.Errorf("last report: %.1f m from the one before, more than %.1f m at its speed", step, max)
		}
		if want := heading(prev.Point, r.Point); math.Abs(r.Heading-want) > 1e-9 {
			t.Errorf("report %d heading %.3f, want the bearing %.3f", i+1, r.Heading, want)
		}
		if r.RPM < idleRPM || r.RPM > 3000 || r.Voltage < 14.0 || r.Voltage > 14.4 {
			t.Errorf("report %d: %.0f rpm, %.2f V", i+1, r.RPM, r.Voltage)
		}
		prev = r
	}

	last := run[len(run)-1]
	if last.Point != end || last.Along != length {
		t.Errorf("last RUNNING at %v (%.3f m along), want exactly the route's end %v (%.3f m)", last.Point, last.Along, end, length)
	}
	off := plan[len(plan)-1]
	wantMiles := math.Round(length/route.MetersPerMile*100) / 100
	if off.Point != end || off.TripMiles != wantMiles || off.At != last.At+10*time.Second {
		t.Errorf("OFF = %+v, want at the end with %.2f mi", off, wantMiles)
	}
	if miles := length / route.MetersPerMile; math.Abs(off.TripMiles-miles) > 0.01*miles {
		t.Errorf("trip mileage %.2f, route %.3f mi", off.TripMiles, miles)
	}
}

func TestPlanSpeedProfile(t *testing.T) {
	const cruise = 40.0
	run := running(Plan(example, Params{SpeedMph: cruise, IntervalSecs: 5, Seed: 1}))
	speeds := make([]float64, len(run))
	for i, r := range run {
		speeds[i] = r.SpeedMph
	}
	// Ramping up: each of the first reports faster than the one before, the first slow.
	for i := 1; i < rampReports; i++ {
		if speeds[i] <= speeds[i-1] {
			t.Errorf("speeds %v do not ramp up", speeds[:rampReports+1])
		}
	}
	if speeds[0] > cruise/2 {
		t.Errorf("first report at %.1f mph, want a start from standstill", speeds[0])
	}
	// Cruising: near the speed asked, and not all the same.
	cruising := speeds[rampReports : len(speeds)-3]
	for _, v := range cruising {
		if math.Abs(v-cruise) > cruise*jitter*1.0001 {
			t.Errorf("cruising at %.2f mph, want %.0f ± %.0f%%", v, cruise, jitter*100)
		}
	}
	if slices.Min(cruising) == slices.Max(cruising) {
		t.Errorf("cruising speed never varies: %v", cruising)
	}
	// Easing down: the last reports slower than cruising, the final one slowest.
	n := len(speeds)
	if speeds[n-1] > 0.6*cruise || speeds[n-2] > 0.85*cruise || speeds[n-1] > speeds[n-3] {
		t.Errorf("speeds %v do not ease down to the end", speeds[n-4:])
	}
	for _, r := range run {
		if r.SpeedMph > cruise*(1+jitter) && r.RPM > 2600 {
			t.Errorf("%.1f mph at %.0f rpm", r.SpeedMph, r.RPM)
		}
	}
}

func TestPlanFollowsCorners(t *testing.T) {
	// North for about a mile and a half, then east.
	corner := orb.Point{-82.5, 28.02}
	ls := orb.LineString{{-82.5, 28.0}, corner, {-82.48, 28.02}}
	plan := Plan(ls, Params{SpeedMph: 30, IntervalSecs: 10, Seed: 3})
	first := geo.DistanceHaversine(ls[0], corner)
	turned := false
	for i, r := range plan[1 : len(plan)-1] {
		switch {
		case r.Along < first:
			if math.Abs(r.Point[0]-(-82.5)) > 1e-9 || (r.Heading > 0.01 && r.Heading < 359.99) {
				t.Errorf("report %d on the northward leg at %v heading %.2f", i+1, r.Point, r.Heading)
			}
		case !turned:
			turned = true // the report that cuts the corner heads in between
		default:
			if math.Abs(r.Heading-90) > 0.1 {
				t.Errorf("report %d on the eastward leg heading %.2f", i+1, r.Heading)
			}
		}
	}
	if !turned || plan[len(plan)-2].Point != ls[2] {
		t.Errorf("the drive did not turn and end at %v: %+v", ls[2], plan[len(plan)-2])
	}
	if want := math.Round(route.Length(ls)/route.MetersPerMile*100) / 100; plan[len(plan)-1].TripMiles != want {
		t.Errorf("trip mileage %.2f, want the route's %.2f", plan[len(plan)-1].TripMiles, want)
	}
}

func TestPlanShortRoute(t *testing.T) {
	ls := orb.LineString{{-82.5, 28.0}, {-82.5, 28.0001}} // 11 metres
	plan := Plan(ls, Params{SpeedMph: 30, IntervalSecs: 10, Seed: 1})
	got := make([]string, len(plan))
	for i, r := range plan {
		got[i] = r.Ignition
	}
	if strings.Join(got, " ") != "ON RUNNING OFF" || plan[1].Point != ls[1] {
		t.Errorf("plan of a short route = %v ending at %v", got, plan[1].Point)
	}
}

func TestPlanIsRepeatable(t *testing.T) {
	a := Plan(example, Params{SpeedMph: 30, IntervalSecs: 10, Seed: 42})
	b := Plan(example, Params{SpeedMph: 30, IntervalSecs: 10, Seed: 42})
	c := Plan(example, Params{SpeedMph: 30, IntervalSecs: 10, Seed: 43})
	if !slices.Equal(a, b) {
		t.Error("the same seed planned two different drives")
	}
	if slices.Equal(a, c) {
		t.Error("two seeds planned the same drive")
	}
}

func TestEstimateReportsBoundsPlan(t *testing.T) {
	for _, tt := range []struct {
		ls orb.LineString
		p  Params
	}{
		{example, Params{SpeedMph: 30, IntervalSecs: 10}},
		{example, Params{SpeedMph: 1, IntervalSecs: 1}},
		{example, Params{SpeedMph: 200, IntervalSecs: 3600}},
		{orb.LineString{{0, 0}, {0, 0.00001}}, Params{SpeedMph: 1, IntervalSecs: 1}},
	} {
		for seed := range uint64(5) {
			tt.p.Seed = seed
			n, est := len(Plan(tt.ls, tt.p)), estimateReports(route.Length(tt.ls), tt.p)
			if n > est || est > n+12 {
				t.Errorf("%+v: estimate %d for a plan of %d", tt.p, est, n)
			}
		}
	}
}

func TestReportDataSet(t *testing.T) {
	plan := Plan(example, Params{SpeedMph: 30, IntervalSecs: 10, Seed: 7})
	ts := time.Date(2025, 3, 4, 5, 6, 7, 890, time.UTC)
	keys := func(in api.DataSetInput) map[string]string {
		m := map[string]string{}
		for _, d := range in.Datum.Value {
			if !d.Timestamp.Equal(ts.Truncate(time.Second)) {
				t.Errorf("%s stamped %v, want the report's time", d.Key, d.Timestamp)
			}
			m[d.Key] = string(d.Value)
		}
		return m
	}

	on := plan[0].DataSet(ts)
	if on.IgnitionStatus.Value != api.IgnitionOn || !on.Timestamp.Value.Equal(ts.Truncate(time.Second)) {
		t.Errorf("ON data set %+v", on)
	}
	if got := keys(on); got[api.KeyWaypoint] != "28.027000,-82.588600" || got[api.KeySpeed] != "0" ||
		got[api.KeyVoltage] != "14.1" || got[api.KeyHeading] == "" || len(got) != 4 {
		t.Errorf("ON readings %v", got)
	}

	r := plan[5]
	got := keys(r.DataSet(ts))
	if len(got) != 5 || got[api.KeyWaypoint] != string(api.WaypointValue(r.Point[1], r.Point[0])) {
		t.Errorf("RUNNING readings %v", got)
	}
	for _, k := range []string{api.KeySpeed, api.KeyHeading, api.KeyRPM, api.KeyVoltage} {
		if _, err := api.DatumValue(got[k]).Float(); err != nil {
			t.Errorf("RUNNING %s = %q, want a number", k, got[k])
		}
	}

	off := plan[len(plan)-1]
	got = keys(off.DataSet(ts))
	if len(got) != 2 || got[api.KeyWaypoint] != "28.088400,-82.578600" || got[api.KeyTripMileage] != strconv.FormatFloat(off.TripMiles, 'f', 2, 64) {
		t.Errorf("OFF readings %v, want the end and %.2f mi", got, off.TripMiles)
	}
}
