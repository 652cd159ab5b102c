// Package events is the waypoint event service: subscriptions, the notifications that
// recorded waypoints create for them, and their delivery history. Delivery itself is the
// job of package delivery; this package decides what is to be delivered, inside the
// transaction that records the waypoint, so that nothing recorded is ever lost.
package events

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/auth"
	"github.com/connected-vehicle/vcs/internal/fleet"
	"github.com/connected-vehicle/vcs/internal/store"
)

// Attempter makes one delivery attempt now, for GET /test/...; package delivery has one.
type Attempter interface {
	Attempt(ctx context.Context, d *store.Delivery) *store.Outcome
}

// Config configures the Service.
type Config struct {
	// Domain is the service's host name, the notifications' _domain.
	Domain string
	// Sandbox allows http and loopback post URLs (for vcs listen).
	Sandbox bool
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Service manages subscriptions and notifications for the caller in the context.
type Service struct {
	db      *store.DB
	fleet   *fleet.Service
	cfg     Config
	attempt Attempter
}

// New returns a Service. attempt may be set later with SetAttempter.
func New(db *store.DB, f *fleet.Service, cfg Config) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{db: db, fleet: f, cfg: cfg}
}

// SetAttempter sets what makes test deliveries.
func (s *Service) SetAttempter(a Attempter) { s.attempt = a }

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

// Limits of a subscription.
const (
	maxPostHeaders    = 20
	maxHeaderValueLen = 4096
	maxPostURLLen     = 2048
	maxMinimumTime    = 7 * 24 * 60 // a week, in minutes
)

// forbiddenHeaders are set by the service itself; a subscription may not override them.
var forbiddenHeaders = []string{"host", "content-length", "content-type", "transfer-encoding", "connection"}

// ParseType reads an event type path segment, case-insensitively.
func ParseType(segment string) (string, error) {
	if t := strings.ToUpper(segment); t == api.EventWaypoint {
		return t, nil
	}
	return "", api.Errorf(api.CodeInvalid, "unsupported event type %q: the service has WAYPOINT events", segment)
}

// visibleVehicle resolves the vehicle and the caller.
func (s *Service) visibleVehicle(ctx context.Context, q *store.Queries, ref string) (*store.Vehicle, auth.Caller, error) {
	c, ok := auth.CallerFrom(ctx)
	if !ok {
		return nil, auth.Caller{}, api.Errorf(api.CodeUnauthorized, "authentication required")
	}
	v, err := s.fleet.FindVehicle(ctx, q, ref)
	return v, c, err
}

// CreateSubscription subscribes the caller's client to the vehicle's events of typ.
func (s *Service) CreateSubscription(ctx context.Context, vehicleRef, typ string, in api.SubscriptionInput) (*api.Subscription, error) {
	if err := s.validate(in).Err("subscription could not be created"); err != nil {
		return nil, err
	}
	sub := &store.Subscription{}
	sub.Type = typ
	sub.MinimumTime = in.MinimumTime.Value
	sub.PostURL = strings.TrimSpace(in.PostURL.Value)
	sub.PostHeaders = in.PostHeaders.Value
	if sub.PostHeaders == nil {
		sub.PostHeaders = map[string]string{}
	}
	sub.NotificationPeriod = api.PeriodContinuous
	if in.NotificationPeriod.Present() {
		sub.NotificationPeriod = strings.ToUpper(in.NotificationPeriod.Value)
	}
	sub.SigningSecret = newSigningSecret()
	sub.CreationTimestamp = api.NewDateTime(s.now())
	err := s.db.WriteTx(ctx, func(q *store.Queries) error {
		v, c, err := s.visibleVehicle(ctx, q, vehicleRef)
		if err != nil {
			return err
		}
		sub.VehicleID, sub.AccountID, sub.CreatorClientID = v.VehicleID, v.AccountID, c.ClientID
		return q.InsertSubscription(ctx, sub)
	})
	if err != nil {
		return nil, err
	}
	return &sub.Subscription, nil
}

