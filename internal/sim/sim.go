// Package sim is the sandbox's traffic simulator: it drives a vehicle along a route by
// recording data sets exactly as a device would — through telemetry.Service.Record, so that
// trips, vehicle state and waypoint notifications follow as they do for a real device.
//
// Drives live in this process's memory: they do not survive a restart (a drive under way
// when the service stops is ended with an OFF first, see Stop), and a finished drive can be
// read for an hour.
package sim

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/auth"
	"github.com/connected-vehicle/vcs/internal/fleet"
	"github.com/connected-vehicle/vcs/internal/sim/route"
	"github.com/connected-vehicle/vcs/internal/telemetry"
)

// Config configures a Simulator.
type Config struct {
	Logger *slog.Logger
	// Now is the clock that stamps data sets; nil means time.Now. Waits between reports
	// always take real time.
	Now func() time.Time
}

// keepFinished is how long a finished drive can still be read.
const keepFinished = time.Hour

// Simulator runs simulated drives.
type Simulator struct {
	telemetry *telemetry.Service
	fleet     *fleet.Service
	log       *slog.Logger
	now       func() time.Time

	mu      sync.Mutex
	lastID  int64
	drives  map[int64]*drive
	driving map[int64]*drive // vehicleId → its drive under way
	closed  bool
	wg      sync.WaitGroup
}

// drive is one simulated trip.
type drive struct {
	id        int64
	vehicleID int64
	starter   auth.Caller
	plan      []Report
	wait      time.Duration // real time between reports
	stop      chan struct{} // closed to end the drive early
	done      chan struct{} // closed when its goroutine has returned

	// Guarded by Simulator.mu.
	state      api.Simulation
	last       Report // the last report recorded
	finishedAt time.Time
}

// New returns a Simulator.
func New(t *telemetry.Service, f *fleet.Service, cfg Config) *Simulator {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Simulator{telemetry: t, fleet: f, log: cfg.Logger, now: cfg.Now,
		drives: map[int64]*drive{}, driving: map[int64]*drive{}}
}

// Start begins a simulated drive of a vehicle the caller can see. It records the ignition
// ON before it returns, so that the answer carries the trip; the rest of the drive runs in
// the background.
func (s *Simulator) Start(ctx context.Context, in api.SimulationInput) (*api.Simulation, error) {
	req, err := checkInput(in)
	if err != nil {
		return nil, err
	}
	ref := strconv.FormatInt(req.vehicleID, 10)
	v, err := s.fleet.GetVehicle(ctx, ref)
	if err != nil {
		return nil, err
	}
	if v.VehicleID != req.vehicleID {
		// An all-digit ref is also tried as a device serial; the simulator takes ids only.
		return nil, api.NotFound("vehicle")
	}
	caller, _ := auth.CallerFrom(ctx) // present: GetVehicle needs it

	plan := Plan(req.route, Params{SpeedMph: req.speed, IntervalSecs: req.interval, Seed: rand.Uint64()})
	now := s.now()
	d := &drive{
		vehicleID: req.vehicleID,
		starter:   caller,
		plan:      plan,
		wait:      time.Duration(req.interval / req.timeScale * float64(time.Second)),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
		state: api.Simulation{
			VehicleID: req.vehicleID, Status: api.SimRunning,
			SpeedMph: req.speed, IntervalSecs: req.interval, TimeScale: req.timeScale,
			DistanceMiles: miles(req.length), PointsTotal: len(plan),
			StartTimestamp: api.NewDateTime(now),
		},
	}

	s.mu.Lock()
	s.prune(now)
	switch other := s.driving[req.vehicleID]; {
	case s.closed:
		s.mu.Unlock()
		return nil, api.Errorf(api.CodeInternal, "the simulator is shutting down")
	case other != nil:
		s.mu.Unlock()
		return nil, api.Errorf(api.CodeConflict, "vehicle %d is already being driven by simulation %d; cancel it first", req.vehicleID, other.id)
	}
	s.lastID++
	d.id, d.state.ID = s.lastID, s.lastID
	s.drives[d.id] = d
	s.driving[d.vehicleID] = d
	s.wg.Add(1) // under the lock, so that Stop waits for every drive it did not refuse
	s.mu.Unlock()

	// The drive outlives the request that starts it, but acts as its caller: Record checks
	// that the caller can still see the vehicle, for every report.
	bg := context.WithoutCancel(ctx)
	if err := s.record(bg, d, plan[0]); err != nil {
		s.mu.Lock()
		delete(s.drives, d.id)
		delete(s.driving, d.vehicleID)
		s.mu.Unlock()
		close(d.done) // a Cancel that found the drive meanwhile must not wait for it
		s.wg.Done()
		return nil, err
	}
	s.log.InfoContext(ctx, "simulated drive started", "simulation", d.id, "vehicle", d.vehicleID,
		"points", len(req.route), "miles", miles(req.length), "reports", len(plan), "speed", req.speed,
		"interval", req.interval, "timeScale", req.timeScale)
	go s.run(bg, d)
	return s.snapshot(d), nil
}

