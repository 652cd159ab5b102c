// Package telemetry takes in what devices report — data sets — and keeps the vehicle's
// state and trips up to date from them: last waypoint, running state, mileage, a trip
// from ignition on to ignition off. Each recorded waypoint fires the vehicle's waypoint
// subscriptions in the same transaction.
package telemetry

import (
	"context"
	"errors"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geo"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/events"
	"github.com/connected-vehicle/vcs/internal/fleet"
	"github.com/connected-vehicle/vcs/internal/store"
)

// Config configures the Service.
type Config struct {
	// Sandbox allows anyone who can see a vehicle to post its data sets; production does
	// not (only devices would).
	Sandbox bool
	// Recorded is told after a data set that created notifications has been committed, so
	// that delivery starts at once.
	Recorded func()
	Now      func() time.Time
}

// Service records data sets and answers for trips.
type Service struct {
	db     *store.DB
	fleet  *fleet.Service
	events *events.Service
	cfg    Config
}

// New returns a Service.
func New(db *store.DB, f *fleet.Service, e *events.Service, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Recorded == nil {
		cfg.Recorded = func() {}
	}
	return &Service{db: db, fleet: f, events: e, cfg: cfg}
}

const (
	maxDatum       = 500
	maxValueLen    = 256
	metersPerMile  = 1609.344
	maxFutureDrift = 24 * time.Hour
)

var keyPattern = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// numericKeys must carry numbers, with the range each may take.
var numericKeys = map[string][2]float64{
	api.KeySpeed:       {0, 1000},
	api.KeyHeading:     {0, 360},
	api.KeyVoltage:     {0, 100},
	api.KeyRPM:         {0, 100000},
	api.KeyTripMileage: {0, 1e6},
	api.KeyOdometer:    {0, 1e8},
}

// validate checks a data set and returns it cleaned: upper-case status, every datum with a
// timestamp.
func (s *Service) validate(in api.DataSetInput) (*api.DataSet, error) {
	var fe api.FieldErrors
	d := &api.DataSet{}
	if !in.Timestamp.Present() {
		fe.Add("timestamp", api.CodeRequired, "timestamp is required")
	} else {
		d.Timestamp = in.Timestamp.Value
		if d.Timestamp.After(s.cfg.Now().Add(maxFutureDrift)) {
			fe.Add("timestamp", api.CodeInvalid, "timestamp is more than a day in the future")
		}
	}
	switch st := strings.ToUpper(in.IgnitionStatus.Value); {
	case !in.IgnitionStatus.Present():
		fe.Add("ignitionStatus", api.CodeRequired, "ignitionStatus is required")
	case st == api.IgnitionOn || st == api.IgnitionRunning || st == api.IgnitionOff:
		d.IgnitionStatus = st
	default:
		fe.Add("ignitionStatus", api.CodeInvalid, "ignitionStatus must be ON, RUNNING or OFF")
	}
	if in.Datum.Null {
		fe.Add("datum", api.CodeInvalid, "datum must be an array")
	}
	if len(in.Datum.Value) > maxDatum {
		fe.Add("datum", api.CodeInvalid, "datum may hold at most %d readings", maxDatum)
	}
	for i, r := range in.Datum.Value {
		if r.Timestamp.IsZero() {
			r.Timestamp = d.Timestamp
		}
		key := strings.ToUpper(r.Key)
		switch {
		case !keyPattern.MatchString(key):
			fe.Add("datum", api.CodeInvalid, "datum[%d]: key %q must be upper-case letters, digits and _", i, r.Key)
		case len(r.Value) > maxValueLen:
			fe.Add("datum", api.CodeInvalid, "datum[%d]: the value of %s is too long", i, key)
		case key == api.KeyWaypoint:
			if _, _, err := r.Value.Waypoint(); err != nil {
				fe.Add("datum", api.CodeInvalid, "datum[%d]: %v", i, err)
			}
		default:
			if bounds, ok := numericKeys[key]; ok {
				f, err := r.Value.Float()
				if err != nil || math.IsNaN(f) || f < bounds[0] || f > bounds[1] {
					fe.Add("datum", api.CodeInvalid, "datum[%d]: %s must be a number from %g to %g", i, key, bounds[0], bounds[1])
				}
			}
		}
		r.Key = key
		d.Datum = append(d.Datum, r)
	}
	if d.Datum == nil {
		d.Datum = []api.Datum{}
	}
	return d, fe.Err("data set could not be recorded")
}

