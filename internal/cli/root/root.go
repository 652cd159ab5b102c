// Package root builds the vcs command tree and runs it.
package root

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/build"
	"github.com/connected-vehicle/vcs/internal/cli/account"
	"github.com/connected-vehicle/vcs/internal/cli/auth"
	"github.com/connected-vehicle/vcs/internal/cli/factory"
	"github.com/connected-vehicle/vcs/internal/cli/listen"
	"github.com/connected-vehicle/vcs/internal/cli/server"
	"github.com/connected-vehicle/vcs/internal/cli/simulate"
	"github.com/connected-vehicle/vcs/internal/cli/subscribe"
	"github.com/connected-vehicle/vcs/internal/cli/vehicle"
	"github.com/connected-vehicle/vcs/internal/cli/version"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
)

// NewCmdRoot returns the vcs command with every subcommand.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vcs <command> <subcommand> [flags]",
		Short: "Connected-vehicle service: client and server",
		Long: `vcs works with the connected-vehicle service from the command line: log in, manage
accounts and vehicles, subscribe to waypoint events and watch them arrive. "vcs server"
runs the service itself.`,
		Example:       `  vcs server --dev          # a sandbox service on 127.0.0.1:8080 with demo data`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       f.Version,
	}
	cmd.SetOut(f.IOStreams.Out)
	cmd.SetErr(f.IOStreams.ErrOut)
	cmd.SetIn(f.IOStreams.In)
	cmd.SetVersionTemplate("vcs version {{.Version}}\n")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })
	cmd.CompletionOptions.HiddenDefaultCmd = false

	g := cmd.PersistentFlags()
	g.StringVarP(&f.Globals.Profile, "profile", "p", "", "profile to use (default: $VCS_PROFILE, the file's, or \"local\")")
	g.StringVar(&f.Globals.Token, "token", "", "use this access token instead of stored credentials (also $VCS_TOKEN)")
	g.BoolVar(&f.Globals.Debug, "debug", false, "log each HTTP exchange to stderr, secrets redacted")
	g.BoolVar(&f.Globals.InsecureStorage, "insecure-storage", false, "store credentials in a 0600 file instead of the OS keyring")

	cmd.AddGroup(&cobra.Group{ID: "auth", Title: "Authentication:"}, &cobra.Group{ID: "data", Title: "Accounts and vehicles:"},
		&cobra.Group{ID: "service", Title: "Running the service:"})
	for _, c := range []*cobra.Command{auth.NewCmdLogin(f, nil), auth.NewCmdLogout(f, nil), auth.NewCmdToken(f, nil)} {
		c.GroupID = "auth"
		cmd.AddCommand(c)
	}
	for _, c := range []*cobra.Command{account.NewCmdAccount(f), vehicle.NewCmdVehicle(f), simulate.NewCmdSimulate(f)} {
		c.GroupID = "data"
		cmd.AddCommand(c)
	}
	cmd.AddGroup(&cobra.Group{ID: "events", Title: "Events:"})
	for _, c := range []*cobra.Command{subscribe.NewCmdSubscribe(f), listen.NewCmdListen(f, nil)} {
		c.GroupID = "events"
		cmd.AddCommand(c)
	}
	srv := server.NewCmdServer(f, nil)
	srv.GroupID = "service"
	cmd.AddCommand(srv, version.NewCmdVersion(f))
	return cmd
}

// Main runs vcs with args and returns the process's exit code.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// After the first signal, a second one kills the process the default way.
		<-ctx.Done()
		stop()
	}()

	ios := iostreams.System()
	f := factory.New(ios, build.Version())
	cmd := NewCmdRoot(f)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return cmdutil.ExitOK
	}
	if strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown shorthand flag") {
		err = &cmdutil.FlagError{Err: err}
	}
	printError(ios, err)
	return cmdutil.ExitCode(err)
}

func printError(ios *iostreams.IOStreams, err error) {
	var flagErr *cmdutil.FlagError
	switch {
	case errors.Is(err, cmdutil.ErrSilent):
	case errors.Is(err, cmdutil.ErrCancel):
		fmt.Fprintln(ios.ErrOut, "Cancelled.")
	case errors.As(err, &flagErr):
		fmt.Fprintln(ios.ErrOut, err)
		fmt.Fprintln(ios.ErrOut, "Run with --help for usage.")
	default:
		fmt.Fprintln(ios.ErrOut, "error:", err)
	}
}
