package client

import (
	"context"
	"strconv"

	"github.com/connected-vehicle/vcs/internal/api"
)

// simulationPath is the path of one simulated drive.
func simulationPath(id int64) string { return "/simulator/trip/" + strconv.FormatInt(id, 10) }

// StartSimulation starts a simulated drive in the sandbox. The answer comes once the
// ignition is on; the drive goes on in the service.
func (c *Client) StartSimulation(ctx context.Context, in api.SimulationInput) (*api.Simulation, error) {
	return one[api.Simulation](ctx, c, "POST", "/simulator/trip/", api.KeySimulation, in)
}

// Simulation reads a simulated drive's progress.
func (c *Client) Simulation(ctx context.Context, id int64) (*api.Simulation, error) {
	return one[api.Simulation](ctx, c, "GET", simulationPath(id), api.KeySimulation, nil)
}

// CancelSimulation stops a simulated drive where it is (the ignition goes off and the trip
// closes) and returns it as it ended.
func (c *Client) CancelSimulation(ctx context.Context, id int64) (*api.Simulation, error) {
	return one[api.Simulation](ctx, c, "DELETE", simulationPath(id), api.KeySimulation, nil)
}
