package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/delivery"
	"github.com/connected-vehicle/vcs/internal/server"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
	"github.com/connected-vehicle/vcs/internal/store"
)

// fastRetries keeps retry tests quick: the schedule's shape, compressed.
var fastRetries = delivery.Policy{Delays: []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond, 160 * time.Millisecond}, MaxRetryAfter: 2 * time.Second}

// receiver is a real webhook receiver that records what it gets and answers with the
// statuses its script says, one per request, then 200.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	script   []int
	headers  map[int]http.Header // extra headers by request number
	requests []received
	got      chan received
}

type received struct {
	Header http.Header
	Body   []byte
	Path   string
	Status int
}

func newReceiver(t *testing.T, script ...int) *receiver {
	r := &receiver{script: script, headers: map[int]http.Header{}, got: make(chan received, 1000)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.requests)
		status := http.StatusOK
		if n < len(r.script) {
			status = r.script[n]
		}
		for k, v := range r.headers[n] {
			w.Header()[k] = v
		}
		rec := received{Header: req.Header.Clone(), Body: body, Path: req.URL.Path, Status: status}
		r.requests = append(r.requests, rec)
		r.mu.Unlock()
		w.WriteHeader(status)
		r.got <- rec
	}))
	t.Cleanup(r.Close)
	return r
}

// next waits for the next request.
func (r *receiver) next(t *testing.T) received {
	t.Helper()
	select {
	case rec := <-r.got:
		return rec
	case <-time.After(10 * time.Second):
		t.Fatal("no notification arrived within 10 s")
		return received{}
	}
}

func subscribe(t *testing.T, env *servertest.Env, token string, vehicle, url string, extra map[string]any) api.Subscription {
	t.Helper()
	body := map[string]any{"minimumTime": 0, "postUrl": url, "postHeaders": map[string]string{"Authorization": "Bearer receiver-secret"},
		"notificationPeriod": "CONTINUOUS"}
	for k, v := range extra {
		body[k] = v
	}
	r := env.Do("POST", "/vehicle/"+vehicle+"/eventSubscription/WAYPOINT/", token, body)
	if r.Status != 200 {
		t.Fatalf("subscribe: %d %s", r.Status, r.Body)
	}
	var e api.Envelope[api.Subscription]
	r.JSON(t, &e)
	return e.Data
}

// record posts a data set with one waypoint per point, all RUNNING.
func record(t *testing.T, env *servertest.Env, token, vehicle, ignition string, points ...[2]float64) api.DataSet {
	t.Helper()
	now := api.NewDateTime(time.Now())
	var datum []map[string]any
	for _, p := range points {
		datum = append(datum, map[string]any{"timestamp": now, "key": "GEN_WAYPOINT", "value": string(api.WaypointValue(p[0], p[1]))})
	}
	r := env.Do("POST", "/vehicle/"+vehicle+"/dataSet/", token, map[string]any{"timestamp": now, "ignitionStatus": ignition, "datum": datum})
	if r.Status != 200 {
		t.Fatalf("record data set: %d %s", r.Status, r.Body)
	}
	var e api.Envelope[api.DataSet]
	r.JSON(t, &e)
	return e.Data
}

// notificationOf waits until the notification's delivery state satisfies done.
func notificationOf(t *testing.T, env *servertest.Env, token, vehicle string, id int64, done func(api.Notification) bool) api.Notification {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := env.Do("GET", fmt.Sprintf("/vehicle/%s/eventNotification/%d", vehicle, id), token, nil)
		var e api.Envelope[api.Notification]
		r.JSON(t, &e)
		if done(e.Data) {
			return e.Data
		}
		if time.Now().After(deadline) {
			t.Fatalf("notification %d never reached the expected state: %s", id, r.Body)
		}
		time.Sleep(10 * time.Millisecond) // polling an API with a deadline, not waiting for a race
	}
}

