package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connected-vehicle/vcs/internal/api"
)

// Subscription is a subscription row.
type Subscription struct {
	api.Subscription
	AccountID      int64 `json:"-"` // owner of the vehicle (joined in)
	LastNotifiedAt *time.Time
}

const subscriptionColumns = `s.id, s.vehicle_id, v.account_id, s.creator_client_id, s.type, s.minimum_time,
	s.post_url, s.post_headers, s.notification_period, s.signing_secret, s.created_at, s.deleted_at,
	s.last_notified_at`

const subscriptionFrom = ` FROM subscriptions s JOIN vehicles v ON v.id = s.vehicle_id`

func scanSubscription(s scanner) (*Subscription, error) {
	var (
		sub              Subscription
		headers          string
		created          int64
		deleted, notifed sql.NullInt64
	)
	err := s.Scan(&sub.ID, &sub.VehicleID, &sub.AccountID, &sub.CreatorClientID, &sub.Type, &sub.MinimumTime,
		&sub.PostURL, &headers, &sub.NotificationPeriod, &sub.SigningSecret, &created, &deleted, &notifed)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(headers), &sub.PostHeaders); err != nil {
		return nil, fmt.Errorf("subscription %d headers: %w", sub.ID, err)
	}
	sub.CreationTimestamp = api.NewDateTime(fromMillis(created))
	if t := fromNullMillis(deleted); t != nil {
		d := api.NewDateTime(*t)
		sub.DeletionTimestamp = &d
	}
	sub.LastNotifiedAt = fromNullMillis(notifed)
	return &sub, nil
}

// InsertSubscription stores s and sets its ID.
func (q *Queries) InsertSubscription(ctx context.Context, s *Subscription) error {
	headers, err := json.Marshal(s.PostHeaders)
	if err != nil {
		return err
	}
	err = q.row(ctx, `INSERT INTO subscriptions (vehicle_id, creator_client_id, type, minimum_time, post_url,
		post_headers, notification_period, signing_secret, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		s.VehicleID, s.CreatorClientID, s.Type, s.MinimumTime, s.PostURL, string(headers), s.NotificationPeriod,
		s.SigningSecret, millis(s.CreationTimestamp.Time)).Scan(&s.ID)
	if err != nil {
		return fmt.Errorf("insert subscription: %w", err)
	}
	return nil
}

// GetSubscription returns the subscription with id.
func (q *Queries) GetSubscription(ctx context.Context, id int64) (*Subscription, error) {
	s, err := scanSubscription(q.row(ctx, `SELECT `+subscriptionColumns+subscriptionFrom+` WHERE s.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("get subscription %d: %w", id, notFound(err))
	}
	return s, nil
}

// SubscriptionFilter selects a vehicle's subscriptions of one client.
type SubscriptionFilter struct {
	VehicleID       int64
	CreatorClientID string
	Type            string // "" for every type
	Descending      bool
	Page
}

