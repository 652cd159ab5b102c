// Command gen-docs regenerates the files that come from the vcs command tree: the
// markdown command reference (docs/cli), the man pages (docs/man) and the shell
// completions (completions). Run it from the repository root:
//
//	go run ./cmd/gen-docs
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/connected-vehicle/vcs/internal/cli/gendocs"
)

const module = "module github.com/connected-vehicle/vcs"

func main() {
	dir := flag.String("dir", ".", "the repository root to write into")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./cmd/gen-docs [-dir REPO]")
		os.Exit(2)
	}
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen-docs:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	// Refuse to write anywhere but the root of this repository.
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil || !strings.Contains(string(b), module+"\n") {
		return fmt.Errorf("%s is not the root of the vcs repository (no go.mod with %q); run from there or pass -dir", dir, module)
	}
	if err := gendocs.Generate(gendocs.Root(), dir); err != nil {
		return err
	}
	for _, d := range gendocs.Dirs {
		fmt.Fprintln(os.Stderr, "wrote", filepath.Join(dir, filepath.FromSlash(d)))
	}
	return nil
}
