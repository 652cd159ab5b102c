package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
)

const tripColumns = `id, vehicle_id, start_time, end_time, mileage, start_latitude, start_longitude, start_at,
	end_latitude, end_longitude, end_at`

func scanTrip(s scanner) (*api.Trip, error) {
	var (
		t                      api.Trip
		start                  int64
		end, startAt, endAt    sql.NullInt64
		mileage                sql.NullFloat64
		sLat, sLng, eLat, eLng sql.NullFloat64
	)
	if err := s.Scan(&t.ID, &t.VehicleID, &start, &end, &mileage, &sLat, &sLng, &startAt, &eLat, &eLng, &endAt); err != nil {
		return nil, err
	}
	t.StartTime = api.NewDateTime(fromMillis(start))
	if e := fromNullMillis(end); e != nil {
		d := api.NewDateTime(*e)
		t.EndTime = &d
	}
	if mileage.Valid {
		m := mileage.Float64
		t.Mileage = &m
	}
	t.StartWaypoint = waypointOf(sLat, sLng, startAt)
	t.EndWaypoint = waypointOf(eLat, eLng, endAt)
	return &t, nil
}

func waypointOf(lat, lng sql.NullFloat64, at sql.NullInt64) *api.Waypoint {
	if !lat.Valid || !lng.Valid || !at.Valid {
		return nil
	}
	return &api.Waypoint{Timestamp: api.NewDateTime(fromMillis(at.Int64)), Latitude: lat.Float64, Longitude: lng.Float64}
}

func waypointArgs(w *api.Waypoint) (lat, lng sql.NullFloat64, at sql.NullInt64) {
	if w == nil {
		return
	}
	return sql.NullFloat64{Float64: w.Latitude, Valid: true}, sql.NullFloat64{Float64: w.Longitude, Valid: true},
		sql.NullInt64{Int64: millis(w.Timestamp.Time), Valid: true}
}

// InsertTrip stores an open trip and sets its ID.
func (q *Queries) InsertTrip(ctx context.Context, t *api.Trip) error {
	lat, lng, at := waypointArgs(t.StartWaypoint)
	err := q.row(ctx, `INSERT INTO trips (vehicle_id, start_time, start_latitude, start_longitude, start_at)
		VALUES (?, ?, ?, ?, ?) RETURNING id`, t.VehicleID, millis(t.StartTime.Time), lat, lng, at).Scan(&t.ID)
	if err != nil {
		return fmt.Errorf("insert trip: %w", err)
	}
	return nil
}

// OpenTrip returns the vehicle's trip that has not ended, or ErrNotFound.
func (q *Queries) OpenTrip(ctx context.Context, vehicleID int64) (*api.Trip, error) {
	t, err := scanTrip(q.row(ctx, `SELECT `+tripColumns+` FROM trips WHERE vehicle_id = ? AND end_time IS NULL
		ORDER BY start_time DESC, id DESC LIMIT 1`, vehicleID))
	if err != nil {
		return nil, fmt.Errorf("open trip: %w", notFound(err))
	}
	return t, nil
}

// UpdateTrip writes the trip's start waypoint, end and mileage.
func (q *Queries) UpdateTrip(ctx context.Context, t *api.Trip) error {
	sLat, sLng, sAt := waypointArgs(t.StartWaypoint)
	eLat, eLng, eAt := waypointArgs(t.EndWaypoint)
	var end sql.NullInt64
	if t.EndTime != nil {
		end = sql.NullInt64{Int64: millis(t.EndTime.Time), Valid: true}
	}
	var mileage sql.NullFloat64
	if t.Mileage != nil {
		mileage = sql.NullFloat64{Float64: *t.Mileage, Valid: true}
	}
	err := q.exec(ctx, `UPDATE trips SET end_time = ?, mileage = ?, start_latitude = ?, start_longitude = ?, start_at = ?,
		end_latitude = ?, end_longitude = ?, end_at = ? WHERE id = ?`, end, mileage, sLat, sLng, sAt, eLat, eLng, eAt, t.ID)
	if err != nil {
		return fmt.Errorf("update trip %d: %w", t.ID, err)
	}
	return nil
}

