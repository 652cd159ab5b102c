package output

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/connected-vehicle/vcs/internal/golden"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/iostreams"
)

// matchGolden compares got, less what changes from run to run, with testdata/name.
func matchGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name, got)
}

// car has its members in an order that is not alphabetical, to see that it is kept.
type car struct {
	Zeta    string            `json:"zeta"`
	Alpha   int               `json:"alpha"`
	Mid     *string           `json:"mid"`
	Nested  map[string]string `json:"nested,omitempty"`
	List    []int             `json:"list,omitempty"`
	Float   float64           `json:"float"`
	Enabled bool              `json:"enabled"`
}

func ptr(s string) *string { return &s }

var cars = []car{
	{Zeta: "first <car> & co", Alpha: 1, Mid: ptr("true"), List: []int{1, 2}, Float: 1.5, Enabled: true},
	{Zeta: "second", Alpha: 9007199254740993, Nested: map[string]string{"b": "2", "a": "1"}, Float: 28.036441},
}

func carTable(t *Table) {
	t.Header("id", "zeta", "last_seen", "note")
	t.Row("1", "first", "20261122T023433+0000", "short")
	t.Row("22", "a much longer value", "", "")
	t.Row("333", "x", "yesterday", "tab\there, line\nbreak")
}

func print(t *testing.T, o Options, tty bool, data any, table func(*Table)) string {
	t.Helper()
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	ios, _, stdout, stderr := iostreams.Test()
	ios.SetStdoutTTY(tty)
	if err := o.Print(ios, data, table); err != nil {
		t.Fatal(err)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr = %q", stderr)
	}
	return stdout.String()
}

func TestTableOnTerminal(t *testing.T) {
	out := print(t, Options{Format: FormatTable}, true, nil, carTable)
	matchGolden(t, "table.tty.golden", out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// A header, 3 rows, and the second line of the cell with a line break, in its column.
	if len(lines) != 5 {
		t.Fatalf("%d lines, want a header, 3 rows and a continuation:\n%s", len(lines), out)
	}
	if note := strings.Index(lines[0], "NOTE"); strings.TrimLeft(lines[4], " ") != "break" || strings.Index(lines[4], "break") != note {
		t.Errorf("continuation %q not under NOTE (column %d)", lines[4], note)
	}
	if strings.Contains(out, "\t") {
		t.Errorf("a tab reached the terminal table:\n%s", out)
	}
	lines = lines[:4]
	if !strings.HasPrefix(lines[0], "ID ") || !strings.Contains(lines[0], "ZETA") || !strings.Contains(lines[0], "NOTE") {
		t.Errorf("header not upper-cased: %q", lines[0])
	}
	for _, l := range lines {
		if l != strings.TrimRight(l, " \t") {
			t.Errorf("trailing space in %q", l)
		}
		if strings.ContainsAny(l, "|│─┼") || strings.Contains(l, "+-") || strings.Contains(l, "--") {
			t.Errorf("decoration in %q", l)
		}
	}
	// Columns line up: the second column starts at the same place on every line.
	col := strings.Index(lines[0], "ZETA")
	for _, l := range lines[1:] {
		if l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("column 2 not at %d in %q", col, l)
		}
	}
	// A value is not truncated or wrapped on the terminal.
	if !strings.Contains(out, "a much longer value") {
		t.Errorf("value cut:\n%s", out)
	}
}

func TestEmptyTable(t *testing.T) {
	for _, tty := range []bool{true, false} {
		out := print(t, Options{Format: FormatTable}, tty, nil, func(t *Table) { t.Header("a", "b") })
		if out != "" {
			t.Errorf("tty %v: an empty table printed %q", tty, out)
		}
	}
}

func TestTablePiped(t *testing.T) {
	out := print(t, Options{Format: FormatTable}, false, nil, carTable)
	matchGolden(t, "table.tsv.golden", out)
	want := "1\tfirst\t20261122T023433+0000\tshort\n" +
		"22\ta much longer value\t\t\n" +
		"333\tx\tyesterday\ttab here, line break\n"
	if out != want {
		t.Errorf("tsv = %q\nwant  %q", out, want)
	}
}

func TestTSVReplacesSeparators(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a\tb", "a b"},
		{"a\nb", "a b"},
		{"a\r\nb", "a  b"},
		{"\t\n", "  "},
		{"plain", "plain"},
	}
	for _, tt := range tests {
		out := print(t, Options{Format: FormatTable}, false, nil, func(t *Table) { t.Row(tt.in, "end") })
		if want := tt.want + "\tend\n"; out != want {
			t.Errorf("cell %q: %q, want %q", tt.in, out, want)
		}
	}
}

func TestJSON(t *testing.T) {
	for _, tty := range []bool{true, false} {
		out := print(t, Options{Format: FormatJSON}, tty, cars, nil)
		matchGolden(t, "cars.json.golden", out)
		if !strings.HasPrefix(out, "[\n  {\n    \"zeta\": \"first <car> & co\",\n    \"alpha\": 1,\n") {
			t.Errorf("not two-space indented, in member order, with HTML unescaped:\n%s", out)
		}
		var back []car
		if err := json.Unmarshal([]byte(out), &back); err != nil {
			t.Fatal(err)
		}
		if back[1].Alpha != 9007199254740993 || back[1].Float != 28.036441 {
			t.Errorf("numbers changed: %+v", back[1])
		}
	}
}

