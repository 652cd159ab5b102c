package sim

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geo"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/sim/route"
)

// Params shape a planned drive.
type Params struct {
	SpeedMph     float64 // cruising speed
	IntervalSecs float64 // simulated seconds between reports
	// Seed drives the small variations of speed, rpm and voltage, so that a plan can be
	// repeated.
	Seed uint64
}

// Report is one data set of a drive, planned ahead.
type Report struct {
	Ignition string        // ON, RUNNING or OFF
	At       time.Duration // simulated time since ignition on
	Point    orb.Point     // [longitude, latitude]
	Along    float64       // metres driven along the route
	SpeedMph float64
	Heading  float64 // degrees clockwise from north, [0, 360)
	RPM      float64
	Voltage  float64
	// TripMiles is the trip's mileage, on OFF only.
	TripMiles float64
}

// Shape of the drive.
const (
	rampReports  = 4    // RUNNING reports to reach cruising speed
	brakeReports = 2    // cruising reports' worth of distance over which the car slows to stop
	slowest      = 0.3  // fraction of cruising speed the car keeps until it stops
	jitter       = 0.04 // speed varies by up to this fraction either way
	idleRPM      = 750
	chargingV    = 14.2 // alternator voltage with the engine running
)

// estimateReports is about how many reports Plan makes for a route of length metres,
// without making them: a cap on the size of a plan must be checked before it is built.
func estimateReports(length float64, p Params) int {
	step := p.SpeedMph * route.MetersPerMile / 3600 * p.IntervalSecs
	return int(math.Ceil(length/step)) + rampReports + 2*brakeReports + 2
}

// Plan returns the data sets of a drive along ls, in order: ON at the start, RUNNING
// reports every IntervalSecs of simulated time, each where the car got to at the speed it
// reports (ramping up over the first reports, easing down near the end, varying a little
// while cruising), the last RUNNING exactly at the route's end, then OFF with the trip's
// mileage. ls must pass route.Check.
func Plan(ls orb.LineString, p Params) []Report {
	rng := rand.New(rand.NewPCG(p.Seed, p.Seed^0x9e3779b97f4a7c15))
	length := route.Length(ls)
	interval := time.Duration(p.IntervalSecs * float64(time.Second))
	cruiseStep := p.SpeedMph * route.MetersPerMile / 3600 * p.IntervalSecs // metres per report at cruising speed

	// cum[i] is the distance along ls to its point i, so that each position is found from
	// the segment it lies on rather than by walking the whole line again.
	cum := make([]float64, len(ls))
	for i := 1; i < len(ls); i++ {
		cum[i] = cum[i-1] + geo.DistanceHaversine(ls[i-1], ls[i])
	}
	seg := 0
	pointAt := func(d float64) orb.Point {
		if d >= length {
			return ls[len(ls)-1]
		}
		for seg < len(ls)-2 && cum[seg+1] <= d {
			seg++
		}
		pt, _ := geo.PointAtDistanceAlongLine(ls[seg:seg+2], d-cum[seg])
		return pt
	}

	on := Report{Ignition: api.IgnitionOn, Point: ls[0], Heading: heading(ls[0], firstAway(ls)), Voltage: 14.1}
	plan := []Report{on}
	prev := on
	for k := 1; prev.Along < length; k++ {
		factor := min(1, float64(k)/rampReports, max(slowest, (length-prev.Along)/(brakeReports*cruiseStep)))
		speed := p.SpeedMph * factor * (1 + jitter*(2*rng.Float64()-1))
		along := min(length, prev.Along+speed*route.MetersPerMile/3600*p.IntervalSecs)
		r := Report{
			Ignition: api.IgnitionRunning,
			At:       time.Duration(k) * interval,
			Point:    pointAt(along),
			Along:    along,
			SpeedMph: speed,
			RPM:      rpm(speed) + 40*(2*rng.Float64()-1),
			Voltage:  chargingV + 0.15*(2*rng.Float64()-1),
		}
		r.Heading = heading(prev.Point, r.Point)
		plan = append(plan, r)
		prev = r
	}
	return append(plan, off(prev, prev.At+interval))
}

// off is the OFF report of a drive that ended at last: where it stopped, with the trip's
// mileage so far.
func off(last Report, at time.Duration) Report {
	return Report{Ignition: api.IgnitionOff, At: at, Point: last.Point, Along: last.Along,
		TripMiles: math.Round(last.Along/route.MetersPerMile*100) / 100}
}

// firstAway is the first point of ls that is not its start: where the car heads at
// ignition on. (route.Check guarantees one.)
func firstAway(ls orb.LineString) orb.Point {
	for _, p := range ls[1:] {
		if p != ls[0] {
			return p
		}
	}
	return ls[len(ls)-1]
}

// heading is the bearing from one point to the next, in [0, 360) as GEN_HEADING wants it
// (geo.Bearing answers in (-180, 180]).
func heading(from, to orb.Point) float64 {
	return math.Mod(geo.Bearing(from, to)+360, 360)
}

// rpm is the engine speed at mph in the highest gear that keeps it above 1500 rpm, like an
// unhurried driver with an automatic box.
func rpm(mph float64) float64 {
	mphPer1000RPM := [...]float64{6, 11, 17, 24, 31, 38} // a six-speed box, first gear first
	r := mph / mphPer1000RPM[0] * 1000
	for _, g := range mphPer1000RPM[1:] {
		if next := mph / g * 1000; next >= 1500 {
			r = next
		}
	}
	return max(r, idleRPM)
}

// DataSet is the report as a device would send it, stamped ts.
func (r Report) DataSet(ts time.Time) api.DataSetInput {
	at := api.NewDateTime(ts)
	datum := func(key string, v api.DatumValue) api.Datum { return api.Datum{Timestamp: at, Key: key, Value: v} }
	num := func(f float64, prec int) api.DatumValue { return api.DatumValue(strconv.FormatFloat(f, 'f', prec, 64)) }
	d := []api.Datum{datum(api.KeyWaypoint, api.WaypointValue(r.Point[1], r.Point[0]))}
	switch r.Ignition {
	case api.IgnitionOn:
		d = append(d, datum(api.KeySpeed, "0"), datum(api.KeyHeading, num(r.Heading, 1)), datum(api.KeyVoltage, num(r.Voltage, 1)))
	case api.IgnitionRunning:
		d = append(d, datum(api.KeySpeed, num(r.SpeedMph, 1)), datum(api.KeyHeading, num(r.Heading, 1)),
			datum(api.KeyRPM, num(r.RPM, 0)), datum(api.KeyVoltage, num(r.Voltage, 1)))
	case api.IgnitionOff:
		d = append(d, datum(api.KeyTripMileage, num(r.TripMiles, 2)))
	}
	return api.DataSetInput{Timestamp: api.Some(at), IgnitionStatus: api.Some(r.Ignition), Datum: api.Some(d)}
}
