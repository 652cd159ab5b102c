// Package vehicle is `vcs vehicle`: list, read, create, update and delete vehicles.
package vehicle

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/output"
)

// NewCmdVehicle returns `vcs vehicle` with its subcommands.
func NewCmdVehicle(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "vehicle <command>",
		Aliases: []string{"vehicles"},
		Short:   "Manage vehicles",
		Long: `List, read, create, update and delete the vehicles of your account. A vehicle is named by
its vehicleId or by the serial number of its device.`,
	}
	cmd.AddCommand(NewCmdList(f, nil), NewCmdGet(f, nil), NewCmdCreate(f, nil), NewCmdUpdate(f, nil), NewCmdDelete(f, nil))
	return cmd
}

// ListOptions are the inputs of `vcs vehicle list`.
type ListOptions struct {
	IO        *iostreams.IOStreams
	APIClient func(context.Context) (*client.Client, error)
	Output    output.Options
	List      cmdutil.ListFlags
}

// NewCmdList returns `vcs vehicle list`.
func NewCmdList(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, APIClient: f.APIClient}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List vehicles",
		Long:    "List the vehicles you may see, in id order: one page (--limit, --offset), or all of them (--all).",
		Example: `  vcs vehicle list
  vcs vehicle list --all -o json --jq '.[].vin'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			if err := opts.List.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	opts.List.Add(cmd, "vehicles")
	opts.Output.AddFlags(cmd)
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	vehicles, total, err := cmdutil.FetchList(ctx, opts.List, c.Vehicles, c.AllVehicles)
	if err != nil {
		return fmt.Errorf("list vehicles: %w", err)
	}
	if cmdutil.ListNotice(opts.IO, &opts.Output, opts.List, "vehicles", len(vehicles), total) {
		return nil
	}
	return opts.Output.Print(opts.IO, vehicles, func(t *output.Table) {
		t.Header("id", "name", "label", "device", "vin", "mileage", "running", "last waypoint")
		for _, v := range vehicles {
			t.Row(strconv.FormatInt(v.VehicleID, 10), v.Name, str(v.Label), str(v.DeviceID), str(v.VIN),
				num(v.Mileage), strconv.FormatBool(v.Running), waypoint(v.LastWaypoint))
		}
	})
}

// GetOptions are the inputs of `vcs vehicle get`.
type GetOptions struct {
	IO        *iostreams.IOStreams
	APIClient func(context.Context) (*client.Client, error)
	Output    output.Options
	Ref       string
}

// NewCmdGet returns `vcs vehicle get`.
func NewCmdGet(f *cmdutil.Factory, runF func(context.Context, *GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IOStreams, APIClient: f.APIClient}
	cmd := &cobra.Command{
		Use:     "get VEHICLE",
		Aliases: []string{"view", "show"},
		Short:   "Show a vehicle",
		Long:    "Show a vehicle, named by its vehicleId or its device serial.",
		Example: `  vcs vehicle get 3
  vcs vehicle get C2015000003 -o json`,
		Args: cmdutil.ExactArgs(1, "give the vehicle's id or device serial"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			opts.Ref = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return getRun(cmd.Context(), opts)
		},
	}
	opts.Output.AddFlags(cmd)
	return cmd
}

func getRun(ctx context.Context, opts *GetOptions) error {
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	v, err := c.Vehicle(ctx, opts.Ref)
	if err != nil {
		return fmt.Errorf("get vehicle %s: %w", opts.Ref, err)
	}
	return printVehicle(opts.IO, &opts.Output, v)
}

// printVehicle shows one vehicle: a field per line for people, or JSON/YAML.
func printVehicle(ios *iostreams.IOStreams, o *output.Options, v *api.Vehicle) error {
	return o.Print(ios, v, func(t *output.Table) {
		t.Header("field", "value")
		t.Row("vehicleId", strconv.FormatInt(v.VehicleID, 10))
		t.Row("name", v.Name)
		t.Row("label", str(v.Label))
		t.Row("deviceId", str(v.DeviceID))
		t.Row("autoAssignDevice", strconv.FormatBool(v.AutoAssignDevice))
		t.Row("vin", str(v.VIN))
		t.Row("year", str(v.Year))
		t.Row("make", str(v.Make))
		t.Row("model", str(v.Model))
		t.Row("mileage", num(v.Mileage))
		t.Row("running", strconv.FormatBool(v.Running))
		t.Row("lastRunningTimestamp", dateTime(v.LastRunningTimestamp))
		t.Row("lastWaypoint", waypoint(v.LastWaypoint))
	})
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func num(n *int64) string {
	if n == nil {
		return ""
	}
	return strconv.FormatInt(*n, 10)
}

func dateTime(d *api.DateTime) string {
	if d == nil {
		return ""
	}
	return d.String()
}

func waypoint(w *api.Waypoint) string {
	if w == nil {
		return ""
	}
	return fmt.Sprintf("%s %.6f,%.6f", w.Timestamp, w.Latitude, w.Longitude)
}
