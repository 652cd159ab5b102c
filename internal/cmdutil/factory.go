// Package cmdutil holds what every command shares: the factory of its dependencies, the
// errors that decide its exit code, and flag helpers.
package cmdutil

import (
	"github.com/connected-vehicle/vcs/internal/iostreams"
)

// Factory hands commands their dependencies. Members that cost something to build are
// functions, called only by the commands that need them; tests replace any of them.
type Factory struct {
	IOStreams *iostreams.IOStreams
	// Version is the binary's version, for User-Agent headers and `vcs version`.
	Version string
}