// GetTrip returns a vehicle's trip.
func (q *Queries) GetTrip(ctx context.Context, vehicleID, id int64) (*api.Trip, error) {
	t, err := scanTrip(q.row(ctx, `SELECT `+tripColumns+` FROM trips WHERE id = ? AND vehicle_id = ?`, id, vehicleID))
	if err != nil {
		return nil, fmt.Errorf("get trip %d: %w", id, notFound(err))
	}
	return t, nil
}

// TimeFilter selects a vehicle's records by time, newest or oldest first.
type TimeFilter struct {
	VehicleID  int64
	After      *time.Time // started after
	Before     *time.Time // started before
	Descending bool
	Page
}

func (f TimeFilter) where(column string) (string, []any) {
	conds := []string{"vehicle_id = ?"}
	args := []any{f.VehicleID}
	if f.After != nil {
		conds = append(conds, column+" > ?")
		args = append(args, millis(*f.After))
	}
	if f.Before != nil {
		conds = append(conds, column+" < ?")
		args = append(args, millis(*f.Before))
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// ListTrips returns a page of a vehicle's trips by start time, and their count.
func (q *Queries) ListTrips(ctx context.Context, f TimeFilter) ([]*api.Trip, int, error) {
	where, args := f.where("start_time")
	var total int
	if err := q.row(ctx, `SELECT COUNT(*) FROM trips`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count trips: %w", err)
	}
	rows, err := q.rows(ctx, `SELECT `+tripColumns+` FROM trips`+where+` ORDER BY start_time `+dir(f.Descending)+
		`, id `+dir(f.Descending)+` LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list trips: %w", err)
	}
	out, err := collect(rows, scanTrip)
	return out, total, err
}

const dataSetColumns = `id, vehicle_id, trip_id, timestamp, ignition_status, datum`

func scanDataSet(s scanner) (*api.DataSet, error) {
	var (
		d     api.DataSet
		trip  sql.NullInt64
		ts    int64
		datum string
	)
	if err := s.Scan(&d.ID, &d.VehicleID, &trip, &ts, &d.IgnitionStatus, &datum); err != nil {
		return nil, err
	}
	if trip.Valid {
		id := trip.Int64
		d.TripID = &id
	}
	d.Timestamp = api.NewDateTime(fromMillis(ts))
	if err := json.Unmarshal([]byte(datum), &d.Datum); err != nil {
		return nil, fmt.Errorf("data set %d: %w", d.ID, err)
	}
	return &d, nil
}

// InsertDataSet stores d and sets its ID.
func (q *Queries) InsertDataSet(ctx context.Context, d *api.DataSet, now time.Time) error {
	datum, err := json.Marshal(d.Datum)
	if err != nil {
		return err
	}
	var trip sql.NullInt64
	if d.TripID != nil {
		trip = sql.NullInt64{Int64: *d.TripID, Valid: true}
	}
	err = q.row(ctx, `INSERT INTO data_sets (vehicle_id, trip_id, timestamp, ignition_status, datum, created_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, d.VehicleID, trip, millis(d.Timestamp.Time), d.IgnitionStatus,
		string(datum), millis(now)).Scan(&d.ID)
	if err != nil {
		return fmt.Errorf("insert data set: %w", err)
	}
	return nil
}

// ListDataSets returns a page of a vehicle's data sets by timestamp, and their count.
func (q *Queries) ListDataSets(ctx context.Context, f TimeFilter) ([]*api.DataSet, int, error) {
	where, args := f.where("timestamp")
	var total int
	if err := q.row(ctx, `SELECT COUNT(*) FROM data_sets`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count data sets: %w", err)
	}
	rows, err := q.rows(ctx, `SELECT `+dataSetColumns+` FROM data_sets`+where+` ORDER BY timestamp `+dir(f.Descending)+
		`, id `+dir(f.Descending)+` LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list data sets: %w", err)
	}
	out, err := collect(rows, scanDataSet)
	return out, total, err
}

// TripDataSets returns every data set of a trip, in time order.
func (q *Queries) TripDataSets(ctx context.Context, tripID int64) ([]*api.DataSet, error) {
	rows, err := q.rows(ctx, `SELECT `+dataSetColumns+` FROM data_sets WHERE trip_id = ? ORDER BY timestamp, id`, tripID)
	if err != nil {
		return nil, fmt.Errorf("trip data sets: %w", err)
	}
	return collect(rows, scanDataSet)
}