// run sends the rest of the plan, one report every d.wait, until the end or until the
// drive is stopped.
func (s *Simulator) run(ctx context.Context, d *drive) {
	defer s.wg.Done()
	defer close(d.done)
	timer := time.NewTimer(d.wait)
	defer timer.Stop()
	for _, r := range d.plan[1:] {
		select {
		case <-d.stop:
			s.cancelled(ctx, d)
			return
		case <-timer.C:
		}
		if err := s.record(ctx, d, r); err != nil {
			s.failed(ctx, d, err)
			return
		}
		timer.Reset(d.wait)
	}
	s.finish(d, api.SimCompleted, nil)
	s.log.InfoContext(ctx, "simulated drive completed", "simulation", d.id, "vehicle", d.vehicleID)
}

// record sends one report and notes the progress.
//
// A data set is stamped with the wall clock at the moment it is recorded, as a device's
// clock would stamp it, not with the simulated time of the report: the vehicle's state,
// trips and notifications then say when things happened in this service, and a drive
// played at a time scale above 1 is simply a fast one. (Reports closer together than a
// second share a timestamp: the wire's precision is one second.)
func (s *Simulator) record(ctx context.Context, d *drive, r Report) error {
	ts := s.now()
	ds, err := s.telemetry.Record(ctx, strconv.FormatInt(d.vehicleID, 10), r.DataSet(ts))
	if err != nil {
		return err
	}
	if ds.VehicleID != d.vehicleID {
		// The vehicle is gone and its id named another vehicle's device serial.
		return api.NotFound("vehicle")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d.last = r
	st := &d.state
	st.PointsSent++
	st.DrivenMiles = miles(r.Along)
	st.LastWaypoint = &api.Waypoint{Timestamp: api.NewDateTime(ts), Latitude: r.Point[1], Longitude: r.Point[0]}
	if ds.TripID != nil && st.TripID == nil {
		id := *ds.TripID
		st.TripID = &id
	}
	return nil
}

// cancelled ends a drive stopped early: ignition OFF where the car is, so that the trip
// closes with the mileage driven so far.
func (s *Simulator) cancelled(ctx context.Context, d *drive) {
	s.mu.Lock()
	last := d.last // never the OFF: run stops looking at d.stop once that is sent
	s.mu.Unlock()
	if err := s.record(ctx, d, off(last, last.At)); err != nil {
		s.failed(ctx, d, err)
		return
	}
	s.finish(d, api.SimCancelled, nil)
	s.log.InfoContext(ctx, "simulated drive cancelled", "simulation", d.id, "vehicle", d.vehicleID)
}

// failed ends a drive whose data set could not be recorded. The caller is told the
// service's own word for it (the vehicle is gone, say), never internal details.
func (s *Simulator) failed(ctx context.Context, d *drive, err error) {
	msg := "a data set could not be recorded"
	var apiErr *api.Error
	if errors.As(err, &apiErr) && apiErr.Status() < 500 {
		msg = "a data set could not be recorded: " + apiErr.Error()
	}
	s.log.WarnContext(ctx, "simulated drive failed", "simulation", d.id, "vehicle", d.vehicleID, "err", err)
	s.finish(d, api.SimFailed, &msg)
}

func (s *Simulator) finish(d *drive, status string, msg *string) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	d.state.Status = status
	d.state.Error = msg
	end := api.NewDateTime(now)
	d.state.EndTimestamp = &end
	d.finishedAt = now
	if s.driving[d.vehicleID] == d {
		delete(s.driving, d.vehicleID)
	}
}

