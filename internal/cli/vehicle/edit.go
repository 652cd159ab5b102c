package vehicle

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/output"
)

// fields are the flags that set vehicle members, shared by create and update.
type fields struct {
	label, vin, deviceID string
	mileage              int64
	autoAssign           bool
	file                 string
}

func (v *fields) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&v.label, "label", "", "short description (empty clears it)")
	fl.StringVar(&v.vin, "vin", "", "vehicle identification number; a VIN that decodes names the vehicle (empty clears it)")
	fl.StringVar(&v.deviceID, "device-id", "", "serial number of the installed device (empty clears it)")
	fl.Int64Var(&v.mileage, "mileage", 0, "odometer reading")
	fl.BoolVar(&v.autoAssign, "auto-assign-device", true, "whether the device may move to or from this vehicle automatically")
	fl.StringVarP(&v.file, "file", "f", "", "read the vehicle's members from a JSON `file` (- for stdin); flags override it")
}

// input builds the request body: the -f file's members, then the flags given.
func (v *fields) input(cmd *cobra.Command, stdin io.Reader) (api.VehicleInput, error) {
	var in api.VehicleInput
	if v.file != "" {
		if err := cmdutil.ReadJSONFile(v.file, stdin, &in); err != nil {
			return in, err
		}
	}
	in.Label = cmdutil.Merge(in.Label, cmdutil.OptionalString(cmd, "label", v.label))
	in.VIN = cmdutil.Merge(in.VIN, cmdutil.OptionalString(cmd, "vin", v.vin))
	in.DeviceID = cmdutil.Merge(in.DeviceID, cmdutil.OptionalString(cmd, "device-id", v.deviceID))
	if cmd.Flags().Changed("mileage") {
		in.Mileage = api.Some(v.mileage)
	}
	if cmd.Flags().Changed("auto-assign-device") {
		in.AutoAssignDevice = api.Some(v.autoAssign)
	}
	return in, nil
}

func empty(in api.VehicleInput) bool {
	return !in.Label.Set && !in.VIN.Set && !in.DeviceID.Set && !in.Mileage.Set && !in.AutoAssignDevice.Set
}

// CreateOptions are the inputs of `vcs vehicle create`.
type CreateOptions struct {
	IO        *iostreams.IOStreams
	APIClient func(context.Context) (*client.Client, error)
	Output    output.Options
	Input     api.VehicleInput
}

// NewCmdCreate returns `vcs vehicle create`.
func NewCmdCreate(f *cmdutil.Factory, runF func(context.Context, *CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, APIClient: f.APIClient}
	var fl fields
	cmd := &cobra.Command{
		Use:   "create [flags]",
		Short: "Add a vehicle to your account",
		Example: `  vcs vehicle create --vin 1G1YY22G2Y5108919 --label "Weekend car" --device-id C2015000009
  echo '{"label": "Van 7", "mileage": 12000}' | vcs vehicle create -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			in, err := fl.input(cmd, opts.IO.In)
			if err != nil {
				return err
			}
			opts.Input = in
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	fl.add(cmd)
	opts.Output.AddFlags(cmd)
	return cmd
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	v, err := c.CreateVehicle(ctx, opts.Input)
	if err != nil {
		return fmt.Errorf("create vehicle: %w", err)
	}
	if !opts.Output.Structured() {
		fmt.Fprintf(opts.IO.ErrOut, "Created vehicle %d (%s)\n", v.VehicleID, v.Name)
	}
	return printVehicle(opts.IO, &opts.Output, v)
}

// UpdateOptions are the inputs of `vcs vehicle update`.
type UpdateOptions struct {
	IO        *iostreams.IOStreams
	APIClient func(context.Context) (*client.Client, error)
	Output    output.Options
	Ref       string
	Input     api.VehicleInput
}

// NewCmdUpdate returns `vcs vehicle update`.
func NewCmdUpdate(f *cmdutil.Factory, runF func(context.Context, *UpdateOptions) error) *cobra.Command {
	opts := &UpdateOptions{IO: f.IOStreams, APIClient: f.APIClient}
	var fl fields
	cmd := &cobra.Command{
		Use:   "update VEHICLE [flags]",
		Short: "Change a vehicle",
		Long:  "Change the members given as flags (or in -f); the others stay as they are. An empty value clears a member.",
		Example: `  vcs vehicle update 3 --mileage 61900
  vcs vehicle update C2015000003 --label ""`,
		Args: cmdutil.ExactArgs(1, "give the vehicle's id or device serial"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			in, err := fl.input(cmd, opts.IO.In)
			if err != nil {
				return err
			}
			if empty(in) {
				return cmdutil.FlagErrorf("nothing to change: give at least one of --label, --vin, --device-id, --mileage, --auto-assign-device or -f")
			}
			opts.Ref, opts.Input = args[0], in
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return updateRun(cmd.Context(), opts)
		},
	}
	fl.add(cmd)
	opts.Output.AddFlags(cmd)
	return cmd
}

func updateRun(ctx context.Context, opts *UpdateOptions) error {
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	v, err := c.UpdateVehicle(ctx, opts.Ref, opts.Input)
	if err != nil {
		return fmt.Errorf("update vehicle %s: %w", opts.Ref, err)
	}
	return printVehicle(opts.IO, &opts.Output, v)
}

// DeleteOptions are the inputs of `vcs vehicle delete`.
type DeleteOptions struct {
	IO        *iostreams.IOStreams
	APIClient func(context.Context) (*client.Client, error)
	Ref       string
	Yes       bool
}

// NewCmdDelete returns `vcs vehicle delete`.
func NewCmdDelete(f *cmdutil.Factory, runF func(context.Context, *DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IOStreams, APIClient: f.APIClient}
	cmd := &cobra.Command{
		Use:   "delete VEHICLE",
		Short: "Delete a vehicle and everything recorded about it",
		Long:  "Delete a vehicle for good. On a terminal it asks first; elsewhere it needs --yes.",
		Args:  cmdutil.ExactArgs(1, "give the vehicle's id or device serial"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return deleteRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	return cmd
}

func deleteRun(ctx context.Context, opts *DeleteOptions) error {
	if err := cmdutil.ConfirmDestructive(opts.IO, opts.Yes, fmt.Sprintf("Delete vehicle %s and everything recorded about it?", opts.Ref)); err != nil {
		return err
	}
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	if err := c.DeleteVehicle(ctx, opts.Ref); err != nil {
		return fmt.Errorf("delete vehicle %s: %w", opts.Ref, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Deleted vehicle %s\n", opts.Ref)
	return nil
}
