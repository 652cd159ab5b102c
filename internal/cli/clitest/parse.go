package clitest

import (
	"context"
	"io"
	"testing"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
)

// ParseOptions say how Parse runs a command.
type ParseOptions struct {
	Stdin string
	TTY   bool // stdin and stdout are terminals
}

// Parse runs the command that newCmd builds with args, as the root command would (flag
// errors are usage errors), and returns the Options its run function received — nil when
// it was not called — and the error: the flag-parsing half of a gh-style command test.
func Parse[O any](t testing.TB, newCmd func(*cmdutil.Factory, func(context.Context, *O) error) *cobra.Command, p ParseOptions, args ...string) (*O, error) {
	t.Helper()
	ios, in, _, _ := iostreams.Test()
	in.WriteString(p.Stdin)
	ios.SetStdinTTY(p.TTY)
	ios.SetStdoutTTY(p.TTY)
	f := &cmdutil.Factory{IOStreams: ios, Globals: &cmdutil.Globals{}}
	var got *O
	cmd := newCmd(f, func(_ context.Context, o *O) error {
		got = o
		return nil
	})
	if args == nil {
		args = []string{} // nil would make cobra parse the test binary's own arguments
	}
	cmd.SetArgs(args)
	cmd.SetIn(in)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cmdutil.FlagError{Err: err} })
	_, err := cmd.ExecuteC()
	return got, err
}
