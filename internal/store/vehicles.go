package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
)

// Vehicle is a vehicle row: the resource plus the account it belongs to.
type Vehicle struct {
	api.Vehicle
	AccountID int64 `json:"-"`
	// CreatorClientID is the client that created the owning account (read-only, joined in).
	CreatorClientID string `json:"-"`
}

// VehicleFilter selects vehicles. Zero members select everything.
type VehicleFilter struct {
	AccountID       int64
	CreatorClientID string // vehicles of the accounts this client created
	Page
}

const vehicleColumns = `v.id, v.account_id, a.creator_client_id, v.device_id, v.vin, v.label,
	v.auto_assign_device, v.mileage, v.name, v.year, v.make, v.model, v.last_latitude,
	v.last_longitude, v.last_waypoint_at, v.running, v.last_running_at`

const vehicleFrom = ` FROM vehicles v JOIN accounts a ON a.id = v.account_id`

func scanVehicle(s interface{ Scan(...any) error }) (*Vehicle, error) {
	var (
		v                         Vehicle
		creator                   sql.NullString
		device, vin, label        sql.NullString
		year, make_, model        sql.NullString
		mileage                   sql.NullInt64
		lat, lng                  sql.NullFloat64
		waypointAt, lastRunningAt sql.NullInt64
	)
	err := s.Scan(&v.VehicleID, &v.AccountID, &creator, &device, &vin, &label, &v.AutoAssignDevice,
		&mileage, &v.Name, &year, &make_, &model, &lat, &lng, &waypointAt, &v.Running, &lastRunningAt)
	if err != nil {
		return nil, err
	}
	v.CreatorClientID = creator.String
	v.DeviceID, v.VIN, v.Label = fromNullString(device), fromNullString(vin), fromNullString(label)
	v.Year, v.Make, v.Model = fromNullString(year), fromNullString(make_), fromNullString(model)
	if mileage.Valid {
		m := mileage.Int64
		v.Mileage = &m
	}
	if lat.Valid && lng.Valid && waypointAt.Valid {
		v.LastWaypoint = &api.Waypoint{
			Timestamp: api.NewDateTime(fromMillis(waypointAt.Int64)),
			Latitude:  lat.Float64,
			Longitude: lng.Float64,
		}
	}
	if t := fromNullMillis(lastRunningAt); t != nil {
		d := api.NewDateTime(*t)
		v.LastRunningTimestamp = &d
	}
	return &v, nil
}

// vehicleArgs are the values of the columns a caller may change, in vehicleSet order.
func vehicleArgs(v *Vehicle) []any {
	var mileage sql.NullInt64
	if v.Mileage != nil {
		mileage = sql.NullInt64{Int64: *v.Mileage, Valid: true}
	}
	var lat, lng sql.NullFloat64
	var waypointAt sql.NullInt64
	if w := v.LastWaypoint; w != nil {
		lat = sql.NullFloat64{Float64: w.Latitude, Valid: true}
		lng = sql.NullFloat64{Float64: w.Longitude, Valid: true}
		waypointAt = sql.NullInt64{Int64: millis(w.Timestamp.Time), Valid: true}
	}
	var lastRunningAt sql.NullInt64
	if v.LastRunningTimestamp != nil {
		lastRunningAt = sql.NullInt64{Int64: millis(v.LastRunningTimestamp.Time), Valid: true}
	}
	return []any{nullString(v.DeviceID), nullString(v.VIN), nullString(v.Label), v.AutoAssignDevice,
		mileage, v.Name, nullString(v.Year), nullString(v.Make), nullString(v.Model), lat, lng,
		waypointAt, v.Running, lastRunningAt}
}

const vehicleSet = `device_id = ?, vin = ?, label = ?, auto_assign_device = ?, mileage = ?, name = ?,
	year = ?, make = ?, model = ?, last_latitude = ?, last_longitude = ?, last_waypoint_at = ?,
	running = ?, last_running_at = ?`

// InsertVehicle stores v for v.AccountID and sets its VehicleID.
func (q *Queries) InsertVehicle(ctx context.Context, v *Vehicle, now time.Time) error {
	args := append([]any{v.AccountID, millis(now)}, vehicleArgs(v)...)
	err := q.row(ctx, `INSERT INTO vehicles (account_id, created_at, device_id, vin, label,
		auto_assign_device, mileage, name, year, make, model, last_latitude, last_longitude,
		last_waypoint_at, running, last_running_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, args...).Scan(&v.VehicleID)
	if err != nil {
		return fmt.Errorf("insert vehicle: %w", err)
	}
	return nil
}

// GetVehicle returns the vehicle with id.
func (q *Queries) GetVehicle(ctx context.Context, id int64) (*Vehicle, error) {
	v, err := scanVehicle(q.row(ctx, `SELECT `+vehicleColumns+vehicleFrom+` WHERE v.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("get vehicle %d: %w", id, notFound(err))
	}
	return v, nil
}

// GetVehicleByDevice returns the vehicle that holds the device with serial deviceID.
func (q *Queries) GetVehicleByDevice(ctx context.Context, deviceID string) (*Vehicle, error) {
	v, err := scanVehicle(q.row(ctx, `SELECT `+vehicleColumns+vehicleFrom+` WHERE v.device_id = ?`, deviceID))
	if err != nil {
		return nil, fmt.Errorf("get vehicle by device: %w", notFound(err))
	}
	return v, nil
}

// ListVehicles returns one page of the vehicles that f selects, in id order, and how many
// there are in all.
func (q *Queries) ListVehicles(ctx context.Context, f VehicleFilter) ([]*Vehicle, int, error) {
	var conds []string
	var args []any
	if f.AccountID != 0 {
		conds = append(conds, "v.account_id = ?")
		args = append(args, f.AccountID)
	}
	if f.CreatorClientID != "" {
		conds = append(conds, "a.creator_client_id = ?")
		args = append(args, f.CreatorClientID)
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	var total int
	if err := q.row(ctx, `SELECT COUNT(*)`+vehicleFrom+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count vehicles: %w", err)
	}
	rows, err := q.rows(ctx, `SELECT `+vehicleColumns+vehicleFrom+where+` ORDER BY v.id LIMIT ? OFFSET ?`,
		append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list vehicles: %w", err)
	}
	defer rows.Close()
	var out []*Vehicle
	for rows.Next() {
		v, err := scanVehicle(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list vehicles: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list vehicles: %w", err)
	}
	return out, total, nil
}

// UpdateVehicle writes every mutable member of v.
func (q *Queries) UpdateVehicle(ctx context.Context, v *Vehicle) error {
	err := q.exec(ctx, `UPDATE vehicles SET `+vehicleSet+` WHERE id = ?`, append(vehicleArgs(v), v.VehicleID)...)
	if err != nil {
		return fmt.Errorf("update vehicle %d: %w", v.VehicleID, err)
	}
	return nil
}

// DeleteVehicle removes the vehicle and everything that hangs off it.
func (q *Queries) DeleteVehicle(ctx context.Context, id int64) error {
	n, err := q.execN(ctx, `DELETE FROM vehicles WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete vehicle %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("delete vehicle %d: %w", id, ErrNotFound)
	}
	return nil
}