func (s *Service) validate(in api.SubscriptionInput) api.FieldErrors {
	var fe api.FieldErrors
	if in.MinimumTime.Null || (in.MinimumTime.Set && (in.MinimumTime.Value < 0 || in.MinimumTime.Value > maxMinimumTime)) {
		fe.Add("minimumTime", api.CodeInvalid, "minimumTime must be minutes from 0 to %d", maxMinimumTime)
	}
	switch {
	case !in.PostURL.Present() || strings.TrimSpace(in.PostURL.Value) == "":
		fe.Add("postUrl", api.CodeRequired, "postUrl is required")
	default:
		if msg := s.checkPostURL(strings.TrimSpace(in.PostURL.Value)); msg != "" {
			fe.Add("postUrl", api.CodeInvalid, "%s", msg)
		}
	}
	if in.NotificationPeriod.Null {
		fe.Add("notificationPeriod", api.CodeInvalid, "notificationPeriod must be CONTINUOUS or ONETIME")
	} else if p := strings.ToUpper(in.NotificationPeriod.Value); in.NotificationPeriod.Set && p != api.PeriodContinuous && p != api.PeriodOnetime {
		fe.Add("notificationPeriod", api.CodeInvalid, "notificationPeriod must be CONTINUOUS or ONETIME for waypoint events")
	}
	if len(in.PostHeaders.Value) > maxPostHeaders {
		fe.Add("postHeaders", api.CodeInvalid, "postHeaders may hold at most %d headers", maxPostHeaders)
	}
	for _, name := range slices.Sorted(maps.Keys(in.PostHeaders.Value)) { // faults in a stable order
		value := in.PostHeaders.Value[name]
		lower := strings.ToLower(name)
		switch {
		case !httpguts.ValidHeaderFieldName(name):
			fe.Add("postHeaders", api.CodeInvalid, "postHeaders: %q is not a valid header name", name)
		case strings.HasPrefix(lower, "webhook-") || slices.Contains(forbiddenHeaders, lower):
			fe.Add("postHeaders", api.CodeInvalid, "postHeaders: %s is set by the service and cannot be given", name)
		case !httpguts.ValidHeaderFieldValue(value) || len(value) > maxHeaderValueLen:
			fe.Add("postHeaders", api.CodeInvalid, "postHeaders: the value of %s is not a valid header value", name)
		}
	}
	return fe
}

// checkPostURL says what is wrong with a post URL, or "". Production takes https to public
// hosts only; the sandbox also takes http and loopback (for vcs listen). The address a host
// name resolves to is checked again when the service connects.
func (s *Service) checkPostURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || len(raw) > maxPostURLLen {
		return "postUrl must be an absolute URL"
	}
	if u.User != nil {
		return "postUrl must not carry credentials; send them in postHeaders"
	}
	if u.Fragment != "" {
		return "postUrl must not have a fragment"
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !s.cfg.Sandbox {
			return "postUrl must use https"
		}
	default:
		return "postUrl must use https"
	}
	if !s.cfg.Sandbox {
		host := u.Hostname()
		if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
			return "postUrl must be a public address"
		}
		if ip, err := netip.ParseAddr(host); err == nil && !PublicAddr(ip) {
			return "postUrl must be a public address"
		}
	}
	return ""
}

// PublicAddr reports whether ip is a global unicast address that is not private, shared,
// loopback, link-local or otherwise special: the only kind production delivers to.
func PublicAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// nonPublic are special-purpose ranges that IsGlobalUnicast does not exclude (RFC 6890).
var nonPublic = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		"64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32", "2002::/16", "fc00::/7",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// newSigningSecret returns a Standard Webhooks secret: whsec_ and 32 random bytes in base64.
func newSigningSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// findSubscription returns a subscription of the vehicle that the caller's client created.
func (s *Service) findSubscription(ctx context.Context, q *store.Queries, vehicleRef, typ string, id int64) (*store.Subscription, error) {
	v, c, err := s.visibleVehicle(ctx, q, vehicleRef)
	if err != nil {
		return nil, err
	}
	sub, err := q.GetSubscription(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (sub.VehicleID != v.VehicleID || sub.CreatorClientID != c.ClientID || (typ != "" && sub.Type != typ))) {
		return nil, api.NotFound("subscription")
	}
	return sub, err
}

// GetSubscription returns one of the caller's client's subscriptions of the vehicle.
func (s *Service) GetSubscription(ctx context.Context, vehicleRef, typ string, id int64) (*api.Subscription, error) {
	sub, err := s.findSubscription(ctx, s.db.Read(), vehicleRef, typ, id)
	if err != nil {
		return nil, err
	}
	return &sub.Subscription, nil
}

// ListSubscriptions returns a page of the caller's client's subscriptions of the vehicle.
func (s *Service) ListSubscriptions(ctx context.Context, vehicleRef, typ string, page store.Page, desc bool) ([]api.Subscription, int, error) {
	var rows []*store.Subscription
	var total int
	err := s.db.ReadTx(ctx, func(q *store.Queries) error {
		v, c, err := s.visibleVehicle(ctx, q, vehicleRef)
		if err != nil {
			return err
		}
		rows, total, err = q.ListSubscriptions(ctx, store.SubscriptionFilter{VehicleID: v.VehicleID,
			CreatorClientID: c.ClientID, Type: typ, Descending: desc, Page: page})
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]api.Subscription, len(rows))
	for i, r := range rows {
		out[i] = r.Subscription
	}
	return out, total, nil
}

