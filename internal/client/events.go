package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/connected-vehicle/vcs/internal/api"
)

// EventQuery selects a window of a time-ordered event list: subscriptions or
// notifications.
type EventQuery struct {
	Page
	// Type restricts the list to one event type (api.EventWaypoint); "" lists every type.
	Type string
	// Descending lists the newest first.
	Descending bool
}

// path is base with the type segment, when there is one, and the query string.
func (q EventQuery) path(base string) string {
	p := base + "/"
	if q.Type != "" {
		p += url.PathEscape(q.Type) + "/"
	}
	v := url.Values{}
	if q.Limit > 0 {
		v.Set("searchLimit", strconv.Itoa(q.Limit))
	}
	if q.Offset > 0 {
		v.Set("searchOffset", strconv.Itoa(q.Offset))
	}
	if q.Descending {
		v.Set("sortOrder", "desc")
	}
	if len(v) > 0 {
		p += "?" + v.Encode()
	}
	return p
}

func subscriptionsPath(vehicle string) string { return vehiclePath(vehicle) + "/eventSubscription" }

func subscriptionPath(vehicle string, id int64) string {
	return subscriptionsPath(vehicle) + "/" + strconv.FormatInt(id, 10)
}

func notificationsPath(vehicle string) string { return vehiclePath(vehicle) + "/eventNotification" }

// CreateSubscription subscribes the caller's client to the waypoints of the vehicle that
// ref names (a vehicleId or a device serial). The result carries the signing secret.
func (c *Client) CreateSubscription(ctx context.Context, ref string, in api.SubscriptionInput) (*api.Subscription, error) {
	return one[api.Subscription](ctx, c, "POST", subscriptionsPath(ref)+"/"+api.EventWaypoint+"/", api.KeySubscription, in)
}

// Subscriptions reads one page of the caller's client's subscriptions of a vehicle, deleted
// ones included.
func (c *Client) Subscriptions(ctx context.Context, ref string, q EventQuery) (api.Envelope[[]api.Subscription], error) {
	// The query string is in the path already; an empty Page adds none.
	return list[api.Subscription](ctx, c, q.path(subscriptionsPath(ref)), api.KeySubscriptions, Page{})
}

// AllSubscriptions reads every subscription of a vehicle from q's offset on, following next
// links.
func (c *Client) AllSubscriptions(ctx context.Context, ref string, q EventQuery) ([]api.Subscription, int, error) {
	return all[api.Subscription](ctx, c, q.path(subscriptionsPath(ref)), api.KeySubscriptions, Page{})
}

// Subscription reads one subscription of a vehicle.
func (c *Client) Subscription(ctx context.Context, ref string, id int64) (*api.Subscription, error) {
	return one[api.Subscription](ctx, c, "GET", subscriptionPath(ref, id), api.KeySubscription, nil)
}

// DeleteSubscription marks a subscription deleted: no notification is created for it after
// this. Deleting a deleted subscription succeeds.
func (c *Client) DeleteSubscription(ctx context.Context, ref string, id int64) error {
	return c.remove(ctx, subscriptionPath(ref, id))
}

// TestSubscription has the service deliver a dummy notification to the subscription now,
// and returns it with the outcome of that one attempt.
func (c *Client) TestSubscription(ctx context.Context, ref string, id int64) (*api.Notification, error) {
	return one[api.Notification](ctx, c, "GET", "/test"+subscriptionPath(ref, id), api.KeyNotification, nil)
}

// Notifications reads one page of a vehicle's notification history for the caller's client.
func (c *Client) Notifications(ctx context.Context, ref string, q EventQuery) (api.Envelope[[]api.Notification], error) {
	return list[api.Notification](ctx, c, q.path(notificationsPath(ref)), api.KeyNotifications, Page{})
}

// AllNotifications reads a vehicle's whole notification history from q's offset on.
func (c *Client) AllNotifications(ctx context.Context, ref string, q EventQuery) ([]api.Notification, int, error) {
	return all[api.Notification](ctx, c, q.path(notificationsPath(ref)), api.KeyNotifications, Page{})
}

// Notification reads one notification with its delivery attempts.
func (c *Client) Notification(ctx context.Context, ref string, id int64) (*api.Notification, error) {
	return one[api.Notification](ctx, c, "GET", notificationsPath(ref)+"/"+strconv.FormatInt(id, 10), api.KeyNotification, nil)
}
