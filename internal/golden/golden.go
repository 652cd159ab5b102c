// Package golden compares command output with the files under testdata that record it,
// for tests; `go test ./... -update` rewrites the files.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// update is the -update flag of the test binary that imports this package.
var update = flag.Bool("update", false, "rewrite golden files under testdata")

// Check compares got with testdata/name.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

var dateTimes = regexp.MustCompile(`\d{8}T\d{6}[+-]\d{4}`)

// ScrubDateTimes replaces the wire's date-times, which change from run to run, with
// <datetime>.
func ScrubDateTimes(s string) string { return dateTimes.ReplaceAllString(s, "<datetime>") }
