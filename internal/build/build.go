// Package build says which build of vcs this is.
package build

import "runtime/debug"

// version is set at link time by goreleaser: -X github.com/connected-vehicle/vcs/internal/build.version=1.2.3
var version = ""

// Version returns the release version, the module version of a `go install`, or "dev".
func Version() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}