// Record stores a data set of the vehicle that ref names, as a device sends it, and
// applies it: vehicle state, trip, waypoint notifications.
func (s *Service) Record(ctx context.Context, ref string, in api.DataSetInput) (*api.DataSet, error) {
	if !s.cfg.Sandbox {
		return nil, api.Errorf(api.CodeForbidden, "data sets are sent by devices; posting them is open in the sandbox only")
	}
	d, err := s.validate(in)
	if err != nil {
		return nil, err
	}
	fired := 0
	err = s.db.WriteTx(ctx, func(q *store.Queries) error {
		v, err := s.fleet.FindVehicle(ctx, q, ref)
		if err != nil {
			return err
		}
		fired, err = s.apply(ctx, q, v, d)
		return err
	})
	if err != nil {
		return nil, err
	}
	if fired > 0 {
		s.cfg.Recorded()
	}
	return d, nil
}

// waypoints returns the data set's waypoints in the order they were recorded.
func waypoints(d *api.DataSet) []api.Waypoint {
	var out []api.Waypoint
	for _, r := range d.Datum {
		if r.Key != api.KeyWaypoint {
			continue
		}
		lat, lng, _ := r.Value.Waypoint() // validated
		out = append(out, api.Waypoint{Timestamp: r.Timestamp, Latitude: lat, Longitude: lng})
	}
	slices.SortStableFunc(out, func(a, b api.Waypoint) int { return a.Timestamp.Compare(b.Timestamp.Time) })
	return out
}

// reading returns the last value of key in the data set as a number.
func reading(d *api.DataSet, key string) (float64, bool) {
	val, ok := 0.0, false
	for _, r := range d.Datum {
		if r.Key == key {
			if f, err := r.Value.Float(); err == nil {
				val, ok = f, true
			}
		}
	}
	return val, ok
}

// apply records d for v in q's transaction and returns how many notifications it created.
func (s *Service) apply(ctx context.Context, q *store.Queries, v *store.Vehicle, d *api.DataSet) (int, error) {
	d.VehicleID = v.VehicleID
	wps := waypoints(d)
	open, err := q.OpenTrip(ctx, v.VehicleID)
	if errors.Is(err, store.ErrNotFound) {
		open = nil
	} else if err != nil {
		return 0, err
	}
	if open != nil && d.IgnitionStatus == api.IgnitionOn {
		// A new ignition while a trip is open: the device missed an OFF. End the old trip
		// where the vehicle was last seen.
		if err := s.endTrip(ctx, q, open, d.Timestamp, v.LastWaypoint, nil); err != nil {
			return 0, err
		}
		open = nil
	}
	if open == nil && d.IgnitionStatus != api.IgnitionOff {
		open = &api.Trip{VehicleID: v.VehicleID, StartTime: d.Timestamp}
		if len(wps) > 0 {
			open.StartWaypoint = &wps[0]
		}
		if err := q.InsertTrip(ctx, open); err != nil {
			return 0, err
		}
	} else if open != nil && open.StartWaypoint == nil && len(wps) > 0 {
		open.StartWaypoint = &wps[0]
		if err := q.UpdateTrip(ctx, open); err != nil {
			return 0, err
		}
	}
	if open != nil {
		d.TripID = &open.ID
	}
	if err := q.InsertDataSet(ctx, d, s.cfg.Now()); err != nil {
		return 0, err
	}

	// The vehicle's state.
	for i := range wps {
		if v.LastWaypoint == nil || !wps[i].Timestamp.Before(v.LastWaypoint.Timestamp.Time) {
			v.LastWaypoint = &wps[i]
		}
	}
	v.Running = d.IgnitionStatus != api.IgnitionOff
	if v.LastRunningTimestamp == nil || !d.Timestamp.Before(v.LastRunningTimestamp.Time) {
		ts := d.Timestamp
		v.LastRunningTimestamp = &ts
	}
	if odo, ok := reading(d, api.KeyOdometer); ok {
		m := int64(math.Round(odo))
		v.Mileage = &m
	}

	if open != nil && d.IgnitionStatus == api.IgnitionOff {
		tripMiles, reported := reading(d, api.KeyTripMileage)
		var miles *float64
		if reported {
			miles = &tripMiles
		}
		if err := s.endTrip(ctx, q, open, d.Timestamp, v.LastWaypoint, miles); err != nil {
			return 0, err
		}
		if _, hasOdo := reading(d, api.KeyOdometer); !hasOdo && v.Mileage != nil && open.Mileage != nil {
			m := *v.Mileage + int64(math.Round(*open.Mileage))
			v.Mileage = &m
		}
	}
	if err := q.UpdateVehicle(ctx, v); err != nil {
		return 0, err
	}

	fired := 0
	for _, wp := range wps {
		n, err := s.events.Fire(ctx, q, v, wp, d.TripID, &d.ID)
		if err != nil {
			return fired, err
		}
		fired += n
	}
	return fired, nil
}

