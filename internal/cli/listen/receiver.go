package listen

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/connected-vehicle/vcs/internal/api"
)

// maxBody bounds a notification; real ones are well under a kilobyte.
const maxBody = 64 << 10

// receiver is the HTTP handler the service delivers notifications to. A notification is
// accepted only with this run's bearer secret AND a valid Standard Webhooks signature by
// the signing secret of the subscription it names: the first proves the sender knows what
// only our subscriptions carry, the second that the body is the service's, unaltered.
type receiver struct {
	auth    []byte // "Bearer <secret of this run>"
	now     func() time.Time
	json    bool
	out     *printer
	forward *forwarder // nil without --forward-to

	mu   sync.RWMutex
	subs map[int64]*subscription
	// ready is set once every subscription exists: before that, a notification naming a
	// subscription not yet registered may be ours (its create response still on the way),
	// so it is answered 503 to be retried rather than rejected.
	ready atomic.Bool

	seen *dedup

	received, duplicates, rejected atomic.Int64
}

// subscription is one of the session's subscriptions, with its signature verifier.
type subscription struct {
	sub api.Subscription
	ref string // the vehicle as named on the command line
	wh  *standardwebhooks.Webhook
	// mute takes notifications without showing them: a second subscription to a vehicle
	// that is shown through another.
	mute bool
}

func (rc *receiver) add(s *subscription) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.subs[s.sub.ID] = s
}

func (rc *receiver) lookup(id int64) *subscription {
	rc.mu.RLock()
	defer rc.mu.RUnlock()
	return rc.subs[id]
}

