// Package subscribe is `vcs subscribe`: create, list, read, delete and test waypoint
// subscriptions, the service's promise to POST a notification to a URL for each waypoint a
// vehicle records.
package subscribe

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/net/http/httpguts"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
	"github.com/connected-vehicle/vcs/internal/output"
)

const vehicleArg = "give the vehicle's id or device serial"

// CreateOptions are the inputs of `vcs subscribe VEHICLE`.
type CreateOptions struct {
	IO        *iostreams.IOStreams
	APIClient func(context.Context) (*client.Client, error)
	Output    output.Options
	Ref       string
	PostURL   string
	// Headers are the -H flags, parsed: sent with every notification.
	Headers     map[string]string
	MinimumTime int
	Period      string
}

// NewCmdSubscribe returns `vcs subscribe`: with a vehicle it creates a subscription, and it
// holds the subcommands that manage them.
func NewCmdSubscribe(f *cmdutil.Factory) *cobra.Command {
	cmd := newCmdCreate(f, nil)
	cmd.AddCommand(NewCmdList(f, nil), NewCmdGet(f, nil), NewCmdDelete(f, nil), NewCmdTest(f, nil))
	return cmd
}

// newCmdCreate returns `vcs subscribe VEHICLE` without its subcommands, for tests.
func newCmdCreate(f *cmdutil.Factory, runF func(context.Context, *CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IOStreams, APIClient: f.APIClient}
	var headers []string
	cmd := &cobra.Command{
		Use:     "subscribe VEHICLE --post-url URL [flags]",
		Aliases: []string{"subscription", "subscriptions"},
		Short:   "Subscribe a URL to a vehicle's waypoints",
		Long: `With a vehicle (its vehicleId or device serial), subscribe a URL to the vehicle's
waypoints: the service POSTs one JSON notification to --post-url for each waypoint the
vehicle records, at most one every --minimum-time minutes, with the -H headers and
Standard Webhooks signature headers (webhook-id, webhook-timestamp, webhook-signature).

The subscription's signing secret is printed once, here: verify each notification's
webhook-signature with it. The other subcommands never print it.

To watch a vehicle's waypoints in this terminal, use "vcs listen" instead.`,
		Example: `  vcs subscribe 3 --post-url https://example.com/hooks/waypoint -H 'Authorization: Bearer s3cret'
  vcs subscribe C2015000003 --post-url https://example.com/hook --minimum-time 5 --period ONETIME -o json
  vcs subscribe list 3
  vcs subscribe test 3 17
  vcs subscribe delete 3 17 --yes`,
		Args: cmdutil.ExactArgs(1, vehicleArg+", or a command: list, get, delete, test"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Output.Validate(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			if strings.TrimSpace(opts.PostURL) == "" {
				return cmdutil.FlagErrorf("--post-url is required: the URL the service posts notifications to")
			}
			h, err := parseHeaders(headers)
			if err != nil {
				return err
			}
			period := strings.ToUpper(opts.Period)
			if period != api.PeriodContinuous && period != api.PeriodOnetime {
				return cmdutil.FlagErrorf("--period must be CONTINUOUS or ONETIME, not %q", opts.Period)
			}
			opts.Ref, opts.Headers, opts.Period = args[0], h, period
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return createRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.PostURL, "post-url", "", "the `URL` notifications are posted to (https; http and loopback in the sandbox)")
	fl.StringArrayVarP(&headers, "header", "H", nil, "a header sent with every notification, as `'Name: value'` (repeatable)")
	fl.IntVar(&opts.MinimumTime, "minimum-time", 0, "minutes between notifications; 0 notifies every waypoint")
	fl.StringVar(&opts.Period, "period", api.PeriodContinuous, "CONTINUOUS, or ONETIME to notify once and end the subscription")
	_ = cmd.RegisterFlagCompletionFunc("period", cobra.FixedCompletions(
		[]string{api.PeriodContinuous, api.PeriodOnetime}, cobra.ShellCompDirectiveNoFileComp))
	opts.Output.AddFlags(cmd)
	return cmd
}

// parseHeaders reads -H flags strictly: "Name: value", a valid header name, a non-empty
// valid value, each name once. The service checks which names it allows.
func parseHeaders(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(flags))
	for _, f := range flags {
		name, value, ok := strings.Cut(f, ":")
		value = strings.TrimSpace(value)
		switch {
		case !ok:
			return nil, cmdutil.FlagErrorf("-H %q: write a header as 'Name: value'", f)
		case !httpguts.ValidHeaderFieldName(name):
			return nil, cmdutil.FlagErrorf("-H %q: %q is not a valid header name", f, name)
		case value == "":
			return nil, cmdutil.FlagErrorf("-H %q: the header has no value", name)
		case !httpguts.ValidHeaderFieldValue(value):
			return nil, cmdutil.FlagErrorf("-H %s: the value has characters a header cannot carry", name)
		}
		for have := range out {
			if strings.EqualFold(have, name) {
				return nil, cmdutil.FlagErrorf("-H %s is given twice", name)
			}
		}
		out[name] = value
	}
	return out, nil
}

func createRun(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	in := api.SubscriptionInput{
		PostURL:            api.Some(strings.TrimSpace(opts.PostURL)),
		MinimumTime:        api.Some(opts.MinimumTime),
		NotificationPeriod: api.Some(opts.Period),
	}
	if opts.Headers != nil {
		in.PostHeaders = api.Some(opts.Headers)
	}
	sub, err := c.CreateSubscription(ctx, opts.Ref, in)
	if err != nil {
		return fmt.Errorf("subscribe to vehicle %s: %w", opts.Ref, err)
	}
	if opts.Output.Structured() {
		return opts.Output.Print(opts.IO, created{Subscription: redactHeaders(*sub)}, nil)
	}
	if !opts.IO.IsStdoutTTY() {
		return printSubscription(opts.IO, &opts.Output, sub, true)
	}
	return printCreated(opts.IO.Out, sub)
}

// printCreated is the block a person reads after creating a subscription.
func printCreated(w io.Writer, sub *api.Subscription) error {
	every := "every waypoint"
	if sub.MinimumTime > 0 {
		every = fmt.Sprintf("at most one every %s", minutes(sub.MinimumTime))
	}
	period := "until deleted"
	if sub.NotificationPeriod == api.PeriodOnetime {
		period = "once, then the subscription ends"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Subscribed %s to the waypoints of vehicle %d.\n\n", sub.PostURL, sub.VehicleID)
	fmt.Fprintf(&b, "  Subscription    %d\n", sub.ID)
	fmt.Fprintf(&b, "  Notifications   %s, %s (%s)\n", every, period, sub.NotificationPeriod)
	if len(sub.PostHeaders) > 0 {
		fmt.Fprintf(&b, "  Headers         %s\n", headerList(sub.PostHeaders))
	}
	fmt.Fprintf(&b, "  Signing secret  %s\n\n", sub.SigningSecret)
	fmt.Fprintf(&b, "The signing secret is shown for subscription %d only now: keep it to verify the\n", sub.ID)
	b.WriteString("webhook-signature header of each notification (Standard Webhooks).\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func minutes(n int) string {
	if n == 1 {
		return "minute"
	}
	return strconv.Itoa(n) + " minutes"
}

// created is a new subscription as JSON: every member, the signing secret included.
type created struct{ api.Subscription }

// shown is a subscription as JSON without its signing secret, which only create prints.
type shown struct {
	api.Subscription
	// SigningSecret hides the embedded member: the shallower field wins in encoding/json.
	SigningSecret string `json:"signingSecret,omitempty"`
}

// sensitive reports a header whose value is a credential: it is never printed.
func sensitive(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"auth", "token", "secret", "key", "cookie", "password", "signature", "session"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

const redacted = "<redacted>"

// redactHeaders returns sub with the values of credential headers replaced.
func redactHeaders(sub api.Subscription) api.Subscription {
	if len(sub.PostHeaders) == 0 {
		return sub
	}
	h := make(map[string]string, len(sub.PostHeaders))
	for k, v := range sub.PostHeaders {
		if sensitive(k) {
			v = redacted
		}
		h[k] = v
	}
	sub.PostHeaders = h
	return sub
}

// headerList is "Name: value; Name: value" in name order, credentials redacted.
func headerList(h map[string]string) string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })
	parts := make([]string, len(names))
	for i, k := range names {
		v := h[k]
		if sensitive(k) {
			v = redacted
		}
		parts[i] = k + ": " + v
	}
	return strings.Join(parts, "; ")
}

// printSubscription shows one subscription: a field per line for people and pipes, or
// JSON/YAML. withSecret adds the signing secret (create only).
func printSubscription(ios *iostreams.IOStreams, o *output.Options, sub *api.Subscription, withSecret bool) error {
	return o.Print(ios, shown{Subscription: redactHeaders(*sub)}, func(t *output.Table) {
		t.Header("field", "value")
		t.Row("id", strconv.FormatInt(sub.ID, 10))
		t.Row("vehicleId", strconv.FormatInt(sub.VehicleID, 10))
		t.Row("type", sub.Type)
		t.Row("postUrl", sub.PostURL)
		t.Row("postHeaders", headerList(sub.PostHeaders))
		t.Row("minimumTime", strconv.Itoa(sub.MinimumTime))
		t.Row("notificationPeriod", sub.NotificationPeriod)
		t.Row("creatorClientId", sub.CreatorClientID)
		t.Row("creationTimestamp", sub.CreationTimestamp.String())
		t.Row("deletionTimestamp", dateTime(sub.DeletionTimestamp))
		if withSecret {
			t.Row("signingSecret", sub.SigningSecret)
		}
	})
}

func dateTime(d *api.DateTime) string {
	if d == nil {
		return ""
	}
	return d.String()
}

// parseSubscriptionID reads a subscription id argument.
func parseSubscriptionID(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id <= 0 {
		return 0, cmdutil.FlagErrorf("subscription id %q must be a positive integer", arg)
	}
	return id, nil
}
