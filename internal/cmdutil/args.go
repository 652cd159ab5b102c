package cmdutil

import (
	"github.com/spf13/cobra"
)

// ExactArgs requires n arguments, and says msg (a usage error) otherwise.
func ExactArgs(n int, msg string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		if len(args) > n {
			return FlagErrorf("too many arguments: %s", msg)
		}
		return FlagErrorf("%s", msg)
	}
}