// ListSubscriptions returns a page of subscriptions, by creation time, and their count.
func (q *Queries) ListSubscriptions(ctx context.Context, f SubscriptionFilter) ([]*Subscription, int, error) {
	where := ` WHERE s.vehicle_id = ? AND s.creator_client_id = ?`
	args := []any{f.VehicleID, f.CreatorClientID}
	if f.Type != "" {
		where += ` AND s.type = ?`
		args = append(args, f.Type)
	}
	var total int
	if err := q.row(ctx, `SELECT COUNT(*)`+subscriptionFrom+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count subscriptions: %w", err)
	}
	rows, err := q.rows(ctx, `SELECT `+subscriptionColumns+subscriptionFrom+where+` ORDER BY s.created_at `+dir(f.Descending)+
		`, s.id `+dir(f.Descending)+` LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list subscriptions: %w", err)
	}
	out, err := collect(rows, scanSubscription)
	return out, total, err
}

// ActiveSubscriptions returns the vehicle's subscriptions of a type that are not deleted.
func (q *Queries) ActiveSubscriptions(ctx context.Context, vehicleID int64, typ string) ([]*Subscription, error) {
	rows, err := q.rows(ctx, `SELECT `+subscriptionColumns+subscriptionFrom+
		` WHERE s.vehicle_id = ? AND s.type = ? AND s.deleted_at IS NULL ORDER BY s.id`, vehicleID, typ)
	if err != nil {
		return nil, fmt.Errorf("active subscriptions: %w", err)
	}
	return collect(rows, scanSubscription)
}

// DeleteSubscription marks a subscription deleted.
func (q *Queries) DeleteSubscription(ctx context.Context, id int64, now time.Time) error {
	if err := q.exec(ctx, `UPDATE subscriptions SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL`, millis(now), id); err != nil {
		return fmt.Errorf("delete subscription %d: %w", id, err)
	}
	return nil
}

// CancelNotifications gives up a subscription's notifications not yet delivered, for
// reason: nothing more goes to its receiver.
func (q *Queries) CancelNotifications(ctx context.Context, subscriptionID int64, reason string) error {
	err := q.exec(ctx, `UPDATE notifications SET status = ?, next_attempt_at = NULL, claimed_by = NULL, last_error = ?
		WHERE subscription_id = ? AND status = ?`, api.StatusFailed, reason, subscriptionID, api.StatusPending)
	if err != nil {
		return fmt.Errorf("cancel notifications of subscription %d: %w", subscriptionID, err)
	}
	return nil
}

// SetSubscriptionNotified records when the subscription was last notified (minimumTime).
func (q *Queries) SetSubscriptionNotified(ctx context.Context, id int64, at time.Time) error {
	return q.exec(ctx, `UPDATE subscriptions SET last_notified_at = ? WHERE id = ?`, millis(at), id)
}

// SetSubscriptionURL moves a subscription to a new postUrl (a permanent redirect).
func (q *Queries) SetSubscriptionURL(ctx context.Context, id int64, url string) error {
	return q.exec(ctx, `UPDATE subscriptions SET post_url = ? WHERE id = ?`, url, id)
}

func dir(desc bool) string {
	if desc {
		return "DESC"
	}
	return "ASC"
}

// collect scans every row.
func collect[T any](rows *sql.Rows, scan func(scanner) (*T, error)) ([]*T, error) {
	defer rows.Close()
	var out []*T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Notification is a notification row.
type Notification struct {
	ID             int64
	SubscriptionID int64
	VehicleID      int64
	CreatedAt      time.Time
	Body           []byte
	Test           bool
	Status         string
	Attempts       int
	HTTPStatus     int
	LastError      *string
	NextAttemptAt  *time.Time
	DeliveredAt    *time.Time
}

const notificationColumns = `id, subscription_id, vehicle_id, created_at, body, test, status, attempts,
	http_status, last_error, next_attempt_at, delivered_at`

func scanNotification(s scanner) (*Notification, error) {
	var (
		n               Notification
		created         int64
		body            string
		lastErr         sql.NullString
		next, delivered sql.NullInt64
	)
	err := s.Scan(&n.ID, &n.SubscriptionID, &n.VehicleID, &created, &body, &n.Test, &n.Status, &n.Attempts,
		&n.HTTPStatus, &lastErr, &next, &delivered)
	if err != nil {
		return nil, err
	}
	n.CreatedAt = fromMillis(created)
	n.Body = []byte(body)
	n.LastError = fromNullString(lastErr)
	n.NextAttemptAt, n.DeliveredAt = fromNullMillis(next), fromNullMillis(delivered)
	return &n, nil
}

// InsertNotification stores n and sets its ID. n.Body is the JSON object sent, without its
// "id" member, which Payload puts in front: the id is not known before the insert, and
// writing the body again after it would cost a second statement per notification.
func (q *Queries) InsertNotification(ctx context.Context, n *Notification) error {
	var next sql.NullInt64
	if n.NextAttemptAt != nil {
		next = sql.NullInt64{Int64: millis(*n.NextAttemptAt), Valid: true}
	}
	err := q.row(ctx, `INSERT INTO notifications (subscription_id, vehicle_id, created_at, body, test, status,
		attempts, http_status, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?, 0, 0, ?) RETURNING id`,
		n.SubscriptionID, n.VehicleID, millis(n.CreatedAt), string(n.Body), n.Test, n.Status, next).Scan(&n.ID)
	if err != nil {
		return fmt.Errorf("insert notification: %w", err)
	}
	return nil
}

// Payload is the notification as sent: its stored body with the id first.
func (n *Notification) Payload() []byte {
	body := bytes.TrimPrefix(n.Body, []byte("{"))
	out := make([]byte, 0, len(body)+24)
	out = append(out, `{"id":`...)
	out = strconv.AppendInt(out, n.ID, 10)
	if len(body) > 1 { // more members than the closing brace
		out = append(out, ',')
	}
	return append(out, body...)
}

// GetNotification returns the notification with id.
func (q *Queries) GetNotification(ctx context.Context, id int64) (*Notification, error) {
	n, err := scanNotification(q.row(ctx, `SELECT `+notificationColumns+` FROM notifications WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("get notification %d: %w", id, notFound(err))
	}
	return n, nil
}

// NotificationFilter selects a vehicle's notifications for one client.
type NotificationFilter struct {
	VehicleID       int64
	CreatorClientID string
	Type            string
	Descending      bool
	Page
}

// ListNotifications returns a page of notifications, by creation, and their count.
func (q *Queries) ListNotifications(ctx context.Context, f NotificationFilter) ([]*Notification, int, error) {
	where := ` WHERE n.vehicle_id = ? AND s.creator_client_id = ?`
	args := []any{f.VehicleID, f.CreatorClientID}
	if f.Type != "" {
		where += ` AND s.type = ?`
		args = append(args, f.Type)
	}
	from := ` FROM notifications n JOIN subscriptions s ON s.id = n.subscription_id`
	var total int
	if err := q.row(ctx, `SELECT COUNT(*)`+from+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count notifications: %w", err)
	}
	cols := "n." + strings.ReplaceAll(notificationColumns, ", ", ", n.")
	rows, err := q.rows(ctx, `SELECT `+cols+from+where+` ORDER BY n.id `+dir(f.Descending)+` LIMIT ? OFFSET ?`,
		append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list notifications: %w", err)
	}
	out, err := collect(rows, scanNotification)
	return out, total, err
}

// DeliveryAttempt is one recorded try.
type DeliveryAttempt struct {
	NotificationID int64
	Attempt        int
	At             time.Time
	URL            string
	HTTPStatus     int
	Error          *string
	Duration       time.Duration
}

// ListDeliveryAttempts returns a notification's attempts in order.
func (q *Queries) ListDeliveryAttempts(ctx context.Context, notificationID int64) ([]DeliveryAttempt, error) {
	rows, err := q.rows(ctx, `SELECT notification_id, attempt, at, url, http_status, error, duration_ms
		FROM delivery_attempts WHERE notification_id = ? ORDER BY attempt`, notificationID)
	if err != nil {
		return nil, fmt.Errorf("list delivery attempts: %w", err)
	}
	defer rows.Close()
	var out []DeliveryAttempt
	for rows.Next() {
		var a DeliveryAttempt
		var at, ms int64
		var e sql.NullString
		if err := rows.Scan(&a.NotificationID, &a.Attempt, &at, &a.URL, &a.HTTPStatus, &e, &ms); err != nil {
			return nil, err
		}
		a.At, a.Error, a.Duration = fromMillis(at), fromNullString(e), time.Duration(ms)*time.Millisecond
		out = append(out, a)
	}
	return out, rows.Err()
}

// Delivery is a claimed notification with what its delivery needs.
type Delivery struct {
	Notification
	PostURL       string
	PostHeaders   map[string]string
	SigningSecret string
}

// ClaimDeliveries claims up to limit due notifications for worker, oldest first, skipping
// the subscriptions in skip. A claim lasts until leaseUntil: a worker that dies with it
// lets the notification become due again then. Claimed rows are not due to anyone else.
func (q *Queries) ClaimDeliveries(ctx context.Context, worker string, now, leaseUntil time.Time, limit int, skip []int64) ([]*Delivery, error) {
	args := []any{millis(now), api.StatusPending}
	exclude := ""
	if len(skip) > 0 {
		exclude = ` AND subscription_id NOT IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(skip)), ", ") + `)`
		for _, id := range skip {
			args = append(args, id)
		}
	}
	args = append(args, limit)
	// In due order, which the partial index on next_attempt_at serves; per subscription
	// that is the order of creation, but for retries.
	rows, err := q.rows(ctx, `SELECT id FROM notifications WHERE next_attempt_at <= ? AND status = ?`+exclude+
		` ORDER BY next_attempt_at, id LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("find due notifications: %w", err)
	}
	var ids []any
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return nil, err
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	if err := q.exec(ctx, `UPDATE notifications SET next_attempt_at = ?, claimed_by = ? WHERE id IN (`+in+`)`,
		append([]any{millis(leaseUntil), worker}, ids...)...); err != nil {
		return nil, fmt.Errorf("claim notifications: %w", err)
	}
	cols := "n." + strings.ReplaceAll(notificationColumns, ", ", ", n.")
	rows, err = q.rows(ctx, `SELECT `+cols+`, s.post_url, s.post_headers, s.signing_secret
		FROM notifications n JOIN subscriptions s ON s.id = n.subscription_id WHERE n.id IN (`+in+`) ORDER BY n.id`, ids...)
	if err != nil {
		return nil, fmt.Errorf("read claimed notifications: %w", err)
	}
	return collect(rows, func(s scanner) (*Delivery, error) {
		var d Delivery
		var headers string
		n, err := scanNotification(scanFunc(func(dest ...any) error {
			return s.Scan(append(dest, &d.PostURL, &headers, &d.SigningSecret)...)
		}))
		if err != nil {
			return nil, err
		}
		d.Notification = *n
		if err := json.Unmarshal([]byte(headers), &d.PostHeaders); err != nil {
			return nil, err
		}
		return &d, nil
	})
}