// endTrip closes a trip at end. Its mileage is what the device reported, or else the
// length of the path through its waypoints.
func (s *Service) endTrip(ctx context.Context, q *store.Queries, t *api.Trip, end api.DateTime, last *api.Waypoint, reported *float64) error {
	t.EndTime = &end
	if last != nil {
		wp := *last
		t.EndWaypoint = &wp
	}
	if reported != nil {
		t.Mileage = reported
	} else {
		sets, err := q.TripDataSets(ctx, t.ID)
		if err != nil {
			return err
		}
		var path orb.LineString
		for _, d := range sets {
			for _, wp := range waypoints(d) {
				path = append(path, orb.Point{wp.Longitude, wp.Latitude})
			}
		}
		miles := math.Round(geo.LengthHaversine(path)/metersPerMile*100) / 100
		t.Mileage = &miles
	}
	return q.UpdateTrip(ctx, t)
}

// TripQuery selects trips.
type TripQuery struct {
	IncludeData bool
	After       *time.Time
	Before      *time.Time
	Descending  bool
	store.Page
}

// ListTrips returns a page of the vehicle's trips and their count.
func (s *Service) ListTrips(ctx context.Context, ref string, tq TripQuery) ([]api.Trip, int, error) {
	var out []api.Trip
	var total int
	err := s.db.ReadTx(ctx, func(q *store.Queries) error {
		v, err := s.fleet.FindVehicle(ctx, q, ref)
		if err != nil {
			return err
		}
		trips, n, err := q.ListTrips(ctx, store.TimeFilter{VehicleID: v.VehicleID, After: tq.After, Before: tq.Before,
			Descending: tq.Descending, Page: tq.Page})
		if err != nil {
			return err
		}
		total = n
		for _, t := range trips {
			if tq.IncludeData {
				if err := withData(ctx, q, t); err != nil {
					return err
				}
			}
			out = append(out, *t)
		}
		return nil
	})
	return out, total, err
}

// GetTrip returns one trip of the vehicle, with its data sets.
func (s *Service) GetTrip(ctx context.Context, ref string, id int64) (*api.Trip, error) {
	var out *api.Trip
	err := s.db.ReadTx(ctx, func(q *store.Queries) error {
		v, err := s.fleet.FindVehicle(ctx, q, ref)
		if err != nil {
			return err
		}
		t, err := q.GetTrip(ctx, v.VehicleID, id)
		if errors.Is(err, store.ErrNotFound) {
			return api.NotFound("trip")
		} else if err != nil {
			return err
		}
		out = t
		return withData(ctx, q, t)
	})
	return out, err
}

func withData(ctx context.Context, q *store.Queries, t *api.Trip) error {
	sets, err := q.TripDataSets(ctx, t.ID)
	if err != nil {
		return err
	}
	t.Data = make([]api.DataSet, len(sets))
	for i, d := range sets {
		t.Data[i] = *d
	}
	return nil
}

// ListDataSets returns a page of the vehicle's data sets and their count.
func (s *Service) ListDataSets(ctx context.Context, ref string, tq TripQuery) ([]api.DataSet, int, error) {
	var out []api.DataSet
	var total int
	err := s.db.ReadTx(ctx, func(q *store.Queries) error {
		v, err := s.fleet.FindVehicle(ctx, q, ref)
		if err != nil {
			return err
		}
		sets, n, err := q.ListDataSets(ctx, store.TimeFilter{VehicleID: v.VehicleID, After: tq.After, Before: tq.Before,
			Descending: tq.Descending, Page: tq.Page})
		if err != nil {
			return err
		}
		total = n
		for _, d := range sets {
			out = append(out, *d)
		}
		return nil
	})
	return out, total, err
}
