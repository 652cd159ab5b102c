package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/store"
)

// The development server's well-known credentials. They exist only with --dev; the CLI's
// built-in "local" profile knows the client, so that `vcs server --dev` and `vcs login`
// work together with no set-up.
const (
	DevClientID     = "vcs-dev"
	DevClientSecret = "vcs-dev-secret"
	DevClientName   = "vcs development client"
	DevUsername     = "demo"
	DevPassword     = "demo-password"
)

// DevRedirectURIs are loopback redirect URIs without a port: any port matches (RFC 8252).
var DevRedirectURIs = []string{"http://127.0.0.1/callback", "http://[::1]/callback"}

// devVehicles are the demo account's vehicles; their VINs decode.
var devVehicles = []api.VehicleInput{
	{VIN: api.Some("1J4FY29P7XP442798"), Label: api.Some("Trail Jeep"), DeviceID: api.Some("C2015000001"), Mileage: api.Some[int64](182344)},
	{VIN: api.Some("1G1YY22G2Y5108919"), Label: api.Some("Weekend Corvette"), DeviceID: api.Some("C2015000002"), Mileage: api.Some[int64](54012)},
	{VIN: api.Some("JF2GPAKC5D2889395"), Label: api.Some("Family Subaru"), DeviceID: api.Some("C2015000003"), Mileage: api.Some[int64](61870)},
}

// DevSeed is what SeedDev created or found.
type DevSeed struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	Username     string `json:"username"`
	Password     string `json:"password"`
	AccountID    int64  `json:"account_id"`
}

// SeedDev creates the development client, the demo account and its vehicles, unless they
// exist already (a --dev server restarted on the same data directory).
func (s *Server) SeedDev(ctx context.Context) (*DevSeed, error) {
	if _, err := s.OAuth.EnsureClient(ctx, DevClientID, DevClientSecret, DevClientName, DevRedirectURIs); err != nil {
		return nil, fmt.Errorf("seed development client: %w", err)
	}
	seed := &DevSeed{ClientID: DevClientID, ClientSecret: DevClientSecret, Username: DevUsername, Password: DevPassword}
	existing, err := s.db.Read().GetAccountByUsername(ctx, DevUsername)
	switch {
	case err == nil:
		seed.AccountID = existing.ID
		return seed, nil
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	account, err := s.Fleet.SeedAccount(ctx, DevClientID, api.AccountInput{
		FirstName: api.Some("Dana"), LastName: api.Some("Demo"), Zipcode: api.Some("33602"),
		Email: api.Some("demo@example.com"), TimeZone: api.Some("America/New_York"),
		PreferredContact: api.Some(api.ContactEmail), Username: api.Some(DevUsername), Password: api.Some(DevPassword),
	})
	if err != nil {
		return nil, err
	}
	for _, v := range devVehicles {
		if _, err := s.Fleet.SeedVehicle(ctx, account.ID, v); err != nil {
			return nil, fmt.Errorf("seed vehicle: %w", err)
		}
	}
	seed.AccountID = account.ID
	return seed, nil
}

// DefaultDataDir is where the service keeps its databases when --data-dir is not given:
// $XDG_DATA_HOME/vcs, or the platform's equivalent.
func DefaultDataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "vcs"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the data directory: %w (set --data-dir)", err)
	}
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "vcs"), nil
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "vcs"), nil
		}
	}
	return filepath.Join(home, ".local", "share", "vcs"), nil
}
