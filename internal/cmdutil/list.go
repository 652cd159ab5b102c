package cmdutil

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/output"
)

// ListFlags choose what a list command shows: one page, or every page.
type ListFlags struct {
	All    bool
	Limit  int
	Offset int
}

// Add registers --all, --limit and --offset; noun names the items in help ("vehicles").
func (l *ListFlags) Add(cmd *cobra.Command, noun string) {
	cmd.Flags().BoolVar(&l.All, "all", false, "list every one of the "+noun+", following the pages")
	cmd.Flags().IntVarP(&l.Limit, "limit", "L", 50, noun+" per page (1-500)")
	cmd.Flags().IntVar(&l.Offset, "offset", 0, noun+" to skip")
}

// Validate checks the flags' values.
func (l *ListFlags) Validate() error {
	if l.Limit < 1 || l.Limit > 500 {
		return FlagErrorf("--limit must be from 1 to 500")
	}
	if l.Offset < 0 {
		return FlagErrorf("--offset must not be negative")
	}
	return nil
}

// FetchList reads one page of a list, or all of it with --all, and says how many records
// there are in all.
func FetchList[T any](ctx context.Context, l ListFlags,
	page func(context.Context, client.Page) (api.Envelope[[]T], error),
	all func(context.Context, client.Page) ([]T, int, error),
) ([]T, int, error) {
	p := client.Page{Limit: l.Limit, Offset: l.Offset}
	if l.All {
		return all(ctx, p)
	}
	env, err := page(ctx, p)
	if err != nil {
		return nil, 0, err
	}
	total := len(env.Data)
	if env.TotalRecords != nil {
		total = *env.TotalRecords
	}
	return env.Data, total, nil
}

// ListNotice tells a person at a terminal that a list is empty (and returns true: nothing
// else to print) or that it shows only part of the records. Scripts get neither.
func ListNotice(ios *iostreams.IOStreams, o *output.Options, l ListFlags, noun string, shown, total int) bool {
	if o.Structured() || !ios.IsStdoutTTY() {
		return false
	}
	if shown == 0 {
		fmt.Fprintf(ios.ErrOut, "No %s.\n", noun)
		return true
	}
	if l.Offset+shown < total {
		fmt.Fprintf(ios.ErrOut, "Showing %d of %d %s; use --all for every one.\n", shown, total, noun)
	}
	return false
}
