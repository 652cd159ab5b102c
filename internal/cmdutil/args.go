package cmdutil

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/iostreams"
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

// ConfirmDestructive asks question on a terminal and returns ErrCancel unless the answer is
// yes. Without a terminal it cannot ask: it needs --yes, and says so.
func ConfirmDestructive(ios *iostreams.IOStreams, yes bool, question string) error {
	if yes {
		return nil
	}
	if !ios.CanPrompt() {
		return FlagErrorf("refusing to delete without confirmation: run again with --yes")
	}
	fmt.Fprintf(ios.ErrOut, "%s [y/N] ", question)
	line, err := bufio.NewReader(ios.In).ReadString('\n')
	if err != nil && line == "" {
		return ErrCancel
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return ErrCancel
}