func TestWaypointNotificationSignedAndDelivered(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	recv := newReceiver(t)
	sub := subscribe(t, env, tok, "3", recv.URL+"/hook", nil)
	if !strings.HasPrefix(sub.SigningSecret, "whsec_") || sub.Type != "WAYPOINT" || sub.VehicleID != 3 || sub.CreatorClientID != server.DevClientID {
		t.Fatalf("subscription = %+v", sub)
	}
	ds := record(t, env, tok, "3", "ON", [2]float64{28.036441, -82.593687})

	got := recv.next(t)
	// The reference Standard Webhooks library accepts our signature.
	wh, err := standardwebhooks.NewWebhook(sub.SigningSecret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(got.Body, got.Header); err != nil {
		t.Fatalf("signature does not verify with the reference library: %v", err)
	}
	tampered := append([]byte(nil), got.Body...)
	tampered[len(tampered)-2] = ' '
	if wh.Verify(tampered, got.Header) == nil {
		t.Fatal("a tampered body verified")
	}
	for k, want := range map[string]string{
		"Authorization": "Bearer receiver-secret", "Content-Type": "application/json;charset=UTF-8", "User-Agent": "vcs/",
	} {
		if !strings.HasPrefix(got.Header.Get(k), want) {
			t.Errorf("%s = %q, want %q", k, got.Header.Get(k), want)
		}
	}
	var body map[string]any
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "subscriptionId", "_domain", "_type", "_name", "_timestamp", "minimumTime", "notificationPeriod",
		"creatorClientId", "accountId", "vehicleId", "tripId", "dataSetId", "httpStatusCode", "recordedWaypoint"} {
		if _, ok := body[k]; !ok {
			t.Errorf("notification lacks %s: %s", k, got.Body)
		}
	}
	var n api.NotificationBody
	if err := json.Unmarshal(got.Body, &n); err != nil {
		t.Fatal(err)
	}
	if n.Type != "WAYPOINT" || n.VehicleID != 3 || n.AccountID != 1 || *n.DataSetID != ds.ID || *n.TripID != *ds.TripID ||
		n.RecordedWaypoint.Latitude != 28.036441 || n.RecordedWaypoint.Longitude != -82.593687 || n.Domain != "127.0.0.1" {
		t.Errorf("body = %s", got.Body)
	}
	if got.Header.Get("webhook-id") != fmt.Sprint(n.ID) {
		t.Errorf("webhook-id %q, notification id %d", got.Header.Get("webhook-id"), n.ID)
	}

	h := notificationOf(t, env, tok, "3", n.ID, func(x api.Notification) bool { return x.Status == api.StatusDelivered })
	if h.Attempts != 1 || h.HTTPStatusCode != 200 || h.DeliveredTimestamp == nil || len(h.DeliveryAttempts) != 1 {
		t.Errorf("history = %+v", h)
	}
}

func TestRetriesUntilDelivered(t *testing.T) {
	env := servertest.New(t, servertest.WithDelivery(fastRetries, 2*time.Second))
	tok := env.DemoToken()
	recv := newReceiver(t, 500, 503, 429)
	subscribe(t, env, tok, "3", recv.URL, nil)
	record(t, env, tok, "3", "RUNNING", [2]float64{28.1, -82.5})
	var first received
	for i := range 4 {
		rec := recv.next(t)
		if i == 0 {
			first = rec
		}
		if rec.Header.Get("webhook-id") != first.Header.Get("webhook-id") || string(rec.Body) != string(first.Body) {
			t.Fatal("a retry sent another notification or another body")
		}
	}
	var n api.NotificationBody
	json.Unmarshal(first.Body, &n)
	h := notificationOf(t, env, tok, "3", n.ID, func(x api.Notification) bool { return x.Status == api.StatusDelivered })
	if h.Attempts != 4 || len(h.DeliveryAttempts) != 4 {
		t.Fatalf("attempts %d, history %+v", h.Attempts, h.DeliveryAttempts)
	}
	for i, want := range []int{500, 503, 429, 200} {
		if h.DeliveryAttempts[i].HTTPStatusCode != want {
			t.Errorf("attempt %d: %d, want %d", i+1, h.DeliveryAttempts[i].HTTPStatusCode, want)
		}
	}
}