// DeleteSubscription marks the subscription deleted: no notification is created after
// this, and the ones not yet delivered are given up.
func (s *Service) DeleteSubscription(ctx context.Context, vehicleRef, typ string, id int64) error {
	return s.db.WriteTx(ctx, func(q *store.Queries) error {
		sub, err := s.findSubscription(ctx, q, vehicleRef, typ, id)
		if err != nil {
			return err
		}
		if sub.DeletionTimestamp != nil {
			return nil
		}
		if err := q.DeleteSubscription(ctx, sub.ID, s.now()); err != nil {
			return err
		}
		return q.CancelNotifications(ctx, sub.ID, "the subscription was deleted")
	})
}

// Fire creates, in q's transaction, a notification for each of the vehicle's waypoint
// subscriptions that wants this waypoint, and reports how many it created.
func (s *Service) Fire(ctx context.Context, q *store.Queries, v *store.Vehicle, wp api.Waypoint, tripID, dataSetID *int64) (int, error) {
	subs, err := q.ActiveSubscriptions(ctx, v.VehicleID, api.EventWaypoint)
	if err != nil {
		return 0, err
	}
	now := s.now()
	n := 0
	for _, sub := range subs {
		if sub.MinimumTime > 0 && sub.LastNotifiedAt != nil &&
			wp.Timestamp.Before(sub.LastNotifiedAt.Add(time.Duration(sub.MinimumTime)*time.Minute)) {
			continue // minimumTime: too soon after the last one
		}
		if _, err := s.insert(ctx, q, sub, v, wp, tripID, dataSetID, now, false); err != nil {
			return n, err
		}
		n++
		if sub.MinimumTime > 0 { // only minimumTime reads it
			if err := q.SetSubscriptionNotified(ctx, sub.ID, wp.Timestamp.Time); err != nil {
				return n, err
			}
		}
		if sub.NotificationPeriod == api.PeriodOnetime {
			if err := q.DeleteSubscription(ctx, sub.ID, now); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

func (s *Service) insert(ctx context.Context, q *store.Queries, sub *store.Subscription, v *store.Vehicle, wp api.Waypoint,
	tripID, dataSetID *int64, now time.Time, test bool) (*store.Notification, error) {
	n := &store.Notification{SubscriptionID: sub.ID, VehicleID: v.VehicleID, CreatedAt: now, Test: test,
		Status: api.StatusPending, NextAttemptAt: &now}
	if test {
		n.NextAttemptAt = nil // delivered by the request itself, never by the engine
	}
	// The id goes in front when the notification is sent (store.Notification.Payload).
	body, err := json.Marshal(bodyWithoutID{
		SubscriptionID: sub.ID, Domain: s.cfg.Domain, Type: sub.Type, Name: sub.Type,
		Timestamp: api.NewDateTime(now), MinimumTime: sub.MinimumTime, NotificationPeriod: sub.NotificationPeriod,
		CreatorClientID: sub.CreatorClientID, AccountID: v.AccountID, VehicleID: v.VehicleID,
		TripID: tripID, DataSetID: dataSetID, RecordedWaypoint: wp,
	})
	if err != nil {
		return nil, err
	}
	n.Body = body
	err = q.InsertNotification(ctx, n)
	return n, err
}

// bodyWithoutID is api.NotificationBody less its id, as stored.
type bodyWithoutID struct {
	SubscriptionID     int64        `json:"subscriptionId"`
	Domain             string       `json:"_domain"`
	Type               string       `json:"_type"`
	Name               string       `json:"_name"`
	Timestamp          api.DateTime `json:"_timestamp"`
	MinimumTime        int          `json:"minimumTime"`
	NotificationPeriod string       `json:"notificationPeriod"`
	CreatorClientID    string       `json:"creatorClientId"`
	AccountID          int64        `json:"accountId"`
	VehicleID          int64        `json:"vehicleId"`
	TripID             *int64       `json:"tripId"`
	DataSetID          *int64       `json:"dataSetId"`
	HTTPStatusCode     int          `json:"httpStatusCode"`
	RecordedWaypoint   api.Waypoint `json:"recordedWaypoint"`
}

// TestSubscription delivers a dummy notification to the subscription now, once, records
// the outcome, and returns it.
func (s *Service) TestSubscription(ctx context.Context, vehicleRef string, id int64) (*api.Notification, error) {
	if s.attempt == nil {
		return nil, errors.New("events: no deliverer")
	}
	var d *store.Delivery
	err := s.db.WriteTx(ctx, func(q *store.Queries) error {
		sub, err := s.findSubscription(ctx, q, vehicleRef, "", id)
		if err != nil {
			return err
		}
		if sub.DeletionTimestamp != nil {
			return api.Errorf(api.CodeConflict, "subscription %d is deleted", id)
		}
		v, _, err := s.visibleVehicle(ctx, q, vehicleRef)
		if err != nil {
			return err
		}
		wp := api.Waypoint{Timestamp: api.NewDateTime(s.now()), Latitude: 28.036441, Longitude: -82.593687}
		if v.LastWaypoint != nil {
			wp = *v.LastWaypoint
		}
		n, err := s.insert(ctx, q, sub, v, wp, nil, nil, s.now(), true)
		if err != nil {
			return err
		}
		d = &store.Delivery{Notification: *n, PostURL: sub.PostURL, PostHeaders: sub.PostHeaders, SigningSecret: sub.SigningSecret}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := s.attempt.Attempt(ctx, d)
	// A test is one attempt: it is not retried or redirected later.
	if out.Status == api.StatusPending {
		out.Status = api.StatusFailed
	}
	out.NextAttemptAt, out.MoveSubscription, out.DeleteSubscription = nil, nil, false
	if err := s.db.WriteTx(ctx, func(q *store.Queries) error { return q.RecordOutcome(ctx, out) }); err != nil {
		return nil, err
	}
	return s.GetNotification(ctx, vehicleRef, "", d.ID)
}

// GetNotification returns one notification of the caller's client with its attempts.
func (s *Service) GetNotification(ctx context.Context, vehicleRef, typ string, id int64) (*api.Notification, error) {
	var out *api.Notification
	err := s.db.ReadTx(ctx, func(q *store.Queries) error {
		v, c, err := s.visibleVehicle(ctx, q, vehicleRef)
		if err != nil {
			return err
		}
		n, err := q.GetNotification(ctx, id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && n.VehicleID != v.VehicleID) {
			return api.NotFound("notification")
		} else if err != nil {
			return err
		}
		sub, err := q.GetSubscription(ctx, n.SubscriptionID)
		if err != nil {
			return err
		}
		if sub.CreatorClientID != c.ClientID || (typ != "" && sub.Type != typ) {
			return api.NotFound("notification")
		}
		attempts, err := q.ListDeliveryAttempts(ctx, n.ID)
		if err != nil {
			return err
		}
		if out, err = view(n); err != nil {
			return err
		}
		for _, a := range attempts {
			out.DeliveryAttempts = append(out.DeliveryAttempts, api.DeliveryAttempt{
				Timestamp: api.NewDateTime(a.At), URL: a.URL, HTTPStatusCode: a.HTTPStatus, Error: a.Error,
				DurationMillis: a.Duration.Milliseconds(),
			})
		}
		return nil
	})
	return out, err
}

// ListNotifications returns a page of the vehicle's notifications for the caller's client.
func (s *Service) ListNotifications(ctx context.Context, vehicleRef, typ string, page store.Page, desc bool) ([]api.Notification, int, error) {
	var rows []*store.Notification
	var total int
	err := s.db.ReadTx(ctx, func(q *store.Queries) error {
		v, c, err := s.visibleVehicle(ctx, q, vehicleRef)
		if err != nil {
			return err
		}
		rows, total, err = q.ListNotifications(ctx, store.NotificationFilter{VehicleID: v.VehicleID,
			CreatorClientID: c.ClientID, Type: typ, Descending: desc, Page: page})
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	out := make([]api.Notification, 0, len(rows))
	for _, r := range rows {
		n, err := view(r)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, *n)
	}
	return out, total, nil
}

// view is a notification as the API shows it: the body sent, with its delivery state.
func view(n *store.Notification) (*api.Notification, error) {
	var out api.Notification
	if err := json.Unmarshal(n.Payload(), &out.NotificationBody); err != nil {
		return nil, fmt.Errorf("notification %d body: %w", n.ID, err)
	}
	out.HTTPStatusCode = n.HTTPStatus
	out.Status, out.Attempts, out.LastError, out.Test = n.Status, n.Attempts, n.LastError, n.Test
	if n.NextAttemptAt != nil && n.Status == api.StatusPending {
		d := api.NewDateTime(*n.NextAttemptAt)
		out.NextAttemptTimestamp = &d
	}
	if n.DeliveredAt != nil {
		d := api.NewDateTime(*n.DeliveredAt)
		out.DeliveredTimestamp = &d
	}
	return &out, nil
}

// DomainOf returns the _domain of notifications from a service at baseURL: its host name.
func DomainOf(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
