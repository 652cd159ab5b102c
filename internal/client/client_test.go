package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/client"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

// answer is a test server that answers every request with status, content type and body.
func answer(t *testing.T, status int, contentType, body string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func TestErrorDecoding(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		want        api.Error
		wantText    string
		wantExit    int
	}{
		{name: "JSON error body", status: 409, contentType: "application/json;charset=UTF-8",
			body: `{"error": {"httpStatus": 409, "errorCode": "UNIQUE", "detail": "vehicle could not be created",
				"fieldErrors": [{"fieldName": "deviceId", "errorCode": "UNIQUE", "errorDisplay": "device C1 is in use"},
				                {"fieldName": "vin", "errorCode": "INVALID", "errorDisplay": "vin must be 17 characters"}]}}`,
			want: api.Error{HTTPStatus: 409, Code: "UNIQUE", Detail: "vehicle could not be created", FieldErrors: []api.FieldError{
				{FieldName: "deviceId", Code: "UNIQUE", ErrorDisplay: "device C1 is in use"},
				{FieldName: "vin", Code: "INVALID", ErrorDisplay: "vin must be 17 characters"}}},
			wantText: "vehicle could not be created: device C1 is in use; vin must be 17 characters", wantExit: 1},
		{name: "JSON error body without its status", status: 401, contentType: "application/json",
			body:     `{"error": {"errorCode": "EXPIRED", "detail": "the access token has expired"}}`,
			want:     api.Error{HTTPStatus: 401, Code: "EXPIRED", Detail: "the access token has expired"},
			wantText: "the access token has expired", wantExit: 4},
		{name: "HTML from a proxy", status: 502, contentType: "text/html",
			body:     "<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>",
			want:     api.Error{HTTPStatus: 502, Code: "INTERNAL", Detail: "the service answered 502 Bad Gateway"},
			wantText: "the service answered 502 Bad Gateway", wantExit: 1},
		{name: "plain text 401", status: 401, contentType: "text/plain", body: "Unauthorized",
			want: api.Error{HTTPStatus: 401, Code: "UNAUTHORIZED", Detail: "the service answered 401 Unauthorized"}, wantExit: 4},
		{name: "empty 404", status: 404, contentType: "text/plain",
			want: api.Error{HTTPStatus: 404, Code: "NOTFOUND", Detail: "the service answered 404 Not Found"}, wantExit: 1},
		{name: "empty 403", status: 403, contentType: "text/plain",
			want: api.Error{HTTPStatus: 403, Code: "FORBIDDEN", Detail: "the service answered 403 Forbidden"}, wantExit: 1},
		{name: "429", status: 429, contentType: "text/html", body: "<p>slow down</p>",
			want: api.Error{HTTPStatus: 429, Code: "RATELIMITED", Detail: "the service answered 429 Too Many Requests"}, wantExit: 1},
		{name: "other 4xx", status: 418, contentType: "text/plain", body: "teapot",
			want: api.Error{HTTPStatus: 418, Code: "INVALID", Detail: "the service answered 418 I'm a teapot"}, wantExit: 1},
		{name: "JSON that is not an error body", status: 503, contentType: "application/json", body: `{"message": "maintenance"}`,
			want: api.Error{HTTPStatus: 503, Code: "INTERNAL", Detail: "the service answered 503 Service Unavailable"}, wantExit: 1},
		{name: "JSON error null", status: 500, contentType: "application/json", body: `{"error": null}`,
			want: api.Error{HTTPStatus: 500, Code: "INTERNAL", Detail: "the service answered 500 Internal Server Error"}, wantExit: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := answer(t, tt.status, tt.contentType, tt.body)
			c := client.New(s.URL+"/", s.Client())
			_, err := c.Vehicle(context.Background(), "1")
			var got *api.Error
			if !errors.As(err, &got) {
				t.Fatalf("error %#v is not an *api.Error", err)
			}
			if fmt.Sprintf("%+v", *got) != fmt.Sprintf("%+v", tt.want) {
				t.Errorf("decoded %+v\nwant    %+v", *got, tt.want)
			}
			want := tt.wantText
			if want == "" {
				want = tt.want.Detail
			}
			if err.Error() != want {
				t.Errorf("message %q, want %q", err, want)
			}
			if strings.Contains(err.Error(), "<") {
				t.Errorf("the body leaks into the message: %q", err)
			}
			if code := cmdutil.ExitCode(err); code != tt.wantExit {
				t.Errorf("exit code %d, want %d", code, tt.wantExit)
			}
		})
	}
}

func TestUnexpectedSuccessBody(t *testing.T) {
	s := answer(t, 200, "text/html", "<html>captive portal</html>")
	_, err := client.New(s.URL, s.Client()).Vehicle(context.Background(), "1")
	if err == nil || !strings.Contains(err.Error(), "GET /vehicle/1: the service answered with an unexpected body") {
		t.Errorf("error = %v", err)
	}
}

func TestUnreachable(t *testing.T) {
	s := httptest.NewServer(http.NotFoundHandler())
	url := s.URL
	s.Close()
	_, err := client.New(url, http.DefaultClient).Vehicles(context.Background(), client.Page{})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the service at "+url) || !strings.Contains(err.Error(), "vcs server --dev") {
		t.Errorf("error = %v", err)
	}
	if cmdutil.ExitCode(err) != cmdutil.ExitError {
		t.Errorf("exit code %d", cmdutil.ExitCode(err))
	}
}