// incoming is what the receiver reads of a notification body; the body itself is kept
// as received. The recorded time stays a string until a pretty line needs it: decoding
// api.DateTime on every request would cost a good part of the intake.
type incoming struct {
	ID               int64 `json:"id"`
	SubscriptionID   int64 `json:"subscriptionId"`
	VehicleID        int64 `json:"vehicleId"`
	RecordedWaypoint struct {
		Timestamp string  `json:"timestamp"`
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
	} `json:"recordedWaypoint"`
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	received := rc.now()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		rc.reject(w, r, received, http.StatusMethodNotAllowed, r.Method+" instead of POST")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			rc.reject(w, r, received, http.StatusRequestEntityTooLarge, "the body is larger than a notification can be")
			return
		}
		rc.reject(w, r, received, http.StatusBadRequest, "the body could not be read")
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), rc.auth) != 1 {
		rc.reject(w, r, received, http.StatusUnauthorized, "wrong or missing Authorization header")
		return
	}
	var n incoming
	if err := json.Unmarshal(body, &n); err != nil || n.SubscriptionID <= 0 {
		rc.reject(w, r, received, http.StatusBadRequest, "the body is not a waypoint notification")
		return
	}
	s := rc.lookup(n.SubscriptionID)
	if s == nil {
		if !rc.ready.Load() {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		rc.reject(w, r, received, http.StatusUnauthorized, fmt.Sprintf("subscription %d is not one of this session's", n.SubscriptionID))
		return
	}
	if err := s.wh.Verify(body, r.Header); err != nil {
		rc.reject(w, r, received, http.StatusUnauthorized, "bad webhook signature: "+signatureProblem(err))
		return
	}
	// At-least-once delivery: a notification the service resends (our answer was lost, or
	// late) is acknowledged again but shown once. Only verified ids enter the set, so that
	// a forger cannot hide a real notification by sending its id first.
	if !rc.seen.add(r.Header.Get(standardwebhooks.HeaderWebhookID)) {
		rc.duplicates.Add(1)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if s.mute {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	rc.received.Add(1)
	var fwd *forwardResult
	if rc.forward != nil {
		fwd = rc.forward.post(r.Context(), body, r.Header)
	}
	rc.show(received, &n, body, fwd)
	w.WriteHeader(http.StatusNoContent)
}

// signatureProblem says briefly why a signature failed, without any secret.
func signatureProblem(err error) string {
	switch {
	case errors.Is(err, standardwebhooks.ErrRequiredHeaders):
		return "webhook-id, webhook-timestamp or webhook-signature missing"
	case errors.Is(err, standardwebhooks.ErrInvalidHeaders):
		return "malformed webhook-timestamp"
	case errors.Is(err, standardwebhooks.ErrMessageTooOld):
		return "webhook-timestamp too old (replayed?)"
	case errors.Is(err, standardwebhooks.ErrMessageTooNew):
		return "webhook-timestamp in the future"
	}
	return "no matching signature"
}

// reject answers status and warns on stderr: who sent what was refused, never the
// credentials it carried.
func (rc *receiver) reject(w http.ResponseWriter, r *http.Request, at time.Time, status int, why string) {
	rc.rejected.Add(1)
	http.Error(w, http.StatusText(status), status)
	rc.out.Err(fmt.Appendf(nil, "%s  warning: refused a request from %s (%d): %s\n",
		at.Format(clock), r.RemoteAddr, status, why))
}

const (
	clock     = "15:04:05.000"
	clockDay  = "2006-01-02 15:04:05"
	clockSecs = "15:04:05"
)

// show prints a notification: the body as one JSON line, or a line for people.
func (rc *receiver) show(received time.Time, n *incoming, body []byte, fwd *forwardResult) {
	if rc.json {
		var b bytes.Buffer
		b.Grow(len(body) + 1)
		if err := json.Compact(&b, body); err != nil {
			b.Reset()
			b.Write(body) // unreachable: the body decoded above
		}
		b.WriteByte('\n')
		rc.out.Out(b.Bytes())
		if fwd != nil {
			rc.out.Err(fmt.Appendf(nil, "%s  forwarded notification %d: %s\n", received.Format(clock), n.ID, fwd))
		}
		return
	}
	wp := n.RecordedWaypoint
	rec, late := "?", "?" // a signed body has a valid time; this only guards the line
	if at, err := api.ParseDateTime(wp.Timestamp); err == nil {
		recorded := at.Local()
		rec = recorded.Format(clockDay)
		if recorded.Format(time.DateOnly) == received.Local().Format(time.DateOnly) {
			rec = recorded.Format(clockSecs) // the day goes without saying
		}
		late = delay(received.Sub(recorded))
	}
	b := fmt.Appendf(make([]byte, 0, 128), "%s  vehicle %d  %s,%s  recorded %s  delay %s",
		received.Local().Format(clock), n.VehicleID,
		strconv.FormatFloat(wp.Latitude, 'f', 6, 64), strconv.FormatFloat(wp.Longitude, 'f', 6, 64),
		rec, late)
	if fwd != nil {
		b = fmt.Appendf(b, "  forward %s", fwd)
	}
	rc.out.Out(append(b, '\n'))
}

// delay is "0.42s" under a minute, else "3m12s".
func delay(d time.Duration) string {
	if d > -time.Minute && d < time.Minute {
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// dedup remembers the last webhook ids it was given, a bounded number of them: a resend
// comes within minutes (the service gives up after about ten), long before the window of
// ids rolls over at any rate a vehicle fleet reports.
type dedup struct {
	mu   sync.Mutex
	set  map[string]struct{}
	ring []string
	next int
}

func newDedup(size int) *dedup {
	return &dedup{set: make(map[string]struct{}, size), ring: make([]string, size)}
}

// add records id and reports whether it is new.
func (d *dedup) add(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.set[id]; ok {
		return false
	}
	if old := d.ring[d.next]; old != "" {
		delete(d.set, old)
	}
	d.ring[d.next] = id
	d.next = (d.next + 1) % len(d.ring)
	d.set[id] = struct{}{}
	return true
}

// forwarder re-posts verified notifications to --forward-to.
type forwarder struct {
	url string
	hc  *http.Client
}

// forwardTimeout bounds a forward. The service's answer waits for it, and the service gives
// an attempt 10 s: at 5 s a hung local app can never make the service count a failure and
// resend.
const forwardTimeout = 5 * time.Second

func newForwarder(target string) *forwarder {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return &forwarder{url: target, hc: &http.Client{
		Transport: t,
		Timeout:   forwardTimeout,
		// The local app's own answer is what the user wants to see, redirects included.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

type forwardResult struct {
	status int
	err    error
}

func (f *forwardResult) String() string {
	if f.err != nil {
		return "failed: " + f.err.Error()
	}
	if text := http.StatusText(f.status); text != "" {
		return strconv.Itoa(f.status) + " " + text
	}
	return strconv.Itoa(f.status)
}

// forwardHeaders are the request headers passed on: the local app can verify the
// signature itself. This run's Authorization secret is not passed on.
var forwardHeaders = []string{"Content-Type", "User-Agent", standardwebhooks.HeaderWebhookID,
	standardwebhooks.HeaderWebhookTimestamp, standardwebhooks.HeaderWebhookSignature}

func (f *forwarder) post(ctx context.Context, body []byte, h http.Header) *forwardResult {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return &forwardResult{err: err}
	}
	for _, k := range forwardHeaders {
		if v := h.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		return &forwardResult{err: shortError(err)}
	}
	// Read a little so that the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return &forwardResult{status: resp.StatusCode}
}

// shortError drops the "Post URL:" prefix that every *url.Error repeats.
func shortError(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if ue.Timeout() {
		return errors.New("timed out")
	}
	return ue.Err
}
