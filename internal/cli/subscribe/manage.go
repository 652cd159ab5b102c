package subscribe

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/output"
)

const subscriptionArgs = "give the vehicle's id or device serial and the subscription's id"

// ListOptions are the inputs of `vcs subscribe list`.
type ListOptions struct {
	IO        *iostreams.IOStreams
	APIClient func(context.Context) (*client.Client, error)
	Output    output.Options
	Ref       string
	All       bool
	Limit     int
	Offset    int
	Desc      bool
}

// NewCmdList returns `vcs subscribe list`.
func NewCmdList(f *cmdutil.Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{IO: f.IOStreams, APIClient: f.APIClient}
	cmd := &cobra.Command{
		Use:     "list VEHICLE",
		Aliases: []string{"ls"},
		Short:   "List a vehicle's subscriptions",
		Long: `List the subscriptions your client made to a vehicle's events, deleted ones included,
oldest first (--desc for newest first): one page (--limit, --offset) or all (--all).`,
		Example: `  vcs subscribe list 3
  vcs subscribe list 3 --all -o json --jq '.[] | select(.deletionTimestamp == null) | .id'`,
		Args: cmdutil.ExactArgs(1, vehicleArg),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			if opts.Limit < 1 || opts.Limit > 500 {
				return cmdutil.FlagErrorf("--limit must be from 1 to 500")
			}
			if opts.Offset < 0 {
				return cmdutil.FlagErrorf("--offset must not be negative")
			}
			opts.Ref = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "list every subscription, following the pages")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "L", 50, "subscriptions per page (1-500)")
	cmd.Flags().IntVar(&opts.Offset, "offset", 0, "subscriptions to skip")
	cmd.Flags().BoolVar(&opts.Desc, "desc", false, "newest first")
	opts.Output.AddFlags(cmd)
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	q := client.EventQuery{Page: client.Page{Limit: opts.Limit, Offset: opts.Offset}, Descending: opts.Desc}
	var subs []api.Subscription
	var total int
	if opts.All {
		subs, total, err = c.AllSubscriptions(ctx, opts.Ref, q)
	} else {
		var env api.Envelope[[]api.Subscription]
		env, err = c.Subscriptions(ctx, opts.Ref, q)
		subs = env.Data
		if env.TotalRecords != nil {
			total = *env.TotalRecords
		}
	}
	if err != nil {
		return fmt.Errorf("list subscriptions of vehicle %s: %w", opts.Ref, err)
	}
	if !opts.Output.Structured() && opts.IO.IsStdoutTTY() {
		if len(subs) == 0 {
			fmt.Fprintf(opts.IO.ErrOut, "No subscriptions to vehicle %s.\n", opts.Ref)
			return nil
		}
		if opts.Offset+len(subs) < total {
			fmt.Fprintf(opts.IO.ErrOut, "Showing %d of %d subscriptions; use --all for every one.\n", len(subs), total)
		}
	}
	out := make([]shown, len(subs))
	for i, s := range subs {
		out[i] = shown{Subscription: redactHeaders(s)}
	}
	return opts.Output.Print(opts.IO, out, func(t *output.Table) {
		t.Header("id", "vehicle", "created", "deleted", "period", "minimum time", "post url")
		for _, s := range subs {
			t.Row(strconv.FormatInt(s.ID, 10), strconv.FormatInt(s.VehicleID, 10), s.CreationTimestamp.String(),
				dateTime(s.DeletionTimestamp), s.NotificationPeriod, strconv.Itoa(s.MinimumTime), s.PostURL)
		}
	})
}

// GetOptions are the inputs of `vcs subscribe get`.
type GetOptions struct {
	IO        *iostreams.IOStreams
	APIClient func(context.Context) (*client.Client, error)
	Output    output.Options
	Ref       string
	ID        int64
}

// NewCmdGet returns `vcs subscribe get`.
func NewCmdGet(f *cmdutil.Factory, runF func(context.Context, *GetOptions) error) *cobra.Command {
	opts := &GetOptions{IO: f.IOStreams, APIClient: f.APIClient}
	cmd := &cobra.Command{
		Use:     "get VEHICLE SUBSCRIPTION_ID",
		Aliases: []string{"view", "show"},
		Short:   "Show a subscription",
		Long:    "Show one of your client's subscriptions to a vehicle. Its signing secret is not shown: only create prints it.",
		Example: `  vcs subscribe get 3 17
  vcs subscribe get C2015000003 17 -o json`,
		Args: cmdutil.ExactArgs(2, subscriptionArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			id, err := parseSubscriptionID(args[1])
			if err != nil {
				return err
			}
			opts.Ref, opts.ID = args[0], id
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return getRun(cmd.Context(), opts)
		},
	}
	opts.Output.AddFlags(cmd)
	return cmd
}

