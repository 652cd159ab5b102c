// Package listen is `vcs listen`: receive a vehicle's waypoint notifications on this
// machine and print them as they come, for the time the command runs.
package listen

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/iostreams"
)

// Output formats.
const (
	FormatPretty = "pretty"
	FormatJSON   = "json"
)

// ListenOptions are the inputs of `vcs listen`.
type ListenOptions struct {
	IO        *iostreams.IOStreams
	APIClient func(context.Context) (*client.Client, error)
	Vehicles  []string
	All       bool
	ForwardTo string
	PublicURL string
	Port      int
	Format    string
	Now       func() time.Time

	// pageSize is how many vehicles --all reads per request (0: the service's maximum).
	pageSize int
	// onReady is called once every subscription exists, with the receiver's local URL and
	// the subscriptions (tests).
	onReady func(receiverURL string, subs []api.Subscription)
}

// NewCmdListen returns `vcs listen`.
func NewCmdListen(f *cmdutil.Factory, runF func(context.Context, *ListenOptions) error) *cobra.Command {
	opts := &ListenOptions{IO: f.IOStreams, APIClient: f.APIClient, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "listen [VEHICLE...|--all]",
		Short: "Print vehicles' waypoints as they are recorded",
		Long: `Receive the waypoint notifications of vehicles on this machine and print one line per
notification, until Ctrl-C.

listen starts a receiver on 127.0.0.1, subscribes it to each vehicle named (its vehicleId
or device serial), or to every vehicle of the account with --all, and prints "Ready!" on
stderr once every subscription exists. Each notification must carry this run's random
bearer secret and a valid Standard Webhooks signature; others are refused (401) and
reported on stderr. A notification the service sends twice is printed once.

A line shows when the notification arrived (local time), the vehicle, the position, when
the waypoint was recorded and the delay in between. --format json prints each notification
body instead, as one JSON line.

--forward-to re-posts each notification (same body, Content-Type and webhook-* headers) to
a URL, such as your app on localhost, and shows what it answered. The service's delivery
waits for the forward, at most 5 seconds, so that notifications reach your app in order.

The sandbox delivers to 127.0.0.1; a service elsewhere needs a tunnel to the receiver:
give its public URL with --public-url and a fixed --port for it to point at.

On Ctrl-C (or SIGTERM) listen deletes the subscriptions it created.`,
		Example: `  vcs listen 3
  vcs listen --all --format json | jq .recordedWaypoint
  vcs listen 3 --forward-to http://localhost:3000/hooks/waypoint
  vcs listen 3 --port 4242 --public-url https://abc123.tunnel.example`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.All && len(args) > 0:
				return cmdutil.FlagErrorf("give vehicles or --all, not both")
			case !opts.All && len(args) == 0:
				return cmdutil.FlagErrorf("give one or more vehicles (id or device serial), or --all")
			case opts.Format != FormatPretty && opts.Format != FormatJSON:
				return cmdutil.FlagErrorf("--format must be pretty or json, not %q", opts.Format)
			case opts.Port < 0 || opts.Port > 65535:
				return cmdutil.FlagErrorf("--port must be from 1 to 65535 (0 picks a free one)")
			}
			for _, fl := range []struct{ name, value string }{{"--forward-to", opts.ForwardTo}, {"--public-url", opts.PublicURL}} {
				if fl.value == "" {
					continue
				}
				if u, err := url.Parse(fl.value); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return cmdutil.FlagErrorf("%s must be an absolute http or https URL, not %q", fl.name, fl.value)
				}
			}
			opts.Vehicles = uniq(args)
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return listenRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.All, "all", false, "listen to every vehicle of the account")
	fl.StringVar(&opts.ForwardTo, "forward-to", "", "re-post each notification to this `URL` and show its answer")
	fl.StringVar(&opts.PublicURL, "public-url", "", "the `URL` the service should post to instead of the receiver (a tunnel to it)")
	fl.IntVar(&opts.Port, "port", 0, "the receiver's port on 127.0.0.1 (default: a free one)")
	fl.StringVar(&opts.Format, "format", FormatPretty, "pretty (a line for people) or json (each notification body on one line)")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(
		[]string{FormatPretty, FormatJSON}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func uniq(args []string) []string {
	var out []string
	for _, a := range args {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// Timeouts of the session's own work.
const (
	createTimeout   = 30 * time.Second // one subscription, even after Ctrl-C
	cleanupTimeout  = 30 * time.Second // deleting them all on the way out
	shutdownTimeout = forwardTimeout + 2*time.Second
	dedupWindow     = 1 << 17
)

func listenRun(ctx context.Context, opts *ListenOptions) error {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	c, err := opts.APIClient(ctx)
	if err != nil {
		return err
	}
	refs := opts.Vehicles
	if opts.All {
		size := opts.pageSize
		if size == 0 {
			size = 500
		}
		vs, _, err := c.AllVehicles(ctx, client.Page{Limit: size})
		if err != nil {
			return fmt.Errorf("list vehicles: %w", err)
		}
		if len(vs) == 0 {
			return errors.New("the account has no vehicles to listen to")
		}
		refs = make([]string, len(vs))
		for i, v := range vs {
			refs[i] = strconv.FormatInt(v.VehicleID, 10)
		}
	}

	secret, err := randomSecret()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)))
	if err != nil {
		return fmt.Errorf("start the receiver: %w", err)
	}
	localURL := "http://" + ln.Addr().String() + "/"
	postURL := localURL
	if opts.PublicURL != "" {
		postURL = opts.PublicURL
	}

	// A write error on stdout (the reader went away) ends the session like Ctrl-C would;
	// out.Close reports it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := newPrinter(opts.IO.Out, opts.IO.ErrOut, func(error) { cancel() })
	rc := &receiver{
		auth: []byte("Bearer " + secret),
		now:  now,
		json: opts.Format == FormatJSON,
		out:  out,
		subs: map[int64]*subscription{},
		seen: newDedup(dedupWindow),
	}
	if opts.ForwardTo != "" {
		rc.forward = newForwarder(opts.ForwardTo)
	}
	srv := &http.Server{
		Handler:           rc,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      forwardTimeout + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    256 << 10,
		// The server's own complaints (a client hanging up) would garble the output.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	s := &session{opts: opts, out: out}
	created, err := s.subscribe(ctx, c, refs, postURL, secret, rc)
	if err == nil && ctx.Err() == nil {
		rc.ready.Store(true)
		s.ready(localURL, created)
		select {
		case <-ctx.Done():
		case err = <-served:
			err = fmt.Errorf("the receiver stopped: %w", err)
		}
	}

	// Delete first, while the receiver still takes what the service is sending, then stop.
	cleanupErr := s.unsubscribe(created)
	shutdownCtx, stop := context.WithTimeout(context.Background(), shutdownTimeout)
	if serr := srv.Shutdown(shutdownCtx); serr != nil {
		srv.Close()
	}
	stop()
	if rc.ready.Load() {
		out.Err(fmt.Appendf(nil, "Received %s (%s dropped, %s refused).\n",
			plural(rc.received.Load(), "notification"), plural(rc.duplicates.Load(), "duplicate"), plural(rc.rejected.Load(), "request")))
	}
	if werr := out.Close(); err == nil && werr != nil {
		err = fmt.Errorf("write output: %w", werr)
	}
	return errors.Join(err, cleanupErr)
}

// session holds what the steps of a listen run share.
type session struct {
	opts *ListenOptions
	out  *printer
}

// subscribe creates a subscription for each vehicle and registers it with the receiver as
// soon as it exists. It returns those it created, also when it fails or is interrupted
// halfway, so that they are deleted.
func (s *session) subscribe(ctx context.Context, c *client.Client, refs []string, postURL, secret string, rc *receiver) ([]*subscription, error) {
	in := api.SubscriptionInput{
		MinimumTime:        api.Some(0),
		PostURL:            api.Some(postURL),
		PostHeaders:        api.Some(map[string]string{"Authorization": "Bearer " + secret}),
		NotificationPeriod: api.Some(api.PeriodContinuous),
	}
	var created []*subscription
	byVehicle := map[int64]string{}
	for _, ref := range refs {
		if ctx.Err() != nil {
			return created, nil
		}
		// Not cancelled by Ctrl-C: a create cut short could leave a subscription at the
		// service that this run never learns of, and so never deletes.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
		sub, err := c.CreateSubscription(cctx, ref, in)
		cancel()
		if err != nil {
			return created, fmt.Errorf("subscribe to vehicle %s: %w%s", ref, err, s.hint(err))
		}
		wh, err := standardwebhooks.NewWebhook(sub.SigningSecret)
		if err != nil {
			created = append(created, &subscription{sub: *sub, ref: ref})
			return created, fmt.Errorf("subscription %d has an unusable signing secret: %w", sub.ID, err)
		}
		cur := &subscription{sub: *sub, ref: ref, wh: wh}
		created = append(created, cur)
		if first, dup := byVehicle[sub.VehicleID]; dup {
			// Two names of one vehicle (its id and its serial): the second subscription's
			// notifications are taken quietly, not printed twice, and it is deleted with
			// the rest.
			cur.mute = true
			s.out.Err(fmt.Appendf(nil, "%s and %s are the same vehicle (%d): showing its waypoints once.\n", first, ref, sub.VehicleID))
		} else {
			byVehicle[sub.VehicleID] = ref
		}
		rc.add(cur)
	}
	return created, nil
}

// hint helps with the post URL a service outside the sandbox refuses.
func (s *session) hint(err error) string {
	var apiErr *api.Error
	if !errors.As(err, &apiErr) || s.opts.PublicURL != "" {
		return ""
	}
	for _, fe := range apiErr.FieldErrors {
		if fe.FieldName == "postUrl" {
			return " (only the sandbox delivers to 127.0.0.1: for another service, run a tunnel to --port and give its https address with --public-url)"
		}
	}
	return ""
}

// ready says that notifications are coming: what is listened to, where, and how to stop.
func (s *session) ready(localURL string, created []*subscription) {
	var vehicles []string
	var subs []api.Subscription
	seen := map[int64]bool{}
	for _, c := range created {
		subs = append(subs, c.sub)
		if !seen[c.sub.VehicleID] {
			seen[c.sub.VehicleID] = true
			vehicles = append(vehicles, strconv.FormatInt(c.sub.VehicleID, 10))
		}
	}
	where := localURL
	if s.opts.PublicURL != "" {
		where = s.opts.PublicURL + " (tunnelled to " + localURL + ")"
	}
	noun := "vehicle"
	if len(vehicles) > 1 {
		noun = "vehicles"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Ready! Receiving the waypoints of %s %s at %s\n", noun, list(vehicles, 10), where)
	if s.opts.ForwardTo != "" {
		fmt.Fprintf(&b, "Forwarding each notification to %s. ", s.opts.ForwardTo)
	}
	b.WriteString("Press Ctrl-C to stop and delete the subscriptions.\n")
	s.out.Err([]byte(b.String()))
	if s.opts.onReady != nil {
		s.opts.onReady(localURL, subs)
	}
}

// unsubscribe deletes the subscriptions this run created, with a context of its own: the
// command's is cancelled by then. It says what it did on stderr.
func (s *session) unsubscribe(created []*subscription) error {
	if len(created) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	// A new client: the first one's token source is bound to the cancelled context and could
	// not refresh an expired token.
	c, err := s.opts.APIClient(ctx)
	if err != nil {
		return fmt.Errorf("delete the subscriptions %s: %w", ids(created), err)
	}
	var mu sync.Mutex
	var failed []*subscription
	var errs []error
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8) // --all may have created many: a few at a time
	for _, sub := range created {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := c.DeleteSubscription(ctx, strconv.FormatInt(sub.sub.VehicleID, 10), sub.sub.ID); err != nil {
				mu.Lock()
				failed = append(failed, sub)
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failed) == 0 {
		s.out.Err(fmt.Appendf(nil, "Deleted %s %s.\n", pluralWord(len(created), "subscription"), ids(created)))
		return nil
	}
	slices.SortFunc(failed, func(a, b *subscription) int { return int(a.sub.ID - b.sub.ID) })
	var how []string
	for _, f := range failed {
		how = append(how, fmt.Sprintf("vcs subscribe delete %d %d", f.sub.VehicleID, f.sub.ID))
	}
	return fmt.Errorf("could not delete %s %s (%w); delete them with: %s",
		pluralWord(len(failed), "subscription"), ids(failed), errs[0], strings.Join(how, "; "))
}

func ids(subs []*subscription) string {
	s := make([]string, len(subs))
	for i, sub := range subs {
		s[i] = strconv.FormatInt(sub.sub.ID, 10)
	}
	return list(s, len(s))
}

// list is "1", "1 and 2", "1, 2 and 3", or the first n and how many more.
func list(items []string, n int) string {
	if len(items) > n {
		return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
	}
	if len(items) <= 1 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func plural(n int64, word string) string {
	return strconv.FormatInt(n, 10) + " " + pluralWord(int(n), word)
}

// randomSecret is this run's bearer secret: 256 random bits.
func randomSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a secret: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