func TestGivesUpAfterTheSchedule(t *testing.T) {
	env := servertest.New(t, servertest.WithDelivery(fastRetries, 2*time.Second))
	tok := env.DemoToken()
	recv := newReceiver(t, 500, 500, 500, 500, 500, 500, 500)
	subscribe(t, env, tok, "3", recv.URL, nil)
	record(t, env, tok, "3", "RUNNING", [2]float64{28.1, -82.5})
	var n api.NotificationBody
	json.Unmarshal(recv.next(t).Body, &n)
	h := notificationOf(t, env, tok, "3", n.ID, func(x api.Notification) bool { return x.Status == api.StatusFailed })
	if h.Attempts != fastRetries.MaxAttempts() || h.NextAttemptTimestamp != nil || h.HTTPStatusCode != 500 || h.LastError == nil {
		t.Fatalf("after the schedule: %+v", h)
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	env := servertest.New(t, servertest.WithDelivery(fastRetries, 2*time.Second))
	tok := env.DemoToken()
	recv := newReceiver(t, 429)
	recv.headers[0] = http.Header{"Retry-After": {"1"}}
	subscribe(t, env, tok, "3", recv.URL, nil)
	record(t, env, tok, "3", "RUNNING", [2]float64{28.1, -82.5})
	recv.next(t)
	start := time.Now()
	recv.next(t)
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Fatalf("retried after %s despite Retry-After: 1", waited)
	}
}

func TestNotRetried(t *testing.T) {
	for name, status := range map[string]int{"bad request": 400, "unauthorized": 401, "not found": 404} {
		t.Run(name, func(t *testing.T) {
			env := servertest.New(t, servertest.WithDelivery(fastRetries, 2*time.Second))
			tok := env.DemoToken()
			recv := newReceiver(t, status)
			subscribe(t, env, tok, "3", recv.URL, nil)
			record(t, env, tok, "3", "RUNNING", [2]float64{28.1, -82.5})
			var n api.NotificationBody
			json.Unmarshal(recv.next(t).Body, &n)
			h := notificationOf(t, env, tok, "3", n.ID, func(x api.Notification) bool { return x.Status != api.StatusPending })
			if h.Status != api.StatusFailed || h.Attempts != 1 || h.HTTPStatusCode != status {
				t.Fatalf("%d: %+v", status, h)
			}
		})
	}
}

func TestGoneDeletesSubscription(t *testing.T) {
	env := servertest.New(t, servertest.WithDelivery(fastRetries, 2*time.Second))
	tok := env.DemoToken()
	recv := newReceiver(t, 410)
	sub := subscribe(t, env, tok, "3", recv.URL, nil)
	record(t, env, tok, "3", "RUNNING", [2]float64{28.1, -82.5})
	var n api.NotificationBody
	json.Unmarshal(recv.next(t).Body, &n)
	notificationOf(t, env, tok, "3", n.ID, func(x api.Notification) bool { return x.Status == api.StatusFailed })
	r := env.Do("GET", fmt.Sprintf("/vehicle/3/eventSubscription/%d", sub.ID), tok, nil)
	var got api.Envelope[api.Subscription]
	r.JSON(t, &got)
	if got.Data.DeletionTimestamp == nil {
		t.Fatalf("410 did not delete the subscription: %s", r.Body)
	}
	// No notification is created after the deletion.
	record(t, env, tok, "3", "RUNNING", [2]float64{28.2, -82.5})
	r = env.Do("GET", "/vehicle/3/eventNotification/", tok, nil)
	var list api.Envelope[[]api.Notification]
	r.JSON(t, &list)
	if *list.TotalRecords != 1 {
		t.Fatalf("notifications after deletion: %d", *list.TotalRecords)
	}
}

func TestRedirects(t *testing.T) {
	env := servertest.New(t, servertest.WithDelivery(fastRetries, 2*time.Second))
	tok := env.DemoToken()
	final := newReceiver(t)
	for name, tc := range map[string]struct {
		status int
		moves  bool
	}{"moved permanently": {301, true}, "permanent": {308, true}, "found": {302, false}, "temporary": {307, false}} {
		t.Run(name, func(t *testing.T) {
			first := newReceiver(t, tc.status)
			first.headers[0] = http.Header{"Location": {final.URL + "/new"}}
			sub := subscribe(t, env, tok, "3", first.URL+"/old", nil)
			record(t, env, tok, "3", "RUNNING", [2]float64{28.1, -82.5})
			var n api.NotificationBody
			json.Unmarshal(first.next(t).Body, &n)
			if rec := final.next(t); rec.Path != "/new" {
				t.Fatalf("redirected to %s", rec.Path)
			}
			h := notificationOf(t, env, tok, "3", n.ID, func(x api.Notification) bool { return x.Status == api.StatusDelivered })
			if h.Attempts != 1 || h.DeliveryAttempts[0].URL != final.URL+"/new" {
				t.Errorf("history: %+v", h)
			}
			r := env.Do("GET", fmt.Sprintf("/vehicle/3/eventSubscription/%d", sub.ID), tok, nil)
			var got api.Envelope[api.Subscription]
			r.JSON(t, &got)
			moved := got.Data.PostURL == final.URL+"/new"
			if moved != tc.moves {
				t.Fatalf("%d: postUrl is now %s", tc.status, got.Data.PostURL)
			}
			env.Do("DELETE", fmt.Sprintf("/vehicle/3/eventSubscription/%d", sub.ID), tok, nil)
		})
	}
}