func TestYAML(t *testing.T) {
	out := print(t, Options{Format: FormatYAML}, false, cars, nil)
	matchGolden(t, "cars.yaml.golden", out)
	// Members in the order of the JSON, not sorted; strings that would read as other types
	// stay strings; null stays null.
	for _, want := range []string{
		"- zeta: first <car> & co\n  alpha: 1\n  mid: \"true\"\n",
		"  mid: null\n",
		"  alpha: 9007199254740993\n",
		"  float: 28.036441\n",
		"  nested:\n    a: \"1\"\n    b: \"2\"\n",
		"  list:\n    - 1\n    - 2\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("yaml lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsAny(out, "{}[]") {
		t.Errorf("flow style in block YAML:\n%s", out)
	}
	one := print(t, Options{Format: FormatYAML}, true, cars[0], nil)
	if !strings.HasPrefix(one, "zeta: first <car> & co\nalpha: 1\n") {
		t.Errorf("one object:\n%s", one)
	}
}

func TestJQ(t *testing.T) {
	tests := []struct {
		name, expr string
		format     string
		want       string
	}{
		{"strings raw", ".[].zeta", FormatJSON, "first <car> & co\nsecond\n"},
		{"numbers", ".[].alpha", FormatJSON, "1\n9007199254740993\n"},
		{"floats", ".[].float", FormatJSON, "1.5\n28.036441\n"},
		{"objects compact", ".[0] | {zeta, list}", FormatJSON, `{"list":[1,2],"zeta":"first <car> & co"}` + "\n"},
		{"arrays compact", "[.[].enabled]", FormatJSON, "[true,false]\n"},
		{"null", ".[1].mid", FormatJSON, "null\n"},
		{"string that looks like a bool stays raw", ".[0].mid", FormatJSON, "true\n"},
		{"string with a newline is raw", `"a\nb"`, FormatJSON, "a\nb\n"},
		{"no results", ".[] | select(.alpha == 5)", FormatJSON, ""},
		{"jq without -o", "length", FormatTable, "2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			for _, tty := range []bool{true, false} {
				out := print(t, Options{Format: tt.format, JQ: tt.expr}, tty, cars, func(*Table) { called = true })
				if out != tt.want {
					t.Errorf("tty %v: --jq %s = %q, want %q", tty, tt.expr, out, tt.want)
				}
			}
			if called {
				t.Error("--jq rendered the table")
			}
		})
	}
}

func TestJQRuntimeError(t *testing.T) {
	ios, _, stdout, _ := iostreams.Test()
	o := Options{Format: FormatJSON, JQ: ".[] | .zeta + 1"}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	err := o.Print(ios, cars, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "--jq: ") {
		t.Errorf("error = %v", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout = %q", stdout)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		o       Options
		wantErr string
	}{
		{Options{Format: FormatTable}, ""},
		{Options{Format: FormatJSON}, ""},
		{Options{Format: FormatYAML}, ""},
		{Options{Format: FormatJSON, JQ: ".[] | select(.a > 1) | .b"}, ""},
		{Options{Format: FormatTable, JQ: ".x"}, ""},
		{Options{Format: ""}, "unknown output format"},
		{Options{Format: "JSON"}, `unknown output format "JSON"`},
		{Options{Format: "csv"}, "use table, json or yaml"},
		{Options{Format: FormatYAML, JQ: ".x"}, "--jq filters JSON"},
		{Options{Format: FormatJSON, JQ: ".["}, "invalid --jq expression"},
		{Options{Format: FormatJSON, JQ: "..a"}, "invalid --jq expression"},
		{Options{Format: FormatTable, JQ: "map("}, "invalid --jq expression"},
	}
	for _, tt := range tests {
		err := tt.o.Validate()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%+v: %v", tt.o, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%+v: error %v, want %q", tt.o, err, tt.wantErr)
		}
	}
}

func TestStructured(t *testing.T) {
	tests := []struct {
		o    Options
		want bool
	}{
		{Options{Format: FormatTable}, false},
		{Options{Format: FormatJSON}, true},
		{Options{Format: FormatYAML}, true},
		{Options{Format: FormatTable, JQ: "."}, true},
	}
	for _, tt := range tests {
		if got := tt.o.Structured(); got != tt.want {
			t.Errorf("%+v.Structured() = %v", tt.o, got)
		}
	}
}

func TestAddFlags(t *testing.T) {
	var o Options
	cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
	o.AddFlags(cmd)
	cmd.SetArgs([]string{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if o.Format != FormatTable || o.JQ != "" {
		t.Errorf("defaults %+v", o)
	}
	cmd.SetArgs([]string{"-o", "yaml", "--jq", ".a"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if o.Format != FormatYAML || o.JQ != ".a" {
		t.Errorf("parsed %+v", o)
	}
}

// TestTableHeaderColour: the header is bold on a terminal that wants colour, and plain
// with NO_COLOR (or no terminal).
func TestTableHeaderColour(t *testing.T) {
	for _, colour := range []bool{true, false} {
		ios, _, stdout, _ := iostreams.Test()
		ios.SetStdoutTTY(true)
		ios.SetColorEnabled(colour)
		tbl := NewTable(ios)
		tbl.Header("id", "name")
		tbl.Row("1", "Jeep")
		if err := tbl.Render(); err != nil {
			t.Fatal(err)
		}
		bold := strings.HasPrefix(stdout.String(), "\x1b[1mID")
		if bold != colour || strings.Count(stdout.String(), "\x1b[") != map[bool]int{true: 2, false: 0}[colour] {
			t.Errorf("colour %v: %q", colour, stdout)
		}
	}
}