// scanFunc adapts a function to scanner, to scan extra columns after a row's own.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// ReleaseClaims makes every claimed, undelivered notification due now: for an engine that
// owns the database alone (SQLite) and starts after a crash.
func (q *Queries) ReleaseClaims(ctx context.Context, now time.Time) (int64, error) {
	return q.execN(ctx, `UPDATE notifications SET next_attempt_at = ?, claimed_by = NULL
		WHERE claimed_by IS NOT NULL AND status = ?`, millis(now), api.StatusPending)
}

// NextDue is when the earliest pending notification is due, or when the earliest claim
// runs out (a claim that runs out makes its notification due again), or nil when there is
// neither.
func (q *Queries) NextDue(ctx context.Context) (*time.Time, error) {
	var next sql.NullInt64
	if err := q.row(ctx, `SELECT MIN(next_attempt_at) FROM notifications WHERE next_attempt_at IS NOT NULL`).Scan(&next); err != nil {
		return nil, fmt.Errorf("next due notification: %w", err)
	}
	return fromNullMillis(next), nil
}

// Outcome is the result of one delivery attempt, as the engine decided it.
type Outcome struct {
	NotificationID int64
	Attempt        DeliveryAttempt
	// Status is the notification's state after the attempt.
	Status string
	// NextAttemptAt is when to try again; nil when Status is final.
	NextAttemptAt *time.Time
	// MoveSubscription, when set, is the subscription's new postUrl (a 301/308).
	MoveSubscription *string
	// DeleteSubscription is set when the receiver said 410 Gone.
	DeleteSubscription bool
	SubscriptionID     int64
}

