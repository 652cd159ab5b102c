package sim

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
)

func pt(lat, lng float64) api.Optional[api.Point] {
	return api.Some(api.Point{Latitude: lat, Longitude: lng})
}

func TestCheckInputDefaults(t *testing.T) {
	r, err := checkInput(api.SimulationInput{VehicleID: api.Some[int64](3), From: pt(28.0270, -82.5886), To: pt(28.0884, -82.5786)})
	if err != nil {
		t.Fatal(err)
	}
	if r.vehicleID != 3 || r.speed != 30 || r.interval != 10 || r.timeScale != 1 || len(r.route) != 2 || r.length < 6900 || r.length > 6910 {
		t.Errorf("request = %+v", r)
	}
	r, err = checkInput(api.SimulationInput{VehicleID: api.Some[int64](1), Route: api.Some(json.RawMessage(`[[-82.5,28],[-82.5,28.1],[-82.4,28.1]]`)),
		Speed: api.Some(200.0), Interval: api.Some(1.0), TimeScale: api.Some(0.1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.route) != 3 || r.speed != 200 || r.interval != 1 || r.timeScale != 0.1 {
		t.Errorf("request = %+v", r)
	}
	// null takes the default, like an absent member.
	r, err = checkInput(api.SimulationInput{VehicleID: api.Some[int64](1), From: pt(28, -82), To: pt(28.01, -82), Speed: api.Null[float64]()})
	if err != nil || r.speed != 30 {
		t.Errorf("speed null = %v, %v", r, err)
	}
}

func TestCheckInputFaults(t *testing.T) {
	line := api.Some(json.RawMessage(`[[-82.5,28],[-82.5,28.1]]`))
	tests := []struct {
		name string
		in   api.SimulationInput
		want map[string]string // field → part of its message
	}{
		{"nothing", api.SimulationInput{}, map[string]string{"vehicleId": "vehicleId is required", "route": "a route, or from and to, is required"}},
		{"bad vehicle", api.SimulationInput{VehicleID: api.Some[int64](0), Route: line}, map[string]string{"vehicleId": "positive"}},
		{"route and from", api.SimulationInput{VehicleID: api.Some[int64](1), Route: line, From: pt(1, 1)}, map[string]string{"route": "not both"}},
		{"from alone", api.SimulationInput{VehicleID: api.Some[int64](1), From: pt(1, 1)}, map[string]string{"to": "to is required with from"}},
		{"to alone", api.SimulationInput{VehicleID: api.Some[int64](1), To: pt(1, 1)}, map[string]string{"from": "from is required with to"}},
		{"from out of range", api.SimulationInput{VehicleID: api.Some[int64](1), From: pt(91, 1), To: pt(1, 181)},
			map[string]string{"from": "latitude 91 is out of range", "to": "longitude 181 is out of range"}},
		{"from is to", api.SimulationInput{VehicleID: api.Some[int64](1), From: pt(28, -82), To: pt(28, -82)}, map[string]string{"to": "somewhere else"}},
		{"bad route", api.SimulationInput{VehicleID: api.Some[int64](1), Route: api.Some(json.RawMessage(`{"type":"Point","coordinates":[1,2]}`))},
			map[string]string{"route": "GeoJSON Point is not a line"}},
		{"one point", api.SimulationInput{VehicleID: api.Some[int64](1), Route: api.Some(json.RawMessage(`[{"latitude":1,"longitude":2}]`))},
			map[string]string{"route": "at least 2"}},
		{"numbers out of range", api.SimulationInput{VehicleID: api.Some[int64](1), Route: line, Speed: api.Some(0.5), Interval: api.Some(3601.0), TimeScale: api.Some(0.05)},
			map[string]string{"speed": "speed must be from 1 to 200", "interval": "interval must be from 1 to 3600", "timeScale": "timeScale must be from 0.1 to 3600"}},
		{"too many reports", api.SimulationInput{VehicleID: api.Some[int64](1), From: pt(28, -82), To: pt(38, -82), Speed: api.Some(1.0), Interval: api.Some(1.0)},
			map[string]string{"route": "at most 20000 are allowed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkInput(tt.in)
			var apiErr *api.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v, want an *api.Error", err)
			}
			if apiErr.Status() != 400 || apiErr.Detail != "simulation could not be started" {
				t.Errorf("error %d %q", apiErr.Status(), apiErr.Detail)
			}
			got := map[string]string{}
			for _, fe := range apiErr.FieldErrors {
				got[fe.FieldName] = fe.ErrorDisplay
			}
			for field, want := range tt.want {
				if !strings.Contains(got[field], want) {
					t.Errorf("%s: %q, want it to say %q (all: %v)", field, got[field], want, got)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("faults %v, want only %v", got, tt.want)
			}
		})
	}
}

func TestPruneForgetsOnlyOldFinishedDrives(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	s := New(nil, nil, Config{Now: func() time.Time { return now }})
	s.drives[1] = &drive{id: 1, finishedAt: now.Add(-keepFinished - time.Second)}
	s.drives[2] = &drive{id: 2, finishedAt: now.Add(-keepFinished + time.Second)}
	s.drives[3] = &drive{id: 3} // under way, however old
	s.prune(now)
	if _, ok := s.drives[1]; ok || len(s.drives) != 2 || s.drives[2] == nil || s.drives[3] == nil {
		t.Errorf("after prune: %v, want drives 2 and 3", s.drives)
	}
}
