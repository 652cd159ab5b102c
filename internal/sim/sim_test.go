package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

// The example drive, about 4.3 miles; at time scale 600 its 9 minutes take about
// a second.
var (
	from = api.Point{Latitude: 28.0270, Longitude: -82.5886}
	to   = api.Point{Latitude: 28.0884, Longitude: -82.5786}
)

func fast(vehicle int64) map[string]any {
	return map[string]any{"vehicleId": vehicle, "from": from, "to": to, "timeScale": 600}
}

// slow is a drive that will not end during a test: a report every 10 real seconds.
func slow(vehicle int64) map[string]any {
	return map[string]any{"vehicleId": vehicle, "from": from, "to": to}
}

func start(t *testing.T, env *servertest.Env, token string, body any) api.Simulation {
	t.Helper()
	r := env.Do("POST", "/simulator/trip/", token, body)
	if r.Status != http.StatusOK {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	var e api.Envelope[api.Simulation]
	r.JSON(t, &e)
	if e.Key != api.KeySimulation {
		t.Fatalf("start answered with %q: %s", e.Key, r.Body)
	}
	return e.Data
}

func get[T any](t *testing.T, env *servertest.Env, token, path string) T {
	t.Helper()
	r := env.Do("GET", path, token, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var e api.Envelope[T]
	r.JSON(t, &e)
	return e.Data
}

// waitFor polls the drive until it leaves RUNNING, within a deadline.
func waitFor(t *testing.T, env *servertest.Env, token string, id int64) api.Simulation {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		s := get[api.Simulation](t, env, token, fmt.Sprintf("/simulator/trip/%d", id))
		if s.Status != api.SimRunning {
			return s
		}
		select {
		case <-ctx.Done():
			t.Fatalf("drive %d still running after the deadline: %+v", id, s)
		case <-tick.C:
		}
	}
}

func near(w *api.Waypoint, p api.Point) bool {
	return w != nil && math.Abs(w.Latitude-p.Latitude) < 1e-6 && math.Abs(w.Longitude-p.Longitude) < 1e-6
}

// receiver records the notifications it is sent, in order.
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []api.NotificationBody
	new chan struct{}
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{new: make(chan struct{}, 1)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var n api.NotificationBody
		b, _ := io.ReadAll(req.Body)
		if err := json.Unmarshal(b, &n); err != nil {
			t.Errorf("notification %s: %v", b, err)
		}
		r.mu.Lock()
		r.got = append(r.got, n)
		r.mu.Unlock()
		select {
		case r.new <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(r.Close)
	return r
}

// await returns the first n notifications once they have come, within a deadline.
func (r *receiver) await(t *testing.T, n int) []api.NotificationBody {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		r.mu.Lock()
		got := append([]api.NotificationBody(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d notifications arrived, want %d", len(got), n)
		case <-r.new:
		}
	}
}

func TestDriveCompletes(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	before := get[api.Vehicle](t, env, tok, "/vehicle/3")
	if before.Mileage == nil || before.Running {
		t.Fatalf("seeded vehicle 3 = %+v", before)
	}
	recv := newReceiver(t)
	if r := env.Do("POST", "/vehicle/3/eventSubscription/WAYPOINT/", tok, map[string]any{"postUrl": recv.URL + "/hook"}); r.Status != http.StatusOK {
		t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
	began := time.Now().Truncate(time.Second)

	s := start(t, env, tok, fast(3))
	if s.ID < 1 || s.VehicleID != 3 || s.Status != api.SimRunning || s.TripID == nil || s.PointsSent < 1 ||
		s.PointsTotal < 50 || s.SpeedMph != 30 || s.IntervalSecs != 10 || s.TimeScale != 600 ||
		s.DistanceMiles < 4.2 || s.DistanceMiles > 4.4 || !near(s.LastWaypoint, from) && s.PointsSent == 1 {
		t.Fatalf("started drive = %+v", s)
	}

	done := waitFor(t, env, tok, s.ID)
	if done.Status != api.SimCompleted || done.PointsSent != done.PointsTotal || done.DrivenMiles != done.DistanceMiles ||
		done.EndTimestamp == nil || done.Error != nil || !near(done.LastWaypoint, to) || *done.TripID != *s.TripID {
		t.Fatalf("finished drive = %+v", done)
	}

	v := get[api.Vehicle](t, env, tok, "/vehicle/3")
	if !near(v.LastWaypoint, to) || v.Running || v.LastRunningTimestamp == nil || v.LastRunningTimestamp.Before(began) {
		t.Errorf("vehicle after the drive: last waypoint %+v, running %v, last running %v", v.LastWaypoint, v.Running, v.LastRunningTimestamp)
	}
	if want := *before.Mileage + int64(math.Round(done.DistanceMiles)); v.Mileage == nil || *v.Mileage != want {
		t.Errorf("mileage %v, want %d + %.2f rounded = %d", v.Mileage, *before.Mileage, done.DistanceMiles, want)
	}

	trips := get[[]api.Trip](t, env, tok, "/vehicle/3/trip/")
	var trip *api.Trip
	for i := range trips {
		if trips[i].ID == *done.TripID {
			trip = &trips[i]
		}
	}
	if trip == nil {
		t.Fatalf("trip %d is not among the vehicle's trips %+v", *done.TripID, trips)
	}
	if trip.EndTime == nil || trip.Mileage == nil || *trip.Mileage != done.DistanceMiles ||
		!near(trip.StartWaypoint, from) || !near(trip.EndWaypoint, to) {
		t.Errorf("trip = %+v, want closed with %.2f mi from start to end", trip, done.DistanceMiles)
	}

	full := get[api.Trip](t, env, tok, fmt.Sprintf("/vehicle/3/trip/%d", trip.ID))
	if len(full.Data) != done.PointsTotal {
		t.Fatalf("the trip holds %d data sets, the drive sent %d", len(full.Data), done.PointsTotal)
	}
	first, last := full.Data[0], full.Data[len(full.Data)-1]
	if first.IgnitionStatus != api.IgnitionOn || last.IgnitionStatus != api.IgnitionOff {
		t.Errorf("data sets run from %s to %s, want ON to OFF", first.IgnitionStatus, last.IgnitionStatus)
	}
	var waypoints []string
	for _, d := range full.Data {
		for _, r := range d.Datum {
			if r.Key == api.KeyWaypoint {
				waypoints = append(waypoints, string(r.Value))
			}
		}
	}

	// One notification per waypoint, in the order they were recorded.
	got := recv.await(t, len(waypoints))
	if len(got) != len(waypoints) {
		t.Fatalf("%d notifications for %d waypoints", len(got), len(waypoints))
	}
	for i, n := range got {
		if w := string(api.WaypointValue(n.RecordedWaypoint.Latitude, n.RecordedWaypoint.Longitude)); w != waypoints[i] {
			t.Fatalf("notification %d is for %s, waypoint %d was %s", i+1, w, i+1, waypoints[i])
		}
		if n.VehicleID != 3 || n.TripID == nil || *n.TripID != trip.ID {
			t.Errorf("notification %d: vehicle %d trip %v", i+1, n.VehicleID, n.TripID)
		}
	}
}

func TestDriveAlongRoute(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	line := map[string]any{"type": "Feature", "properties": map[string]any{}, "geometry": map[string]any{
		"type": "LineString", "coordinates": [][]float64{{-82.5, 28.0}, {-82.5, 28.01}, {-82.49, 28.01}}}}
	s := start(t, env, tok, map[string]any{"vehicleId": 2, "route": line, "speed": 60, "interval": 5, "timeScale": 3600})
	done := waitFor(t, env, tok, s.ID)
	if done.Status != api.SimCompleted || !near(done.LastWaypoint, api.Point{Latitude: 28.01, Longitude: -82.49}) {
		t.Fatalf("drive = %+v", done)
	}
	trip := get[api.Trip](t, env, tok, fmt.Sprintf("/vehicle/2/trip/%d", *done.TripID))
	// 0.01° north then 0.01° east at 28°N: about 0.69 + 0.61 miles.
	if trip.Mileage == nil || math.Abs(*trip.Mileage-1.30) > 0.02 || *trip.Mileage != done.DistanceMiles {
		t.Errorf("trip mileage %v, drive distance %.2f, want about 1.30", trip.Mileage, done.DistanceMiles)
	}
	// The speeds reported stay near 60 mph while cruising.
	fastest := 0.0
	for _, d := range trip.Data {
		for _, r := range d.Datum {
			if r.Key == api.KeySpeed {
				v, _ := r.Value.Float()
				fastest = max(fastest, v)
			}
		}
	}
	if fastest < 55 || fastest > 65 {
		t.Errorf("fastest reported speed %.1f mph, want about 60", fastest)
	}
}

func TestCancel(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	s := start(t, env, tok, slow(3))

	r := env.Do("DELETE", fmt.Sprintf("/simulator/trip/%d", s.ID), tok, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	var e api.Envelope[api.Simulation]
	r.JSON(t, &e)
	c := e.Data
	// The DELETE answers once the OFF is recorded: ON and OFF, where the car stood.
	if c.Status != api.SimCancelled || c.PointsSent != 2 || c.EndTimestamp == nil || c.DrivenMiles != 0 || !near(c.LastWaypoint, from) {
		t.Fatalf("cancelled drive = %+v", c)
	}
	if again := get[api.Simulation](t, env, tok, fmt.Sprintf("/simulator/trip/%d", s.ID)); again.Status != api.SimCancelled {
		t.Errorf("GET after cancel: %+v", again)
	}
	v := get[api.Vehicle](t, env, tok, "/vehicle/3")
	trip := get[api.Trip](t, env, tok, fmt.Sprintf("/vehicle/3/trip/%d", *s.TripID))
	if v.Running || trip.EndTime == nil || trip.Mileage == nil || *trip.Mileage != 0 || len(trip.Data) != 2 {
		t.Errorf("after cancel: running %v, trip %+v", v.Running, trip)
	}
	// Cancelling an ended drive changes nothing.
	if r := env.Do("DELETE", fmt.Sprintf("/simulator/trip/%d", s.ID), tok, nil); r.Status != http.StatusOK {
		t.Errorf("second cancel: %d %s", r.Status, r.Body)
	}
	// The vehicle is free for another drive.
	next := start(t, env, tok, fast(3))
	if next.ID <= s.ID {
		t.Errorf("ids %d then %d, want increasing", s.ID, next.ID)
	}
	waitFor(t, env, tok, next.ID)
}

func TestSecondDriveOfAVehicleConflicts(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	s := start(t, env, tok, slow(3))
	r := env.Do("POST", "/simulator/trip/", tok, fast(3))
	if r.Status != http.StatusConflict || r.Error(t).Code != api.CodeConflict {
		t.Errorf("second drive of vehicle 3: %d %s, want 409 CONFLICT", r.Status, r.Body)
	}
	// Another vehicle may drive meanwhile.
	other := start(t, env, tok, fast(1))
	if done := waitFor(t, env, tok, other.ID); done.Status != api.SimCompleted {
		t.Errorf("vehicle 1's drive: %+v", done)
	}
	if r := env.Do("DELETE", fmt.Sprintf("/simulator/trip/%d", s.ID), tok, nil); r.Status != http.StatusOK {
		t.Errorf("cancel: %d %s", r.Status, r.Body)
	}
}

// otherAccount creates a second account and returns its token.
func otherAccount(t *testing.T, env *servertest.Env) string {
	t.Helper()
	r := env.Do("POST", "/account/", env.ClientToken(), map[string]any{
		"firstName": "Ann", "lastName": "Lee", "zipcode": "33602", "timeZone": "America/New_York",
		"preferredContact": "EMAIL", "email": "ann@example.com", "username": "ann", "password": "pass-ann-123",
	})
	if r.Status != http.StatusOK {
		t.Fatalf("create account: %d %s", r.Status, r.Body)
	}
	return env.Login("ann", "pass-ann-123").AccessToken
}

func TestOthersCannotSeeOrDrive(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	ann := otherAccount(t, env)

	if r := env.Do("POST", "/simulator/trip/", ann, fast(3)); r.Status != http.StatusNotFound {
		t.Errorf("another account drives vehicle 3: %d %s, want 404", r.Status, r.Body)
	}
	s := start(t, env, tok, slow(3))
	path := fmt.Sprintf("/simulator/trip/%d", s.ID)
	for _, method := range []string{"GET", "DELETE"} {
		if r := env.Do(method, path, ann, nil); r.Status != http.StatusNotFound {
			t.Errorf("%s of the demo's drive by another account: %d %s, want 404", method, r.Status, r.Body)
		}
	}
	if r := env.Do("GET", "/simulator/trip/999", tok, nil); r.Status != http.StatusNotFound {
		t.Errorf("GET of no drive: %d", r.Status)
	}
	if r := env.Do("GET", path, "", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("GET without a token: %d", r.Status)
	}
	if got := get[api.Simulation](t, env, tok, path); got.Status != api.SimRunning {
		t.Errorf("the other account's DELETE stopped the drive: %+v", got)
	}
}

func TestBadInput(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	tests := []struct {
		name   string
		body   any
		fields []string
	}{
		{"no route", map[string]any{"vehicleId": 3}, []string{"route"}},
		{"no vehicle", map[string]any{"from": from, "to": to}, []string{"vehicleId"}},
		{"speeds", map[string]any{"vehicleId": 3, "from": from, "to": to, "speed": 300, "interval": 0.5, "timeScale": 5000},
			[]string{"speed", "interval", "timeScale"}},
		{"one point", map[string]any{"vehicleId": 3, "route": []any{map[string]any{"latitude": 28, "longitude": -82}}}, []string{"route"}},
		{"latitude out of range", map[string]any{"vehicleId": 3, "route": [][]float64{{-82, 28}, {-82, 95}}}, []string{"route"}},
		{"from out of range", map[string]any{"vehicleId": 3, "from": api.Point{Latitude: -91}, "to": to}, []string{"from"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := env.Do("POST", "/simulator/trip/", tok, tt.body)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("%d %s, want 400", r.Status, r.Body)
			}
			e := r.Error(t)
			got := map[string]bool{}
			for _, f := range e.FieldErrors {
				got[f.FieldName] = true
			}
			for _, f := range tt.fields {
				if !got[f] {
					t.Errorf("no fault for %s in %s", f, r.Body)
				}
			}
			if len(got) != len(tt.fields) {
				t.Errorf("faults %v, want %v", got, tt.fields)
			}
		})
	}
	// A malformed member is the request decoder's 400.
	if r := env.Do("POST", "/simulator/trip/", tok, `{"vehicleId": 3, "speed": "fast", "from": {"latitude": 1, "longitude": 2}, "to": {"latitude": 1, "longitude": 3}}`); r.Status != http.StatusBadRequest {
		t.Errorf("speed as text: %d %s", r.Status, r.Body)
	}
	// Nothing was driven.
	if v := get[api.Vehicle](t, env, tok, "/vehicle/3"); v.Running || v.LastWaypoint != nil {
		t.Errorf("vehicle 3 after refused drives: %+v", v)
	}
}

func TestDeletedVehicleFailsTheDrive(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	r := env.Do("POST", "/vehicle/", tok, map[string]any{"label": "Doomed"})
	if r.Status != http.StatusOK {
		t.Fatalf("create vehicle: %d %s", r.Status, r.Body)
	}
	var e api.Envelope[api.Vehicle]
	r.JSON(t, &e)
	id := e.Data.VehicleID
	// A report every 50 ms: the drive is under way when the vehicle goes.
	s := start(t, env, tok, map[string]any{"vehicleId": id, "from": from, "to": to, "timeScale": 200})
	if r := env.Do("DELETE", "/vehicle/"+strconv.FormatInt(id, 10), tok, nil); r.Status != http.StatusOK {
		t.Fatalf("delete vehicle: %d %s", r.Status, r.Body)
	}
	// Its starter can still read how it ended.
	done := waitFor(t, env, tok, s.ID)
	if done.Status != api.SimFailed || done.Error == nil || *done.Error != "a data set could not be recorded: vehicle not found" || done.EndTimestamp == nil {
		t.Errorf("drive of a deleted vehicle = %+v", done)
	}
	if r := env.Do("GET", fmt.Sprintf("/simulator/trip/%d", s.ID), otherAccount(t, env), nil); r.Status != http.StatusNotFound {
		t.Errorf("another account reads the failed drive: %d", r.Status)
	}
}

func TestShutdownEndsDrives(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	s := start(t, env, tok, slow(3))
	env.Restart() // Close stops the simulator before the database
	v := get[api.Vehicle](t, env, tok, "/vehicle/3")
	trip := get[api.Trip](t, env, tok, fmt.Sprintf("/vehicle/3/trip/%d", *s.TripID))
	if v.Running || trip.EndTime == nil || len(trip.Data) != 2 || trip.Data[1].IgnitionStatus != api.IgnitionOff {
		t.Errorf("after a restart: running %v, trip %+v", v.Running, trip)
	}
	// Drives are kept in memory only.
	if r := env.Do("GET", fmt.Sprintf("/simulator/trip/%d", s.ID), tok, nil); r.Status != http.StatusNotFound {
		t.Errorf("a drive survived the restart: %d %s", r.Status, r.Body)
	}
}
