// Command vcs is the connected-vehicle service's command-line client and, as `vcs server`,
// the service itself.
package main

import (
	"os"

	"github.com/connected-vehicle/vcs/internal/cli/root"
)

func main() {
	os.Exit(root.Main(os.Args[1:]))
}