// RecordOutcome writes an attempt and its consequences.
func (q *Queries) RecordOutcome(ctx context.Context, o *Outcome) error {
	a := o.Attempt
	// The notification may be gone (its vehicle deleted meanwhile), and an attempt made
	// twice (a claim that ran out) is recorded once: neither may fail the other outcomes
	// committed with this one.
	err := q.exec(ctx, `INSERT INTO delivery_attempts (notification_id, attempt, at, url, http_status, error, duration_ms)
		SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM notifications WHERE id = ?)
		ON CONFLICT DO NOTHING`, o.NotificationID, a.Attempt, millis(a.At), a.URL, a.HTTPStatus, nullString(a.Error),
		a.Duration.Milliseconds(), o.NotificationID)
	if err != nil {
		return fmt.Errorf("record delivery attempt: %w", err)
	}
	var delivered sql.NullInt64
	if o.Status == api.StatusDelivered {
		delivered = sql.NullInt64{Int64: millis(a.At), Valid: true}
	}
	// Only a notification still pending takes the outcome: one given up meanwhile (its
	// subscription deleted while the attempt ran) stays given up.
	err = q.exec(ctx, `UPDATE notifications SET status = ?, attempts = ?, http_status = ?, last_error = ?,
		next_attempt_at = ?, claimed_by = NULL, delivered_at = ? WHERE id = ? AND status = ?`,
		o.Status, a.Attempt, a.HTTPStatus, nullString(a.Error), nullMillis(o.NextAttemptAt), delivered, o.NotificationID,
		api.StatusPending)
	if err != nil {
		return fmt.Errorf("record delivery outcome: %w", err)
	}
	if o.MoveSubscription != nil {
		if err := q.SetSubscriptionURL(ctx, o.SubscriptionID, *o.MoveSubscription); err != nil {
			return err
		}
	}
	if o.DeleteSubscription {
		if err := q.DeleteSubscription(ctx, o.SubscriptionID, a.At); err != nil {
			return err
		}
		if err := q.CancelNotifications(ctx, o.SubscriptionID, "the receiver answered 410 Gone: subscription deleted"); err != nil {
			return err
		}
	}
	return nil
}
