// Package simulate is `vcs simulate`: drives a sandbox vehicle along a route with the
// service's traffic simulator and follows the drive.
package simulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/paulmach/orb"
	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/output"
	"github.com/connected-vehicle/vcs/internal/sim/route"
)

// NewCmdSimulate returns `vcs simulate` with its subcommands.
func NewCmdSimulate(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "simulate <command>",
		Short: "Drive sandbox vehicles with the traffic simulator",
		Long: `Drive a vehicle of the sandbox along a route: the service's traffic simulator sends its data
sets as a device would, so that trips, vehicle state and waypoint notifications follow.`,
	}
	cmd.AddCommand(NewCmdTrip(f, nil))
	return cmd
}

// TripOptions are the inputs of `vcs simulate trip`.
type TripOptions struct {
	IO        *iostreams.IOStreams
	APIClient func(context.Context) (*client.Client, error)
	Output    output.Options

	// Vehicle is the vehicleId or device serial given.
	Vehicle string
	// Input is the request without its vehicleId: the route (from/to, or the --route file
	// as a GeoJSON LineString) and the flags that were set.
	Input  api.SimulationInput
	NoWait bool

	// PollInterval is how often the drive's progress is read.
	PollInterval time.Duration
	// Started, when set, is told of the drive once the service has started it (tests
	// interrupt the command there).
	Started func(*api.Simulation)
}

// maxRouteFile bounds what --route reads: GPX is verbose, but 10,000 points fit.
const maxRouteFile = 32 << 20

