package fleet

import (
	"context"
	"errors"
	"strconv"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/auth"
	"github.com/connected-vehicle/vcs/internal/store"
)

// ListVehicles returns the caller's page of vehicles, in id order, and how many it may see.
func (s *Service) ListVehicles(ctx context.Context, page store.Page) ([]api.Vehicle, int, error) {
	c, err := callerFrom(ctx)
	if err != nil {
		return nil, 0, err
	}
	f := store.VehicleFilter{Page: page}
	if c.IsClient() {
		f.CreatorClientID = c.ClientID
	} else {
		f.AccountID = c.AccountID
	}
	var rows []*store.Vehicle
	var total int
	err = s.db.ReadTx(ctx, func(q *store.Queries) error {
		rows, total, err = q.ListVehicles(ctx, f)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]api.Vehicle, len(rows))
	for i, v := range rows {
		out[i] = v.Vehicle
	}
	return out, total, nil
}

// GetVehicle returns the vehicle that ref names, a vehicleId or a device serial.
func (s *Service) GetVehicle(ctx context.Context, ref string) (*api.Vehicle, error) {
	v, err := s.FindVehicle(ctx, s.db.Read(), ref)
	if err != nil {
		return nil, err
	}
	return &v.Vehicle, nil
}

// FindVehicle resolves ref among the vehicles the caller may see. An all-digit ref is tried
// as a vehicleId first and then as a device serial; anything else is a device serial.
func (s *Service) FindVehicle(ctx context.Context, q *store.Queries, ref string) (*store.Vehicle, error) {
	c, err := callerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		v, err := q.GetVehicle(ctx, id)
		switch {
		case err == nil && canSeeAccount(c, v.AccountID, v.CreatorClientID):
			return v, nil
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	v, err := q.GetVehicleByDevice(ctx, ref)
	if err != nil {
		return nil, notFoundAs(err, "vehicle")
	}
	if !canSeeAccount(c, v.AccountID, v.CreatorClientID) {
		return nil, api.NotFound("vehicle")
	}
	return v, nil
}

// CreateVehicle adds a vehicle to the caller's account. A client token acts for no account,
// so it cannot; it creates vehicles with the token of an account it created.
func (s *Service) CreateVehicle(ctx context.Context, in api.VehicleInput) (*api.Vehicle, error) {
	c, err := callerFrom(ctx)
	if err != nil {
		return nil, err
	}
	if c.IsClient() {
		return nil, api.Errorf(api.CodeForbidden,
			"vehicles are created with an account's token; exchange the account's code for one")
	}
	if err := validateVehicleInput(in).Err("vehicle could not be created"); err != nil {
		return nil, err
	}
	v := &store.Vehicle{AccountID: c.AccountID}
	v.AutoAssignDevice = true
	applyVehicleInput(v, in)
	err = s.db.WriteTx(ctx, func(q *store.Queries) error {
		if err := s.takeDevice(ctx, q, v, "vehicle could not be created"); err != nil {
			return err
		}
		if err := q.InsertVehicle(ctx, v, s.now()); err != nil {
			return uniqueAs(q, err, "deviceId", "vehicle could not be created")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &v.Vehicle, nil
}

// UpdateVehicle changes the members present in in; absent members stay as they are.
func (s *Service) UpdateVehicle(ctx context.Context, ref string, in api.VehicleInput) (*api.Vehicle, error) {
	if err := validateVehicleInput(in).Err("vehicle could not be updated"); err != nil {
		return nil, err
	}
	var out *api.Vehicle
	err := s.db.WriteTx(ctx, func(q *store.Queries) error {
		v, err := s.FindVehicle(ctx, q, ref)
		if err != nil {
			return err
		}
		applyVehicleInput(v, in)
		if in.DeviceID.Present() {
			if err := s.takeDevice(ctx, q, v, "vehicle could not be updated"); err != nil {
				return err
			}
		}
		if err := q.UpdateVehicle(ctx, v); err != nil {
			return uniqueAs(q, err, "deviceId", "vehicle could not be updated")
		}
		out = &v.Vehicle
		return nil
	})
	return out, err
}

// takeDevice makes v's device serial free for v. A vehicle that holds it gives it up when
// that vehicle allows automatic reassignment (autoAssignDevice) and is one the caller may
// change; otherwise v cannot have it. (A device never moves out of another account: that
// would let anyone take anyone's device.)
func (s *Service) takeDevice(ctx context.Context, q *store.Queries, v *store.Vehicle, detail string) error {
	if v.DeviceID == nil {
		return nil
	}
	c, err := callerFrom(ctx)
	if err != nil {
		return err
	}
	holder, err := q.GetVehicleByDevice(ctx, *v.DeviceID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return err
	case holder.VehicleID == v.VehicleID:
		return nil
	case !holder.AutoAssignDevice || !canSeeAccount(c, holder.AccountID, holder.CreatorClientID):
		var fe api.FieldErrors
		fe.Add("deviceId", api.CodeUnique, "device %s is installed in another vehicle that does not allow reassignment", *v.DeviceID)
		return &api.Error{Code: api.CodeUnique, Detail: detail, FieldErrors: fe}
	}
	holder.DeviceID = nil
	return q.UpdateVehicle(ctx, holder)
}

// DeleteVehicle removes the vehicle and everything recorded about it.
func (s *Service) DeleteVehicle(ctx context.Context, ref string) error {
	return s.db.WriteTx(ctx, func(q *store.Queries) error {
		v, err := s.FindVehicle(ctx, q, ref)
		if err != nil {
			return err
		}
		return q.DeleteVehicle(ctx, v.VehicleID)
	})
}

// SeedVehicle adds a vehicle to accountID without a caller, for the development seed.
func (s *Service) SeedVehicle(ctx context.Context, accountID int64, in api.VehicleInput) (*api.Vehicle, error) {
	return s.CreateVehicle(auth.WithCaller(ctx, auth.Caller{ClientID: "seed", AccountID: accountID}), in)
}