func TestRealServiceErrors(t *testing.T) {
	env := servertest.New(t)
	c := authed(env, env.DemoToken())
	ctx := context.Background()

	_, err := c.Vehicle(ctx, "999")
	var apiErr *api.Error
	if !errors.As(err, &apiErr) || apiErr.HTTPStatus != 404 || apiErr.Code != api.CodeNotFound || err.Error() != "vehicle not found" {
		t.Errorf("missing vehicle: %#v", err)
	}

	_, err = c.CreateVehicle(ctx, api.VehicleInput{Mileage: api.Some[int64](-1), Label: api.Some(strings.Repeat("x", 101))})
	if !errors.As(err, &apiErr) || apiErr.HTTPStatus != 400 || len(apiErr.FieldErrors) != 2 {
		t.Fatalf("bad vehicle: %#v", err)
	}
	fields := map[string]bool{}
	for _, f := range apiErr.FieldErrors {
		fields[f.FieldName] = f.ErrorDisplay != ""
	}
	if !fields["mileage"] || !fields["label"] {
		t.Errorf("field errors %+v", apiErr.FieldErrors)
	}

	_, err = authed(env, "bogus").Vehicles(ctx, client.Page{})
	if !errors.As(err, &apiErr) || apiErr.HTTPStatus != 401 || cmdutil.ExitCode(err) != cmdutil.ExitAuth {
		t.Errorf("bogus token: %#v", err)
	}
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func authed(env *servertest.Env, token string) *client.Client {
	return client.New(env.URL, &http.Client{Transport: bearer{token, http.DefaultTransport}})
}

func TestAllFollowsNextLinks(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	for i := range 3 {
		if r := env.Do("POST", "/vehicle/", tok, map[string]any{"label": fmt.Sprint("extra ", i)}); r.Status/100 != 2 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	var log strings.Builder
	hc := &http.Client{Transport: bearer{tok, client.NewTransport("test", &log)}}
	c := client.New(env.URL, hc)

	vehicles, total, err := c.AllVehicles(context.Background(), client.Page{Limit: 2, Offset: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, v := range vehicles {
		ids = append(ids, v.VehicleID)
	}
	if fmt.Sprint(ids) != "[2 3 4 5 6]" || total != 6 {
		t.Errorf("ids %v total %d, want [2 3 4 5 6] of 6", ids, total)
	}
	if n := strings.Count(log.String(), "> GET "); n != 3 {
		t.Errorf("%d requests, want 3 pages:\n%s", n, log.String())
	}

	accounts, total, err := client.New(env.URL, &http.Client{Transport: bearer{env.ClientToken(), http.DefaultTransport}}).
		AllAccounts(context.Background(), client.Page{Limit: 1})
	if err != nil || len(accounts) != 1 || total != 1 || accounts[0].Username != "demo" {
		t.Errorf("all accounts: %+v %d %v", accounts, total, err)
	}
}

func TestAllRefusesAnotherOrigin(t *testing.T) {
	var elsewhere atomic.Int32
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		leaked.Store(r.Header.Get("Authorization"))
		io.WriteString(w, `{"vehicle": [], "totalRecords": 3, "actions": []}`)
	}))
	defer other.Close()
	for _, next := range []string{
		other.URL + "/vehicle/?searchOffset=2",                // another port
		"https://" + strings.TrimPrefix(other.URL, "http://"), // another scheme
		"http://evil.example/vehicle/?searchOffset=2",         // another host
	} {
		t.Run(next, func(t *testing.T) {
			s := answer(t, 200, "application/json", `{"vehicle": [{"vehicleId": 1, "name": "A"}, {"vehicleId": 2, "name": "B"}],
				"totalRecords": 3, "actions": [{"name": "next", "uri": "`+next+`"}]}`)
			hc := &http.Client{Transport: bearer{"secret-token", s.Client().Transport}}
			vehicles, _, err := client.New(s.URL, hc).AllVehicles(context.Background(), client.Page{Limit: 2})
			if err == nil || !strings.Contains(err.Error(), "another address") || !strings.Contains(err.Error(), next) {
				t.Errorf("error = %v", err)
			}
			if vehicles != nil {
				t.Errorf("returned %d vehicles with an error", len(vehicles))
			}
		})
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other origin got %d requests (Authorization %q)", n, leaked.Load())
	}

	// The same origin is followed, even when written with a trailing-slash base URL.
	var hits atomic.Int32
	var same *httptest.Server
	same = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			fmt.Fprintf(w, `{"vehicle": [{"vehicleId": 1}], "totalRecords": 2, "actions": [{"name": "next", "uri": "%s/vehicle/?searchOffset=1"}]}`, same.URL)
			return
		}
		io.WriteString(w, `{"vehicle": [{"vehicleId": 2}], "totalRecords": 2, "actions": [{"name": "previous", "uri": "x"}]}`)
	}))
	defer same.Close()
	vehicles, total, err := client.New(same.URL+"/", same.Client()).AllVehicles(context.Background(), client.Page{Limit: 1})
	if err != nil || len(vehicles) != 2 || total != 2 || hits.Load() != 2 {
		t.Errorf("same origin: %d vehicles of %d after %d requests: %v", len(vehicles), total, hits.Load(), err)
	}
}