// TestSlowReceiverDelaysNoOne: a receiver that hangs holds up its own subscription only.
func TestSlowReceiverDelaysNoOne(t *testing.T) {
	// The hung request lasts 30 s, longer than next() waits (10 s): the fast receiver can
	// only get its notifications in time if it does not wait behind the hung one.
	env := servertest.New(t, servertest.WithDelivery(fastRetries, 30*time.Second))
	tok := env.DemoToken()
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer hung.Close()
	defer close(release) // before hung.Close, which waits for its handlers
	fast := newReceiver(t)
	subscribe(t, env, tok, "1", hung.URL, nil)
	subscribe(t, env, tok, "2", fast.URL, nil)
	for i := range 5 {
		record(t, env, tok, "1", "RUNNING", [2]float64{28 + float64(i)/100, -82.5})
		record(t, env, tok, "2", "RUNNING", [2]float64{28 + float64(i)/100, -82.5})
	}
	for range 5 {
		fast.next(t)
	}
}

func TestMinimumTimeAndOnetime(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	recv := newReceiver(t)
	subscribe(t, env, tok, "1", recv.URL, map[string]any{"minimumTime": 5})
	once := subscribe(t, env, tok, "2", recv.URL, map[string]any{"notificationPeriod": "ONETIME"})
	for i := range 3 {
		record(t, env, tok, "1", "RUNNING", [2]float64{28 + float64(i)/100, -82.5}) // within 5 minutes
		record(t, env, tok, "2", "RUNNING", [2]float64{28 + float64(i)/100, -82.5})
	}
	count := func(vehicle string) int {
		r := env.Do("GET", "/vehicle/"+vehicle+"/eventNotification/", tok, nil)
		var list api.Envelope[[]api.Notification]
		r.JSON(t, &list)
		return *list.TotalRecords
	}
	if c := count("1"); c != 1 {
		t.Errorf("minimumTime 5: %d notifications for 3 waypoints in a minute, want 1", c)
	}
	if c := count("2"); c != 1 {
		t.Errorf("ONETIME: %d notifications, want 1", c)
	}
	r := env.Do("GET", fmt.Sprintf("/vehicle/2/eventSubscription/%d", once.ID), tok, nil)
	var got api.Envelope[api.Subscription]
	r.JSON(t, &got)
	if got.Data.DeletionTimestamp == nil {
		t.Error("ONETIME subscription not deleted after its notification")
	}
}