// NewCmdTrip returns `vcs simulate trip`.
func NewCmdTrip(f *cmdutil.Factory, runF func(context.Context, *TripOptions) error) *cobra.Command {
	opts := &TripOptions{IO: f.IOStreams, APIClient: f.APIClient, PollInterval: 500 * time.Millisecond}
	var from, to, routeFile string
	var speed, interval, timeScale float64
	cmd := &cobra.Command{
		Use:   "trip VEHICLE (--from LAT,LNG --to LAT,LNG | --route FILE)",
		Short: "Drive a vehicle along a route",
		Long: `Drive a vehicle, named by its vehicleId or device serial, from one point straight to another
(--from, --to) or along a route (--route: a GeoJSON file holding a LineString, or a GPX
file with a track or route; "-" reads standard input).

The service turns the ignition on, reports every --interval simulated seconds while it
drives at about --speed mph, and turns the ignition off at the end with the trip's mileage.
--time-scale plays the drive faster: 60 plays a minute of driving in a second.

The command follows the drive, showing its progress on standard error, and prints the
finished drive; Ctrl-C stops the drive where it is. With --no-wait it prints the drive as
it starts and leaves it running.`,
		Example: `  vcs simulate trip 3 --from 28.0270,-82.5886 --to 28.0884,-82.5786 --time-scale 60
  vcs simulate trip C2015000003 --route commute.gpx --speed 45 --interval 5
  vcs simulate trip 3 --route route.geojson --no-wait -o json --jq .id`,
		Args: cmdutil.ExactArgs(1, "give the vehicle's id or device serial"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			opts.Vehicle = args[0]
			fl := cmd.Flags()
			switch {
			case routeFile != "" && (fl.Changed("from") || fl.Changed("to")):
				return cmdutil.FlagErrorf("give --route, or --from and --to, not both")
			case routeFile != "":
				ls, err := readRoute(routeFile, opts.IO.In)
				if err != nil {
					return err
				}
				opts.Input.Route = api.Some(route.GeoJSON(ls))
			case fl.Changed("from") != fl.Changed("to"):
				return cmdutil.FlagErrorf("--from and --to go together")
			case !fl.Changed("from"):
				return cmdutil.FlagErrorf("give a route: --from LAT,LNG --to LAT,LNG, or --route FILE")
			default:
				for _, p := range []struct {
					flag, value string
					into        *api.Optional[api.Point]
				}{{"from", from, &opts.Input.From}, {"to", to, &opts.Input.To}} {
					pt, err := parseLatLng(p.value)
					if err != nil {
						return cmdutil.FlagErrorf("--%s: %v", p.flag, err)
					}
					*p.into = api.Some(pt)
				}
			}
			// Only the flags given are sent: the service owns the defaults and the limits.
			for _, n := range []struct {
				flag  string
				value float64
				into  *api.Optional[float64]
			}{{"speed", speed, &opts.Input.Speed}, {"interval", interval, &opts.Input.Interval}, {"time-scale", timeScale, &opts.Input.TimeScale}} {
				if fl.Changed(n.flag) {
					*n.into = api.Some(n.value)
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return tripRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "start `LAT,LNG` of a straight drive")
	cmd.Flags().StringVar(&to, "to", "", "end `LAT,LNG` of a straight drive")
	cmd.Flags().StringVar(&routeFile, "route", "", "drive along the route in `FILE` (GeoJSON or GPX; - for stdin)")
	cmd.Flags().Float64Var(&speed, "speed", 30, "cruising speed in `MPH` (1-200)")
	cmd.Flags().Float64Var(&interval, "interval", 10, "`SECONDS` of simulated time between reports (1-3600)")
	cmd.Flags().Float64Var(&timeScale, "time-scale", 1, "play the drive `N` times faster than real time (0.1-3600)")
	cmd.Flags().BoolVar(&opts.NoWait, "no-wait", false, "start the drive and print it without following it")
	opts.Output.AddFlags(cmd)
	return cmd
}

// parseLatLng reads "LAT,LNG".
func parseLatLng(s string) (api.Point, error) {
	latS, lngS, ok := strings.Cut(s, ",")
	lat, err1 := strconv.ParseFloat(strings.TrimSpace(latS), 64)
	lng, err2 := strconv.ParseFloat(strings.TrimSpace(lngS), 64)
	if !ok || err1 != nil || err2 != nil {
		return api.Point{}, fmt.Errorf("%q is not LAT,LNG (for example 28.0270,-82.5886)", s)
	}
	if err := route.CheckPoint(orb.Point{lng, lat}); err != nil {
		return api.Point{}, err
	}
	return api.Point{Latitude: lat, Longitude: lng}, nil
}

// readRoute reads and checks a --route file ("-": stdin).
func readRoute(path string, stdin io.Reader) (orb.LineString, error) {
	r, name := stdin, "standard input"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, cmdutil.FlagErrorf("--route: %v", err)
		}
		defer f.Close()
		r, name = f, path
	}
	b, err := io.ReadAll(io.LimitReader(r, maxRouteFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxRouteFile {
		return nil, cmdutil.FlagErrorf("--route: %s is larger than %d MiB", name, maxRouteFile>>20)
	}
	ls, err := route.ParseFile(b)
	if err == nil {
		err = route.Check(ls)
	}
	if err != nil {
		return nil, cmdutil.FlagErrorf("--route %s: %v", name, err)
	}
	return ls, nil
}

func tripRun(ctx context.Context, opts *TripOptions) error {
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	id, err := vehicleID(ctx, c, opts.Vehicle)
	if err != nil {
		return err
	}
	in := opts.Input
	in.VehicleID = api.Some(id)
	s, err := c.StartSimulation(ctx, in)
	if err != nil {
		return fmt.Errorf("start the drive: %w", err)
	}
	if opts.Started != nil {
		opts.Started(s)
	}
	if opts.NoWait {
		if opts.IO.IsStderrTTY() {
			fmt.Fprintf(opts.IO.ErrOut, "Started drive %d of vehicle %d: %.2f mi, %d reports. It goes on in the service.\n",
				s.ID, s.VehicleID, s.DistanceMiles, s.PointsTotal)
		}
		return printSimulation(opts, s)
	}
	return follow(ctx, opts, c, s)
}

// vehicleID resolves a vehicleId or device serial; the simulator takes ids.
func vehicleID(ctx context.Context, c *client.Client, ref string) (int64, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		return id, nil
	}
	v, err := c.Vehicle(ctx, ref)
	if err != nil {
		return 0, fmt.Errorf("vehicle %s: %w", ref, err)
	}
	return v.VehicleID, nil
}

// maxPollFailures is how many reads of the progress in a row may fail (a network blip)
// before the command gives up following the drive.
const maxPollFailures = 3

// follow polls the drive until it ends, showing progress, and prints it. On Ctrl-C it
// cancels the drive first.
func follow(ctx context.Context, opts *TripOptions, c *client.Client, s *api.Simulation) error {
	p := &progress{w: opts.IO.ErrOut, tty: opts.IO.IsStderrTTY()}
	p.start(s)
	tick := time.NewTicker(opts.PollInterval)
	defer tick.Stop()
	failures := 0
	for s.Status == api.SimRunning {
		select {
		case <-ctx.Done():
			return interrupted(ctx, opts, c, p, s)
		case <-tick.C:
		}
		next, err := c.Simulation(ctx, s.ID)
		switch {
		case err == nil:
			s, failures = next, 0
			p.update(s)
		case ctx.Err() != nil:
			// Interrupted during the request: the next turn cancels the drive.
		case cmdutil.ExitCode(err) == cmdutil.ExitAuth, failures+1 >= maxPollFailures:
			p.end()
			return fmt.Errorf("follow drive %d (it goes on in the service): %w", s.ID, err)
		default:
			failures++
		}
	}
	p.finish(s)
	if err := printSimulation(opts, s); err != nil {
		return err
	}
	if s.Status == api.SimFailed {
		msg := "no reason given"
		if s.Error != nil {
			msg = *s.Error
		}
		return fmt.Errorf("drive %d failed: %s", s.ID, msg)
	}
	return nil
}

// cancelTimeout bounds the DELETE sent after Ctrl-C: the user wants out.
const cancelTimeout = 10 * time.Second

// interrupted cancels the drive after Ctrl-C, says so, and prints it as it ended.
func interrupted(ctx context.Context, opts *TripOptions, c *client.Client, p *progress, s *api.Simulation) error {
	p.end()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	final, err := c.CancelSimulation(cctx, s.ID)
	if err != nil {
		return fmt.Errorf("cancel drive %d: %w", s.ID, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Cancelled drive %d: the vehicle stopped after %.2f mi and its trip is closed.\n", final.ID, final.DrivenMiles)
	if err := printSimulation(opts, final); err != nil {
		return err
	}
	// Reported above, so printed by no one else; still a signal's exit code (130).
	return errors.Join(cmdutil.ErrSilent, ctx.Err())
}

// printSimulation prints a drive on stdout: a row for people, the object for scripts.
func printSimulation(opts *TripOptions, s *api.Simulation) error {
	return opts.Output.Print(opts.IO, s, func(t *output.Table) {
		t.Header("id", "vehicle", "status", "trip", "points", "miles", "duration")
		trip := ""
		if s.TripID != nil {
			trip = strconv.FormatInt(*s.TripID, 10)
		}
		dur := ""
		if s.EndTimestamp != nil {
			dur = s.EndTimestamp.Sub(s.StartTimestamp.Time).String()
		}
		t.Row(strconv.FormatInt(s.ID, 10), strconv.FormatInt(s.VehicleID, 10), s.Status, trip,
			fmt.Sprintf("%d/%d", s.PointsSent, s.PointsTotal), strconv.FormatFloat(s.DrivenMiles, 'f', 2, 64), dur)
	})
}

// progress shows a drive's progress on stderr: on a terminal one line rewritten in place,
// otherwise a line at every tenth of the way, which reads well in a log.
type progress struct {
	w      io.Writer
	tty    bool
	shown  bool // a line is on the terminal without its newline
	tenths int  // tenths of the way already reported, when piped
}

func (p *progress) start(s *api.Simulation) {
	fmt.Fprintf(p.w, "Driving vehicle %d (drive %d, trip %s): %.2f mi at %g mph, a report every %g s, time x%g. Ctrl-C stops it.\n",
		s.VehicleID, s.ID, tripOf(s), s.DistanceMiles, s.SpeedMph, s.IntervalSecs, s.TimeScale)
	p.update(s)
}

// fraction is how much of the drive is done, by distance (by reports for a route too short
// to show in hundredths of a mile).
func fraction(s *api.Simulation) float64 {
	if s.DistanceMiles > 0 {
		return min(1, s.DrivenMiles/s.DistanceMiles)
	}
	if s.PointsTotal > 0 {
		return float64(s.PointsSent) / float64(s.PointsTotal)
	}
	return 0
}

func (p *progress) line(s *api.Simulation) string {
	return fmt.Sprintf("%3.0f%%  %d/%d reports, %.2f of %.2f mi", math.Floor(fraction(s)*100), s.PointsSent, s.PointsTotal,
		s.DrivenMiles, s.DistanceMiles)
}

func (p *progress) update(s *api.Simulation) {
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", p.line(s))
		p.shown = true
		return
	}
	if t := int(fraction(s) * 10); t > p.tenths {
		p.tenths = t
		fmt.Fprintln(p.w, p.line(s))
	}
}

// end closes the terminal's progress line.
func (p *progress) end() {
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
}

func (p *progress) finish(s *api.Simulation) {
	p.update(s)
	p.end()
	switch s.Status {
	case api.SimCompleted:
		fmt.Fprintf(p.w, "Drive %d completed: %.2f mi, trip %s closed.\n", s.ID, s.DrivenMiles, tripOf(s))
	case api.SimCancelled:
		fmt.Fprintf(p.w, "Drive %d was cancelled after %.2f mi.\n", s.ID, s.DrivenMiles)
	}
}

func tripOf(s *api.Simulation) string {
	if s.TripID == nil {
		return "-"
	}
	return strconv.FormatInt(*s.TripID, 10)
}
