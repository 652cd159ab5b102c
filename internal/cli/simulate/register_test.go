package simulate_test

import (
	"testing"

	"github.com/connected-vehicle/vcs/internal/cli/factory"
	"github.com/connected-vehicle/vcs/internal/cli/root"
	"github.com/connected-vehicle/vcs/internal/iostreams"
)

// The command is reachable from vcs itself, listed with the data commands.
func TestRegisteredInRoot(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	cmd := root.NewCmdRoot(factory.New(ios, "test"))
	trip, rest, err := cmd.Find([]string{"simulate", "trip", "3"})
	if err != nil || trip.Name() != "trip" || len(rest) != 1 {
		t.Fatalf("vcs simulate trip: %v, %v, %v", trip, rest, err)
	}
	if g := trip.Parent().GroupID; g != "data" {
		t.Errorf("vcs simulate is in group %q, want data", g)
	}
}