func TestSubscriptionValidationAndAccess(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	for name, tc := range map[string]struct {
		body   string
		fields []string
	}{
		"no url":         {`{"minimumTime":0}`, []string{"postUrl"}},
		"relative url":   {`{"postUrl":"/hook"}`, []string{"postUrl"}},
		"ftp":            {`{"postUrl":"ftp://example.com/x"}`, []string{"postUrl"}},
		"credentials":    {`{"postUrl":"https://u:p@example.com/x"}`, []string{"postUrl"}},
		"bad period":     {`{"postUrl":"https://example.com/x","notificationPeriod":"WEEKLY"}`, []string{"notificationPeriod"}},
		"negative time":  {`{"postUrl":"https://example.com/x","minimumTime":-1}`, []string{"minimumTime"}},
		"reserved":       {`{"postUrl":"https://example.com/x","postHeaders":{"Content-Type":"x","webhook-id":"1"}}`, []string{"postHeaders", "postHeaders"}},
		"bad header":     {`{"postUrl":"https://example.com/x","postHeaders":{"Bad Name":"x"}}`, []string{"postHeaders"}},
		"header newline": {`{"postUrl":"https://example.com/x","postHeaders":{"X-A":"a\r\nb"}}`, []string{"postHeaders"}},
		"unknown member": {`{"postUrl":"https://example.com/x","filter":"x"}`, []string{"filter"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := env.Do("POST", "/vehicle/3/eventSubscription/WAYPOINT/", tok, tc.body)
			if r.Status != 400 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			var got []string
			for _, f := range r.Error(t).FieldErrors {
				got = append(got, f.FieldName)
			}
			if strings.Join(sorted(got), ",") != strings.Join(sorted(tc.fields), ",") {
				t.Errorf("fields %v, want %v", got, tc.fields)
			}
		})
	}
	if r := env.Do("POST", "/vehicle/3/eventSubscription/IGNITION/", tok, `{"postUrl":"https://example.com/x"}`); r.Status != 400 {
		t.Errorf("unsupported type: %d", r.Status)
	}
	// The type is case-insensitive.
	sub := subscribe(t, env, tok, "3", "https://example.com/hook", nil)
	for _, p := range []string{"/vehicle/3/eventSubscription/", "/vehicle/3/eventSubscription/waypoint", "/vehicle/3/eventSubscription/WAYPOINT/",
		fmt.Sprintf("/vehicle/3/eventSubscription/%d", sub.ID), fmt.Sprintf("/vehicle/3/eventSubscription/Waypoint/%d", sub.ID),
		"/vehicle/C2015000003/eventSubscription/"} {
		if r := env.Do("GET", p, tok, nil); r.Status != 200 || !strings.Contains(string(r.Body), sub.SigningSecret) {
			t.Errorf("GET %s: %d", p, r.Status)
		}
	}
	// Another account, and another partner client on the same vehicle, see nothing.
	_, other := createUser(t, env, "stranger")
	partner, _ := env.Server.OAuth.CreateClient(context.Background(), "partner", nil)
	ptok := env.ClientTokenFor(partner.ID, partner.Secret)
	for _, tk := range []string{other, ptok} {
		for _, p := range []string{fmt.Sprintf("/vehicle/3/eventSubscription/%d", sub.ID), "/vehicle/3/eventSubscription/", "/vehicle/3/eventNotification/"} {
			if r := env.Do("GET", p, tk, nil); r.Status != 404 {
				t.Errorf("GET %s by a stranger: %d %s", p, r.Status, r.Body)
			}
		}
	}
	// The dev client's own client token sees its subscription (vehicle 3 belongs to an account it created).
	if r := env.Do("GET", fmt.Sprintf("/vehicle/3/eventSubscription/%d", sub.ID), env.ClientToken(), nil); r.Status != 200 {
		t.Errorf("creating client's token: %d", r.Status)
	}
	// Subscriptions cannot be updated.
	if r := env.Do("POST", fmt.Sprintf("/vehicle/3/eventSubscription/%d", sub.ID), tok, `{"minimumTime":5}`); r.Status != 405 {
		t.Errorf("POST on a subscription: %d %s", r.Status, r.Body)
	}
	// Deleting twice is fine; the second time it is already deleted.
	for range 2 {
		if r := env.Do("DELETE", fmt.Sprintf("/vehicle/3/eventSubscription/%d", sub.ID), tok, nil); r.Status != 200 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
	}
}

func TestProductionRules(t *testing.T) {
	env := servertest.New(t, servertest.WithEnv(server.EnvProduction))
	tok := env.DemoToken()
	for _, u := range []string{"http://example.com/x", "https://127.0.0.1/x", "https://localhost/x", "https://10.1.2.3/x", "https://[::1]/x", "https://169.254.169.254/latest"} {
		if r := env.Do("POST", "/vehicle/3/eventSubscription/WAYPOINT/", tok, map[string]any{"postUrl": u}); r.Status != 400 {
			t.Errorf("production postUrl %s: %d", u, r.Status)
		}
	}
	if r := env.Do("POST", "/vehicle/3/dataSet/", tok, map[string]any{"timestamp": api.NewDateTime(time.Now()), "ignitionStatus": "ON"}); r.Status != 403 {
		t.Errorf("data set in production: %d", r.Status)
	}
	if r := env.Do("POST", "/simulator/trip/", tok, map[string]any{"vehicleId": 3}); r.Status != 403 {
		t.Errorf("simulator in production: %d", r.Status)
	}
}