// Get reports a drive's progress.
func (s *Simulator) Get(ctx context.Context, id int64) (*api.Simulation, error) {
	d, err := s.find(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.snapshot(d), nil
}

// Cancel stops a drive: the car stops where it is and the ignition goes OFF, which closes
// the trip. It answers once that is done. A drive that has already ended is left as it is.
func (s *Simulator) Cancel(ctx context.Context, id int64) (*api.Simulation, error) {
	d, err := s.find(ctx, id)
	if err != nil {
		return nil, err
	}
	d.halt()
	select {
	case <-d.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.snapshot(d), nil
}

// halt tells the drive's goroutine to stop; it may be called more than once.
func (d *drive) halt() {
	select {
	case <-d.stop:
	default:
		close(d.stop)
	}
}

// Stop ends every drive, for shutdown: each sends its OFF, so that no trip is left open by
// a drive that will not come back. It waits for them.
func (s *Simulator) Stop() {
	s.mu.Lock()
	s.closed = true
	for _, d := range s.driving {
		d.halt()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// find returns the drive if the caller may see it: a drive of a vehicle the caller can
// see, or — once the vehicle is gone — one the caller started.
func (s *Simulator) find(ctx context.Context, id int64) (*drive, error) {
	s.mu.Lock()
	s.prune(s.now())
	d := s.drives[id]
	s.mu.Unlock()
	if d == nil {
		return nil, api.NotFound("simulation")
	}
	v, err := s.fleet.GetVehicle(ctx, strconv.FormatInt(d.vehicleID, 10))
	var apiErr *api.Error
	switch {
	case err == nil && v.VehicleID == d.vehicleID:
		return d, nil
	case err != nil && !(errors.As(err, &apiErr) && apiErr.Code == api.CodeNotFound):
		return nil, err
	}
	if c, ok := auth.CallerFrom(ctx); ok && sameParty(c, d.starter) {
		return d, nil
	}
	return nil, api.NotFound("simulation")
}

// sameParty reports whether two callers act for the same account, or are the same client
// acting for itself: whether they see the same vehicles.
func sameParty(a, b auth.Caller) bool {
	if a.IsClient() || b.IsClient() {
		return a.IsClient() && b.IsClient() && a.ClientID == b.ClientID
	}
	return a.AccountID == b.AccountID
}

// prune forgets drives that finished more than keepFinished ago. s.mu is held.
func (s *Simulator) prune(now time.Time) {
	for id, d := range s.drives {
		if !d.finishedAt.IsZero() && now.Sub(d.finishedAt) > keepFinished {
			delete(s.drives, id)
		}
	}
}

// snapshot copies a drive's state for a caller.
func (s *Simulator) snapshot(d *drive) *api.Simulation {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := d.state
	if st.TripID != nil {
		id := *st.TripID
		st.TripID = &id
	}
	if st.EndTimestamp != nil {
		end := *st.EndTimestamp
		st.EndTimestamp = &end
	}
	if st.LastWaypoint != nil {
		wp := *st.LastWaypoint
		st.LastWaypoint = &wp
	}
	if st.Error != nil {
		msg := *st.Error
		st.Error = &msg
	}
	return &st
}

func miles(m float64) float64 { return math.Round(m/route.MetersPerMile*100) / 100 }
