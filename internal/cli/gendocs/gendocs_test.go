package gendocs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// repoRoot is the repository root, relative to this package's directory.
const repoRoot = "../../.."

const regenerate = "run `go run ./cmd/gen-docs` in the repository root and commit the result"

// generated returns the files Files generates, by slash-separated name.
func generated(t *testing.T) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	names, err := Files(Root(), dir)
	if err != nil {
		t.Fatal(err)
	}
	files := make(map[string][]byte, len(names))
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	return files
}

// committed returns the files of the generated directories in the repository.
func committed(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, d := range Dirs {
		root := filepath.Join(repoRoot, filepath.FromSlash(d))
		err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) && path == root {
					return filepath.SkipDir
				}
				return err
			}
			if e.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(repoRoot, path)
			if err != nil {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files[filepath.ToSlash(rel)] = b
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

func TestCommittedCopiesAreCurrent(t *testing.T) {
	want, got := generated(t), committed(t)
	var missing, extra, differ []string
	for name, b := range want {
		c, ok := got[name]
		switch {
		case !ok:
			missing = append(missing, name)
		case !bytes.Equal(b, c):
			differ = append(differ, name+firstDifference(b, c))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			extra = append(extra, name)
		}
	}
	if len(missing)+len(extra)+len(differ) == 0 {
		return
	}
	var msg strings.Builder
	msg.WriteString("the committed docs/cli, docs/man and completions are stale; " + regenerate + "\n")
	for _, l := range []struct {
		title string
		names []string
	}{
		{"missing (generated but not committed)", missing},
		{"extra (committed but no longer generated)", extra},
		{"differing", differ},
	} {
		if len(l.names) == 0 {
			continue
		}
		sort.Strings(l.names)
		msg.WriteString(l.title + ":\n")
		for _, n := range l.names {
			msg.WriteString("  " + n + "\n")
		}
	}
	t.Error(msg.String())
}

// firstDifference describes the first line where committed differs from generated.
func firstDifference(generated, committed []byte) string {
	gl, cl := strings.SplitAfter(string(generated), "\n"), strings.SplitAfter(string(committed), "\n")
	line := func(l []string, i int) string {
		if i >= len(l) || i == len(l)-1 && l[i] == "" {
			return "(end of file)"
		}
		return quote(l[i])
	}
	for i := 0; i < len(gl) || i < len(cl); i++ {
		if i >= len(gl) || i >= len(cl) || gl[i] != cl[i] {
			return fmt.Sprintf("\n      line %d: generated %s\n      line %d: committed %s", i+1, line(gl, i), i+1, line(cl, i))
		}
	}
	return ""
}

func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return fmt.Sprintf("%q", s)
}

func TestNoDatesOrAutogenTags(t *testing.T) {
	now := time.Now()
	// The dates cobra would write ("2-Jan-2006" in markdown and man footers, "Jan 2006" in
	// the man header) and ISO ones, for today and, around midnight, yesterday.
	var dates []string
	for _, d := range []time.Time{now, now.AddDate(0, 0, -1), now.UTC()} {
		dates = append(dates, d.Format("2006-01-02"), d.Format("2-Jan-2006"), d.Format("Jan 2006"), d.Format("January 2006"))
	}
	th := regexp.MustCompile(`(?m)^\.TH "[^"]*" "1" "" "vcs" "vcs manual"$`)
	files := generated(t)
	if len(files) == 0 {
		t.Fatal("nothing generated")
	}
	for name, b := range files {
		s := string(b)
		if strings.Contains(strings.ToLower(s), "auto generated") {
			t.Errorf("%s contains %q", name, "Auto generated")
		}
		for _, d := range dates {
			if strings.Contains(s, d) {
				t.Errorf("%s contains the date %q", name, d)
			}
		}
		if strings.HasSuffix(name, ".1") && !th.MatchString(s) {
			t.Errorf("%s has no dateless .TH line with source vcs and manual \"vcs manual\":\n%s", name, s[:min(len(s), 200)])
		}
	}
}

// The output must not depend on the environment: the time, the configuration directories,
// the profile chosen.
func TestDeterministic(t *testing.T) {
	first := generated(t)
	t.Setenv("SOURCE_DATE_EPOCH", "1000000000")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("VCS_PROFILE", "elsewhere")
	t.Setenv("VCS_BASE_URL", "http://example.invalid")
	t.Setenv("NO_COLOR", "1")
	t.Setenv("TZ", "Pacific/Kiritimati")
	second := generated(t)
	if len(first) != len(second) {
		t.Fatalf("%d files, then %d", len(first), len(second))
	}
	for name, b := range first {
		if !bytes.Equal(b, second[name]) {
			t.Errorf("%s depends on the environment%s", name, firstDifference(b, second[name]))
		}
	}
}

func TestGenerateReplacesStaleFiles(t *testing.T) {
	repo := t.TempDir()
	stale := []string{"docs/cli/vcs_gone.md", "docs/man/vcs-gone.1", "completions/vcs.oldshell"}
	keep := "docs/api.md"
	for _, name := range append(stale, keep) {
		p := filepath.Join(repo, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Generate(Root(), repo); err != nil {
		t.Fatal(err)
	}
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(repo, filepath.FromSlash(name))); !os.IsNotExist(err) {
			t.Errorf("stale %s still there (%v)", name, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(repo, keep)); err != nil || string(b) != "old\n" {
		t.Errorf("hand-written %s: %q, %v", keep, b, err)
	}
	for _, name := range []string{"docs/cli/README.md", "docs/cli/vcs.md", "docs/man/vcs.1", "completions/vcs.bash",
		"completions/vcs.zsh", "completions/vcs.fish", "completions/vcs.ps1"} {
		if _, err := os.Stat(filepath.Join(repo, filepath.FromSlash(name))); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