// TestProductionGuardAtConnect: the production engine refuses to connect to a loopback
// receiver even though nothing in the URL's text says so (a name that resolves to it).
func TestProductionGuardAtConnect(t *testing.T) {
	recv := newReceiver(t)
	e := delivery.New(delivery.Config{DB: nil, Policy: fastRetries, PublicOnly: true, Timeout: 2 * time.Second})
	port := recv.URL[strings.LastIndex(recv.URL, ":"):]
	for _, u := range []string{"http://localhost" + port + "/x", recv.URL} {
		out := e.Attempt(context.Background(), deliveryTo(u))
		if out.Status == api.StatusDelivered || out.Attempt.Error == nil || !strings.Contains(*out.Attempt.Error, "not a public address") {
			t.Errorf("%s: %+v %v", u, out, out.Attempt.Error)
		}
	}
	select {
	case <-recv.got:
		t.Fatal("the guarded engine reached a loopback receiver")
	default:
	}
}

func deliveryTo(url string) *store.Delivery {
	return &store.Delivery{
		Notification:  store.Notification{ID: 1, SubscriptionID: 1, Body: []byte(`{}`), Status: api.StatusPending},
		PostURL:       url,
		PostHeaders:   map[string]string{},
		SigningSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	}
}

// gatedReceiver holds every request until released, then answers status.
func gatedReceiver(t *testing.T, status int) (*httptest.Server, chan struct{}, chan struct{}) {
	t.Helper()
	release, arrived := make(chan struct{}), make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, release, arrived
}

// TestDeleteDuringAttemptStaysDeleted: an attempt under way when its subscription is deleted
// does not bring the notification back to life when its outcome (a failure) comes in.
func TestDeleteDuringAttemptStaysDeleted(t *testing.T) {
	env := servertest.New(t, servertest.WithDelivery(fastRetries, 5*time.Second))
	tok := env.DemoToken()
	recv, release, arrived := gatedReceiver(t, 500)
	sub := subscribe(t, env, tok, "3", recv.URL, nil)
	record(t, env, tok, "3", "RUNNING", [2]float64{28.1, -82.5})
	<-arrived // the attempt is under way
	if r := env.Do("DELETE", fmt.Sprintf("/vehicle/3/eventSubscription/%d", sub.ID), tok, nil); r.Status != 200 {
		t.Fatalf("delete: %d", r.Status)
	}
	close(release)
	r := env.Do("GET", "/vehicle/3/eventNotification/", tok, nil)
	var list api.Envelope[[]api.Notification]
	r.JSON(t, &list)
	id := list.Data[0].ID
	// Once the attempt is recorded, the notification is still given up.
	n := notificationOf(t, env, tok, "3", id, func(x api.Notification) bool { return len(x.DeliveryAttempts) == 1 })
	if n.Status != api.StatusFailed || n.NextAttemptTimestamp != nil {
		t.Fatalf("after the attempt: %+v", n)
	}
	select {
	case <-arrived:
		t.Fatal("the deleted subscription's notification was sent again")
	default:
	}
}

// TestVehicleDeletedDuringAttempt: an outcome whose notification has gone with its vehicle
// costs no other outcome recorded with it.
func TestVehicleDeletedDuringAttempt(t *testing.T) {
	env := servertest.New(t, servertest.WithDelivery(fastRetries, 5*time.Second))
	tok := env.DemoToken()
	gone, releaseGone, arrivedGone := gatedReceiver(t, 200)
	kept, releaseKept, arrivedKept := gatedReceiver(t, 200)
	subscribe(t, env, tok, "1", gone.URL, nil)
	subscribe(t, env, tok, "2", kept.URL, nil)
	record(t, env, tok, "1", "RUNNING", [2]float64{28.1, -82.5})
	record(t, env, tok, "2", "RUNNING", [2]float64{28.1, -82.5})
	<-arrivedGone
	<-arrivedKept
	if r := env.Do("DELETE", "/vehicle/1", tok, nil); r.Status != 200 {
		t.Fatalf("delete vehicle: %d", r.Status)
	}
	close(releaseGone)
	close(releaseKept)
	r := env.Do("GET", "/vehicle/2/eventNotification/", tok, nil)
	var list api.Envelope[[]api.Notification]
	r.JSON(t, &list)
	notificationOf(t, env, tok, "2", list.Data[0].ID, func(x api.Notification) bool { return x.Status == api.StatusDelivered })
}
