package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/connected-vehicle/vcs/internal/api"
)

// Page selects a window of a list; zero members take the service's defaults.
type Page struct {
	Limit  int
	Offset int
}

func (p Page) query() string {
	q := url.Values{}
	if p.Limit > 0 {
		q.Set("searchLimit", strconv.Itoa(p.Limit))
	}
	if p.Offset > 0 {
		q.Set("searchOffset", strconv.Itoa(p.Offset))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// list reads one page of a list.
func list[T any](ctx context.Context, c *Client, path, key string, p Page) (api.Envelope[[]T], error) {
	env := api.Envelope[[]T]{Key: key}
	err := c.do(ctx, "GET", path+p.query(), nil, &env)
	return env, err
}

// all reads every page of a list by following its next links.
func all[T any](ctx context.Context, c *Client, path, key string, p Page) ([]T, int, error) {
	env, err := list[T](ctx, c, path, key, p)
	if err != nil {
		return nil, 0, err
	}
	items := env.Data
	for next := env.Action(api.ActionNext); next != ""; next = env.Action(api.ActionNext) {
		env = api.Envelope[[]T]{Key: key}
		if err := c.do(ctx, "GET", next, nil, &env); err != nil {
			return nil, 0, err
		}
		items = append(items, env.Data...)
	}
	total := len(items)
	if env.TotalRecords != nil {
		total = *env.TotalRecords
	}
	return items, total, nil
}

func one[T any](ctx context.Context, c *Client, method, path, key string, in any) (*T, error) {
	env := api.Envelope[T]{Key: key}
	if err := c.do(ctx, method, path, in, &env); err != nil {
		return nil, err
	}
	return &env.Data, nil
}

func (c *Client) remove(ctx context.Context, path string) error {
	return c.do(ctx, "DELETE", path, nil, &api.Envelope[string]{Key: api.KeyResult})
}

// Accounts reads one page of the accounts the caller may see.
func (c *Client) Accounts(ctx context.Context, p Page) (api.Envelope[[]api.Account], error) {
	return list[api.Account](ctx, c, "/account/", api.KeyAccount, p)
}

// AllAccounts reads every account the caller may see.
func (c *Client) AllAccounts(ctx context.Context, p Page) ([]api.Account, int, error) {
	return all[api.Account](ctx, c, "/account/", api.KeyAccount, p)
}

// Account reads one account.
func (c *Client) Account(ctx context.Context, id int64) (*api.Account, error) {
	return one[api.Account](ctx, c, "GET", "/account/"+strconv.FormatInt(id, 10), api.KeyAccount, nil)
}

// CreateAccount creates an account; it needs a client token. The result carries the new
// account's authorization code.
func (c *Client) CreateAccount(ctx context.Context, in api.AccountInput) (*api.Account, error) {
	return one[api.Account](ctx, c, "POST", "/account/", api.KeyAccount, in)
}

// UpdateAccount changes the members set in in.
func (c *Client) UpdateAccount(ctx context.Context, id int64, in api.AccountInput) (*api.Account, error) {
	return one[api.Account](ctx, c, "POST", "/account/"+strconv.FormatInt(id, 10), api.KeyAccount, in)
}

// DeleteAccount deletes an account and everything it owns.
func (c *Client) DeleteAccount(ctx context.Context, id int64) error {
	return c.remove(ctx, "/account/"+strconv.FormatInt(id, 10))
}

// Vehicles reads one page of the vehicles the caller may see.
func (c *Client) Vehicles(ctx context.Context, p Page) (api.Envelope[[]api.Vehicle], error) {
	return list[api.Vehicle](ctx, c, "/vehicle/", api.KeyVehicle, p)
}

// AllVehicles reads every vehicle the caller may see, following next links.
func (c *Client) AllVehicles(ctx context.Context, p Page) ([]api.Vehicle, int, error) {
	return all[api.Vehicle](ctx, c, "/vehicle/", api.KeyVehicle, p)
}

// vehiclePath is the path of a vehicle named by its id or device serial.
func vehiclePath(ref string) string { return "/vehicle/" + url.PathEscape(ref) }

// Vehicle reads the vehicle that ref names: a vehicleId or a device serial.
func (c *Client) Vehicle(ctx context.Context, ref string) (*api.Vehicle, error) {
	return one[api.Vehicle](ctx, c, "GET", vehiclePath(ref), api.KeyVehicle, nil)
}

// CreateVehicle adds a vehicle to the caller's account.
func (c *Client) CreateVehicle(ctx context.Context, in api.VehicleInput) (*api.Vehicle, error) {
	return one[api.Vehicle](ctx, c, "POST", "/vehicle/", api.KeyVehicle, in)
}

// UpdateVehicle changes the members set in in.
func (c *Client) UpdateVehicle(ctx context.Context, ref string, in api.VehicleInput) (*api.Vehicle, error) {
	return one[api.Vehicle](ctx, c, "POST", vehiclePath(ref), api.KeyVehicle, in)
}

// DeleteVehicle deletes a vehicle.
func (c *Client) DeleteVehicle(ctx context.Context, ref string) error {
	return c.remove(ctx, vehiclePath(ref))
}
