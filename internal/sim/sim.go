// Package sim is the sandbox's traffic simulator: it drives a vehicle along a route by
// recording data sets exactly as a device would.
package sim

import (
	"context"
	"log/slog"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/fleet"
	"github.com/connected-vehicle/vcs/internal/telemetry"
)

// Config configures a Simulator.
type Config struct {
	Logger *slog.Logger
	Now    func() time.Time
}

// Simulator runs simulated drives.
type Simulator struct {
	telemetry *telemetry.Service
	fleet     *fleet.Service
	cfg       Config
}

// New returns a Simulator.
func New(t *telemetry.Service, f *fleet.Service, cfg Config) *Simulator {
	return &Simulator{telemetry: t, fleet: f, cfg: cfg}
}

// Start begins a simulated drive.
func (s *Simulator) Start(ctx context.Context, in api.SimulationInput) (*api.Simulation, error) {
	return nil, api.Errorf(api.CodeInternal, "not yet")
}

// Get reports a drive's progress.
func (s *Simulator) Get(ctx context.Context, id int64) (*api.Simulation, error) {
	return nil, api.NotFound("simulation")
}

// Cancel stops a drive.
func (s *Simulator) Cancel(ctx context.Context, id int64) (*api.Simulation, error) {
	return nil, api.NotFound("simulation")
}

// Stop ends every drive, for shutdown.
func (s *Simulator) Stop() {}
