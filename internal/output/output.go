// Package output prints what commands return: a table for people (a tablewriter table on a
// terminal, tab-separated values without decoration when piped), or JSON or YAML for
// scripts, optionally filtered with a jq expression.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/itchyny/gojq"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/connected-vehicle/vcs/internal/iostreams"
)

// Formats.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatYAML  = "yaml"
)

// Options are the output flags of a command that prints data.
type Options struct {
	Format string
	JQ     string
}

// AddFlags registers -o/--output and --jq on cmd.
func (o *Options) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.Format, "output", "o", FormatTable, "output format: table, json or yaml")
	cmd.Flags().StringVar(&o.JQ, "jq", "", "filter JSON output with a jq `expression`")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(
		[]string{FormatTable, FormatJSON, FormatYAML}, cobra.ShellCompDirectiveNoFileComp))
}

// Validate checks the flags' values.
func (o *Options) Validate() error {
	switch o.Format {
	case FormatTable, FormatJSON, FormatYAML:
	default:
		return fmt.Errorf("unknown output format %q: use table, json or yaml", o.Format)
	}
	if o.JQ != "" {
		if o.Format == FormatYAML {
			return fmt.Errorf("--jq filters JSON: use it with -o json (or without -o)")
		}
		if _, err := gojq.Parse(o.JQ); err != nil {
			return fmt.Errorf("invalid --jq expression: %w", err)
		}
	}
	return nil
}

// Structured reports whether the data goes out as JSON or YAML rather than a table.
func (o *Options) Structured() bool { return o.Format != FormatTable || o.JQ != "" }

// Print writes data in the chosen format; table renders it for people.
func (o *Options) Print(ios *iostreams.IOStreams, data any, table func(*Table)) error {
	switch {
	case o.JQ != "":
		return printJQ(ios.Out, data, o.JQ)
	case o.Format == FormatJSON:
		return PrintJSON(ios.Out, data)
	case o.Format == FormatYAML:
		return printYAML(ios.Out, data)
	}
	t := NewTable(ios)
	table(t)
	return t.Render()
}

// PrintJSON writes v as indented JSON.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// toPlain turns v into the maps, slices and scalars of its JSON form.
func toPlain(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return normalizeNumbers(out), nil
}

// normalizeNumbers turns json.Number into int or float64, which gojq understands.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	}
	return v
}

// printJQ writes each result of expr on data: strings bare (as jq -r does), anything else
// as compact JSON, one per line.
func printJQ(w io.Writer, data any, expr string) error {
	q, err := gojq.Parse(expr)
	if err != nil {
		return fmt.Errorf("invalid --jq expression: %w", err)
	}
	plain, err := toPlain(data)
	if err != nil {
		return err
	}
	iter := q.Run(plain)
	for {
		v, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := v.(error); ok {
			return fmt.Errorf("--jq: %w", err)
		}
		if s, ok := v.(string); ok {
			if _, err := fmt.Fprintln(w, s); err != nil {
				return err
			}
			continue
		}
		b, err := gojq.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	}
}

// printYAML writes v as YAML with its members in JSON order.
func printYAML(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var node yaml.Node
	// YAML is a superset of JSON: decoding the JSON text as YAML keeps member order.
	if err := yaml.Unmarshal(b, &node); err != nil {
		return err
	}
	clearStyle(&node)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&node); err != nil {
		return err
	}
	return enc.Close()
}

// clearStyle drops the flow style and quotes that the JSON text gave the nodes, so that the
// YAML reads as block YAML.
func clearStyle(n *yaml.Node) {
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		n.Style = 0
	}
	if n.Kind == yaml.ScalarNode && n.Style == yaml.DoubleQuotedStyle {
		n.Style = 0
	}
	for _, c := range n.Content {
		clearStyle(c)
	}
}

// Table collects rows and prints them for a person on a terminal, or as tab-separated
// values, with no header and full values, for a pipe.
type Table struct {
	ios    *iostreams.IOStreams
	header []string
	rows   [][]string
}

// NewTable returns an empty table for ios.Out.
func NewTable(ios *iostreams.IOStreams) *Table { return &Table{ios: ios} }

// Header sets the column names, shown only on a terminal.
func (t *Table) Header(cols ...string) { t.header = cols }

// Row adds a row.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// Render prints the table.
func (t *Table) Render() error {
	if !t.ios.IsStdoutTTY() {
		var b strings.Builder
		for _, r := range t.rows {
			for i, c := range r {
				if i > 0 {
					b.WriteByte('\t')
				}
				// A tab or newline inside a value would break the columns for cut and awk.
				b.WriteString(strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(c))
			}
			b.WriteByte('\n')
		}
		_, err := io.WriteString(t.ios.Out, b.String())
		return err
	}
	if len(t.rows) == 0 {
		return nil
	}
	var buf bytes.Buffer
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off, ShowHeader: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithHeaderAutoFormat(tw.On),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithPadding(tw.Padding{Right: "  ", Overwrite: true}),
	)
	tbl.Header(t.header)
	if err := tbl.Bulk(t.rows); err != nil {
		return err
	}
	if err := tbl.Render(); err != nil {
		return err
	}
	// Columns are padded to their width; the last one need not be. The header is bold
	// where colour is wanted (a terminal, and no NO_COLOR).
	var out strings.Builder
	first := true
	for line := range strings.Lines(buf.String()) {
		line = strings.TrimRight(line, " \n")
		if first && t.ios.ColorEnabled() {
			line = "\x1b[1m" + line + "\x1b[0m"
		}
		first = false
		out.WriteString(line)
		out.WriteByte('\n')
	}
	_, err := io.WriteString(t.ios.Out, out.String())
	return err
}
