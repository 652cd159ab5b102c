package sim

import (
	"math"

	"github.com/paulmach/orb"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/sim/route"
)

// Defaults and limits of a simulation request.
const (
	defaultSpeed     = 30.0 // mph
	defaultInterval  = 10.0 // simulated seconds
	defaultTimeScale = 1.0
	// maxReports bounds a plan, which is held in memory for the whole drive: 20,000
	// reports are 2,700 miles at 30 mph every 10 s.
	maxReports = 20_000
)

// request is a checked SimulationInput.
type request struct {
	vehicleID int64
	route     orb.LineString
	length    float64 // metres
	speed     float64
	interval  float64
	timeScale float64
}

// checkInput validates in and applies the defaults. Every fault is reported at once, each
// under its member's name. A member sent as null takes its default, like an absent one.
func checkInput(in api.SimulationInput) (*request, error) {
	var fe api.FieldErrors
	r := &request{}
	switch {
	case !in.VehicleID.Present():
		fe.Add("vehicleId", api.CodeRequired, "vehicleId is required")
	case in.VehicleID.Value < 1:
		fe.Add("vehicleId", api.CodeInvalid, "vehicleId must be a positive integer")
	default:
		r.vehicleID = in.VehicleID.Value
	}

	number := func(name string, o api.Optional[float64], def, lo, hi float64) float64 {
		if !o.Present() {
			return def
		}
		if v := o.Value; math.IsNaN(v) || v < lo || v > hi {
			fe.Add(name, api.CodeInvalid, "%s must be from %g to %g", name, lo, hi)
		}
		return o.Value
	}
	r.speed = number("speed", in.Speed, defaultSpeed, 1, 200)
	r.interval = number("interval", in.Interval, defaultInterval, 1, 3600)
	r.timeScale = number("timeScale", in.TimeScale, defaultTimeScale, 0.1, 3600)

	hasRoute, hasFrom, hasTo := in.Route.Present(), in.From.Present(), in.To.Present()
	switch {
	case hasRoute && (hasFrom || hasTo):
		fe.Add("route", api.CodeInvalid, "give either a route or from and to, not both")
	case hasRoute:
		ls, err := route.Parse(in.Route.Value)
		if err == nil {
			err = route.Check(ls)
		}
		if err != nil {
			fe.Add("route", api.CodeInvalid, "%v", err)
		} else {
			r.route = ls
		}
	case !hasFrom && !hasTo:
		fe.Add("route", api.CodeRequired, "a route, or from and to, is required")
	default:
		from, okFrom := point(&fe, "from", in.From, hasFrom)
		to, okTo := point(&fe, "to", in.To, hasTo)
		if okFrom && okTo {
			if ls := route.Straight(from, to); route.Check(ls) != nil {
				fe.Add("to", api.CodeInvalid, "to must be somewhere else than from")
			} else {
				r.route = ls
			}
		}
	}

	if r.route != nil {
		r.length = route.Length(r.route)
		if len(fe) == 0 {
			if n := estimateReports(r.length, Params{SpeedMph: r.speed, IntervalSecs: r.interval}); n > maxReports {
				fe.Add("route", api.CodeInvalid,
					"the drive would take about %d reports; at most %d are allowed: raise speed or interval, or shorten the route", n, maxReports)
			}
		}
	}
	if err := fe.Err("simulation could not be started"); err != nil {
		return nil, err
	}
	return r, nil
}

// point checks from or to.
func point(fe *api.FieldErrors, name string, o api.Optional[api.Point], present bool) (orb.Point, bool) {
	if !present {
		fe.Add(name, api.CodeRequired, "%s is required with %s", name, map[string]string{"from": "to", "to": "from"}[name])
		return orb.Point{}, false
	}
	p := orb.Point{o.Value.Longitude, o.Value.Latitude}
	if err := route.CheckPoint(p); err != nil {
		fe.Add(name, api.CodeInvalid, "%s: %v", name, err)
		return orb.Point{}, false
	}
	return p, true
}