func getRun(ctx context.Context, opts *GetOptions) error {
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	sub, err := c.Subscription(ctx, opts.Ref, opts.ID)
	if err != nil {
		return fmt.Errorf("get subscription %d of vehicle %s: %w", opts.ID, opts.Ref, err)
	}
	return printSubscription(opts.IO, &opts.Output, sub, false)
}

// DeleteOptions are the inputs of `vcs subscribe delete`.
type DeleteOptions struct {
	IO        *iostreams.IOStreams
	APIClient func(context.Context) (*client.Client, error)
	Ref       string
	ID        int64
	Yes       bool
}

// NewCmdDelete returns `vcs subscribe delete`.
func NewCmdDelete(f *cmdutil.Factory, runF func(context.Context, *DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IOStreams, APIClient: f.APIClient}
	cmd := &cobra.Command{
		Use:     "delete VEHICLE SUBSCRIPTION_ID",
		Aliases: []string{"rm"},
		Short:   "Delete a subscription",
		Long: `Delete a subscription: the service creates no notification for it after this, and gives
up the ones not yet delivered. On a terminal it asks first; elsewhere it needs --yes.`,
		Example: "  vcs subscribe delete 3 17 --yes",
		Args:    cmdutil.ExactArgs(2, subscriptionArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseSubscriptionID(args[1])
			if err != nil {
				return err
			}
			opts.Ref, opts.ID = args[0], id
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return deleteRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	return cmd
}

func deleteRun(ctx context.Context, opts *DeleteOptions) error {
	question := fmt.Sprintf("Delete subscription %d of vehicle %s?", opts.ID, opts.Ref)
	if err := cmdutil.ConfirmDestructive(opts.IO, opts.Yes, question); err != nil {
		return err
	}
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	if err := c.DeleteSubscription(ctx, opts.Ref, opts.ID); err != nil {
		return fmt.Errorf("delete subscription %d of vehicle %s: %w", opts.ID, opts.Ref, err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "Deleted subscription %d of vehicle %s\n", opts.ID, opts.Ref)
	return nil
}

// TestOptions are the inputs of `vcs subscribe test`.
type TestOptions struct {
	IO        *iostreams.IOStreams
	APIClient func(context.Context) (*client.Client, error)
	Output    output.Options
	Ref       string
	ID        int64
}

// NewCmdTest returns `vcs subscribe test`.
func NewCmdTest(f *cmdutil.Factory, runF func(context.Context, *TestOptions) error) *cobra.Command {
	opts := &TestOptions{IO: f.IOStreams, APIClient: f.APIClient}
	cmd := &cobra.Command{
		Use:   "test VEHICLE SUBSCRIPTION_ID",
		Short: "Send a test notification now",
		Long: `Have the service deliver a dummy notification (the vehicle's last waypoint) to the
subscription's URL now, once, and show the outcome: status, the receiver's HTTP status,
and the error, if any. It fails (exit 1) when the receiver did not take it.`,
		Example: `  vcs subscribe test 3 17
  vcs subscribe test 3 17 --jq .httpStatusCode`,
		Args: cmdutil.ExactArgs(2, subscriptionArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			id, err := parseSubscriptionID(args[1])
			if err != nil {
				return err
			}
			opts.Ref, opts.ID = args[0], id
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return testRun(cmd.Context(), opts)
		},
	}
	opts.Output.AddFlags(cmd)
	return cmd
}

func testRun(ctx context.Context, opts *TestOptions) error {
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	n, err := c.TestSubscription(ctx, opts.Ref, opts.ID)
	if err != nil {
		return fmt.Errorf("test subscription %d of vehicle %s: %w", opts.ID, opts.Ref, err)
	}
	url := ""
	var durationMillis int64
	if len(n.DeliveryAttempts) > 0 {
		last := n.DeliveryAttempts[len(n.DeliveryAttempts)-1]
		url, durationMillis = last.URL, last.DurationMillis
	}
	err = opts.Output.Print(opts.IO, n, func(t *output.Table) {
		t.Header("field", "value")
		t.Row("notification", strconv.FormatInt(n.ID, 10))
		t.Row("status", n.Status)
		t.Row("httpStatus", httpStatus(n.HTTPStatusCode))
		t.Row("error", str(n.LastError))
		t.Row("url", url)
		t.Row("duration", fmt.Sprintf("%dms", durationMillis))
		t.Row("waypoint", fmt.Sprintf("%.6f,%.6f", n.RecordedWaypoint.Latitude, n.RecordedWaypoint.Longitude))
	})
	if err != nil {
		return err
	}
	if n.Status != api.StatusDelivered {
		reason := "the receiver did not answer 2xx"
		if n.LastError != nil {
			reason = *n.LastError
		}
		return fmt.Errorf("test notification %d was not delivered: %s", n.ID, reason)
	}
	return nil
}

// httpStatus is "200 OK", or "" when no answer came.
func httpStatus(code int) string {
	if code == 0 {
		return ""
	}
	if text := http.StatusText(code); text != "" {
		return strconv.Itoa(code) + " " + text
	}
	return strconv.Itoa(code)
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
