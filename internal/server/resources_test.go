package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

func newAccount(username string) map[string]any {
	return map[string]any{
		"firstName": "Ann", "lastName": "Lee", "zipcode": "33602", "timeZone": "America/New_York",
		"preferredContact": "EMAIL", "email": username + "@example.com", "username": username, "password": "pass-" + username,
	}
}

// createUser creates an account with the development client and returns it with a token
// obtained by exchanging its creation code.
func createUser(t *testing.T, env *servertest.Env, username string) (api.Account, string) {
	t.Helper()
	r := env.Do("POST", "/account/", env.ClientToken(), newAccount(username))
	if r.Status != 200 {
		t.Fatalf("create %s: %d %s", username, r.Status, r.Body)
	}
	var e api.Envelope[api.Account]
	r.JSON(t, &e)
	tok, err := env.OAuthConfig(redirect).Exchange(t.Context(), e.Data.AccessToken.Code)
	if err != nil {
		t.Fatalf("exchange %s's code: %v", username, err)
	}
	return e.Data, tok.AccessToken
}

func createVehicle(t *testing.T, env *servertest.Env, token string, body map[string]any) api.Vehicle {
	t.Helper()
	r := env.Do("POST", "/vehicle/", token, body)
	if r.Status != 200 {
		t.Fatalf("create vehicle %v: %d %s", body, r.Status, r.Body)
	}
	var e api.Envelope[api.Vehicle]
	r.JSON(t, &e)
	return e.Data
}

func TestEnvelopes(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()

	r := env.Do("GET", "/vehicle/1", tok, nil)
	if r.Header.Get("Content-Type") != "application/json;charset=UTF-8" {
		t.Errorf("Content-Type = %q", r.Header.Get("Content-Type"))
	}
	var raw map[string]json.RawMessage
	r.JSON(t, &raw)
	if string(raw["totalRecords"]) != "null" || string(raw["actions"]) != "[]" || len(raw) != 3 {
		t.Errorf("single envelope = %s", r.Body)
	}
	if !strings.HasPrefix(string(r.Body), `{"vehicle":{`) {
		t.Errorf("envelope member order: %s", r.Body)
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal(raw["vehicle"], &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "vehicleId", "deviceId", "vin", "label", "autoAssignDevice", "mileage",
		"lastWaypoint", "running", "lastRunningTimestamp", "year", "make", "model"} {
		if _, ok := v[k]; !ok {
			t.Errorf("vehicle lacks %s", k)
		}
	}

	r = env.Do("GET", "/vehicle/", tok, nil)
	var list api.Envelope[[]api.Vehicle]
	r.JSON(t, &list)
	if list.Key != "vehicle" || len(list.Data) != 3 || *list.TotalRecords != 3 || len(list.Actions) != 0 {
		t.Errorf("list envelope = %s", r.Body)
	}
	want := []string{"1999 Jeep", "2000 Chevrolet", "2013 Subaru"}
	for i, v := range list.Data {
		if v.Name != want[i] || v.Make == nil || v.Year == nil {
			t.Errorf("vehicle %d name %q, want %q", i, v.Name, want[i])
		}
	}

	r = env.Do("DELETE", "/vehicle/3", tok, nil)
	if r.Status != 200 || string(r.Body) != `{"result":"OK","totalRecords":1,"actions":[]}` {
		t.Errorf("delete = %d %s", r.Status, r.Body)
	}

	// Trailing slashes are optional everywhere.
	for _, p := range []string{"/vehicle", "/vehicle/", "/vehicle/1", "/vehicle/1/", "/account", "/account/"} {
		if r := env.Do("GET", p, tok, nil); r.Status != 200 {
			t.Errorf("GET %s = %d", p, r.Status)
		}
	}
}

func TestEmptyListIs200(t *testing.T) {
	env := servertest.New(t)
	_, tok := createUser(t, env, "nocar")
	r := env.Do("GET", "/vehicle/", tok, nil)
	if r.Status != 200 || string(r.Body) != `{"vehicle":[],"totalRecords":0,"actions":[]}` {
		t.Fatalf("empty list = %d %s", r.Status, r.Body)
	}
}

func TestDateTimeFormat(t *testing.T) {
	env := servertest.New(t)
	r := env.Do("GET", "/account/", env.DemoToken(), nil)
	var list api.Envelope[[]map[string]any]
	r.JSON(t, &list)
	dc, _ := list.Data[0]["dateCreated"].(string)
	if _, err := api.ParseDateTime(dc); err != nil || !strings.HasSuffix(dc, "+0000") || len(dc) != 20 {
		t.Fatalf("dateCreated = %q: %v", dc, err)
	}
}

func TestVehiclePaging(t *testing.T) {
	env := servertest.New(t)
	_, tok := createUser(t, env, "fleetowner")
	for i := range 7 {
		createVehicle(t, env, tok, map[string]any{"label": fmt.Sprintf("car %d", i)})
	}
	var seen []int64
	next := "/vehicle/?searchLimit=3"
	pages := 0
	for next != "" {
		r := env.Do("GET", next, tok, nil)
		var page api.Envelope[[]api.Vehicle]
		r.JSON(t, &page)
		if r.Status != 200 || *page.TotalRecords != 7 {
			t.Fatalf("GET %s = %d %s", next, r.Status, r.Body)
		}
		for _, v := range page.Data {
			seen = append(seen, v.VehicleID)
		}
		if strings.Contains(string(r.Body), `\u0026`) {
			t.Errorf("links are HTML-escaped: %s", r.Body)
		}
		if pages > 0 && page.Action("previous") == "" {
			t.Errorf("page %d has no previous link", pages)
		}
		next = ""
		if u := page.Action("next"); u != "" {
			if !strings.HasPrefix(u, env.URL+"/vehicle") {
				t.Fatalf("next link %q is not absolute under %s", u, env.URL)
			}
			next = strings.TrimPrefix(u, env.URL)
		}
		pages++
	}
	if pages != 3 || len(seen) != 7 {
		t.Fatalf("pages %d, vehicles %v", pages, seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("not in id order: %v", seen)
		}
	}
	for _, q := range []string{"searchLimit=0", "searchLimit=501", "searchLimit=x", "searchOffset=-1"} {
		r := env.Do("GET", "/vehicle/?"+q, tok, nil)
		if r.Status != 400 || len(r.Error(t).FieldErrors) != 1 {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}
}

func TestVehicleLookupByIDOrDevice(t *testing.T) {
	env := servertest.New(t)
	_, tok := createUser(t, env, "lookup")
	a := createVehicle(t, env, tok, map[string]any{"deviceId": "SER-1"})
	numeric := createVehicle(t, env, tok, map[string]any{"deviceId": "999999"})
	for path, want := range map[string]int64{
		"/vehicle/" + itoa(a.VehicleID): a.VehicleID,
		"/vehicle/SER-1":                a.VehicleID,
		"/vehicle/999999":               numeric.VehicleID, // all digits: tried as an id, then as a serial
	} {
		r := env.Do("GET", path, tok, nil)
		var e api.Envelope[api.Vehicle]
		r.JSON(t, &e)
		if r.Status != 200 || e.Data.VehicleID != want {
			t.Errorf("GET %s = %d %s, want vehicle %d", path, r.Status, r.Body, want)
		}
	}
	if r := env.Do("GET", "/vehicle/NOPE", tok, nil); r.Status != 404 || r.Error(t).Code != api.CodeNotFound {
		t.Errorf("unknown serial: %d %s", r.Status, r.Body)
	}
}

func TestVehicleCreateUpdate(t *testing.T) {
	env := servertest.New(t)
	_, tok := createUser(t, env, "updater")
	v := createVehicle(t, env, tok, map[string]any{"vin": "1g1yy22g2y5108919", "label": "vette", "mileage": 100})
	if v.Name != "2000 Chevrolet" || *v.VIN != "1G1YY22G2Y5108919" || !v.AutoAssignDevice || *v.Mileage != 100 {
		t.Fatalf("created %+v", v)
	}
	id := itoa(v.VehicleID)

	// Partial update: absent members stay, null clears.
	r := env.Do("POST", "/vehicle/"+id, tok, map[string]any{"label": nil, "mileage": 250})
	var u api.Envelope[api.Vehicle]
	r.JSON(t, &u)
	if r.Status != 200 || u.Data.Label != nil || *u.Data.Mileage != 250 || *u.Data.VIN != *v.VIN {
		t.Fatalf("update = %d %s", r.Status, r.Body)
	}
	// A VIN that does not decode leaves the vehicle unidentified.
	r = env.Do("POST", "/vehicle/"+id, tok, map[string]any{"vin": "1G1YY22G3Y5108919"})
	r.JSON(t, &u)
	if u.Data.Name != api.UnidentifiedVehicle || u.Data.Year != nil || u.Data.Make != nil {
		t.Fatalf("bad check digit: %s", r.Body)
	}
	r = env.Do("POST", "/vehicle/"+id, tok, map[string]any{"vin": nil})
	r.JSON(t, &u)
	if u.Data.VIN != nil || u.Data.Name != api.UnidentifiedVehicle {
		t.Fatalf("clear vin: %s", r.Body)
	}
	// Members the service sets cannot be sent.
	for _, body := range []string{`{"vehicleId": 9}`, `{"name": "x"}`, `{"running": true}`, `{"VIN": "x"}`} {
		r := env.Do("POST", "/vehicle/"+id, tok, body)
		if r.Status != 400 || len(r.Error(t).FieldErrors) != 1 {
			t.Errorf("%s: %d %s", body, r.Status, r.Body)
		}
	}
}

func TestValidationErrors(t *testing.T) {
	env := servertest.New(t)
	ct := env.ClientToken()
	_, tok := createUser(t, env, "validator")
	for _, tc := range []struct {
		name, method, path, token, body string
		status                          int
		fields                          []string
	}{
		{"missing required", "POST", "/account/", ct, `{"firstName":"A"}`, 400,
			[]string{"lastName", "password", "preferredContact", "timeZone", "username", "zipcode"}},
		{"bad values", "POST", "/account/", ct, `{"firstName":"A","lastName":"B","zipcode":"33602","timeZone":"Mars/Base","preferredContact":"FAX","username":"ok-name","password":"short","email":"not-an-email"}`, 400,
			[]string{"timeZone", "preferredContact", "password", "email"}},
		{"wrong types", "POST", "/vehicle/", tok, `{"mileage":"far","autoAssignDevice":"yes","label":7}`, 400,
			[]string{"autoAssignDevice", "label", "mileage"}},
		{"vin length", "POST", "/vehicle/", tok, `{"vin":"123"}`, 400, []string{"vin"}},
		{"negative mileage", "POST", "/vehicle/", tok, `{"mileage":-1}`, 400, []string{"mileage"}},
		{"fraction mileage", "POST", "/vehicle/", tok, `{"mileage":1.5}`, 400, []string{"mileage"}},
		{"device with slash", "POST", "/vehicle/", tok, `{"deviceId":"a/b"}`, 400, []string{"deviceId"}},
		{"null autoAssign", "POST", "/vehicle/", tok, `{"autoAssignDevice":null}`, 400, []string{"autoAssignDevice"}},
		{"required null", "POST", "/account/1", ct, `{"firstName":null}`, 400, []string{"firstName"}},
		{"malformed", "POST", "/vehicle/", tok, `{"label":`, 400, nil},
		{"not an object", "POST", "/vehicle/", tok, `[1,2]`, 400, nil},
		{"empty", "POST", "/vehicle/", tok, ``, 400, nil},
		{"trailing data", "POST", "/vehicle/", tok, `{} {}`, 400, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := env.Do(tc.method, tc.path, tc.token, tc.body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tc.status, r.Body)
			}
			e := r.Error(t)
			if e.HTTPStatus != tc.status || e.Code == "" || e.Detail == "" {
				t.Errorf("error body %s", r.Body)
			}
			var got []string
			for _, f := range e.FieldErrors {
				got = append(got, f.FieldName)
				if f.Code == "" || f.ErrorDisplay == "" {
					t.Errorf("field error %+v lacks code or display", f)
				}
			}
			if strings.Join(sorted(got), ",") != strings.Join(sorted(tc.fields), ",") {
				t.Errorf("field errors %v, want %v", got, tc.fields)
			}
		})
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func TestBodyLimitsAndContentType(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	big := `{"label":"` + strings.Repeat("x", api.MaxBodySize) + `"}`
	if r := env.Do("POST", "/vehicle/", tok, big); r.Status != 413 || r.Error(t).HTTPStatus != 413 {
		t.Errorf("oversized body: %d %s", r.Status, r.Body)
	}
	req, _ := http.NewRequest("POST", env.URL+"/vehicle/", strings.NewReader(`{"label":"x"}`))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 415 {
		t.Errorf("text/plain body: %d, want 415", resp.StatusCode)
	}
}

func TestUsernameUniqueAndDeviceMoves(t *testing.T) {
	env := servertest.New(t)
	ct := env.ClientToken()
	createUser(t, env, "unique")
	r := env.Do("POST", "/account/", ct, newAccount("UNIQUE"))
	if r.Status != 409 || r.Error(t).Code != api.CodeUnique || r.Error(t).FieldErrors[0].FieldName != "username" {
		t.Fatalf("duplicate username: %d %s", r.Status, r.Body)
	}

	_, tok := createUser(t, env, "mover")
	locked := createVehicle(t, env, tok, map[string]any{"deviceId": "DEV-LOCK", "autoAssignDevice": false})
	free := createVehicle(t, env, tok, map[string]any{"deviceId": "DEV-FREE"})

	// The device of a vehicle that forbids reassignment cannot move.
	r = env.Do("POST", "/vehicle/", tok, map[string]any{"deviceId": "DEV-LOCK"})
	if r.Status != 409 || r.Error(t).Code != api.CodeUnique {
		t.Fatalf("take locked device: %d %s", r.Status, r.Body)
	}
	// The device of a vehicle that allows it moves, and the old vehicle loses it.
	moved := createVehicle(t, env, tok, map[string]any{"deviceId": "DEV-FREE"})
	r = env.Do("GET", "/vehicle/"+itoa(free.VehicleID), tok, nil)
	var old api.Envelope[api.Vehicle]
	r.JSON(t, &old)
	if old.Data.DeviceID != nil {
		t.Fatalf("old vehicle still has the device: %s", r.Body)
	}
	r = env.Do("GET", "/vehicle/DEV-FREE", tok, nil)
	var now api.Envelope[api.Vehicle]
	r.JSON(t, &now)
	if now.Data.VehicleID != moved.VehicleID {
		t.Fatalf("device lookup finds %d, want %d", now.Data.VehicleID, moved.VehicleID)
	}
	// Updates follow the same rule.
	r = env.Do("POST", "/vehicle/"+itoa(moved.VehicleID), tok, map[string]any{"deviceId": "DEV-LOCK"})
	if r.Status != 409 {
		t.Fatalf("update onto locked device: %d %s", r.Status, r.Body)
	}
	r = env.Do("POST", "/vehicle/"+itoa(locked.VehicleID), tok, map[string]any{"deviceId": "DEV-LOCK", "label": "same"})
	if r.Status != 200 {
		t.Fatalf("update keeping own device: %d %s", r.Status, r.Body)
	}
}

func TestAccountUpdateAndLogin(t *testing.T) {
	env := servertest.New(t)
	a, tok := createUser(t, env, "changer")
	r := env.Do("POST", "/account/"+itoa(a.ID), tok, map[string]any{"phone": "+1 813 555 0100", "password": "a-new-password", "email": nil})
	var u api.Envelope[api.Account]
	r.JSON(t, &u)
	if r.Status != 200 || *u.Data.Phone != "+1 813 555 0100" || u.Data.Email != nil || u.Data.FirstName != "Ann" {
		t.Fatalf("update = %d %s", r.Status, r.Body)
	}
	// The new password works on the login page.
	env.Login("changer", "a-new-password")
}

func TestCascadeDelete(t *testing.T) {
	env := servertest.New(t)
	a, tok := createUser(t, env, "leaver")
	v := createVehicle(t, env, tok, map[string]any{"deviceId": "LEAVE-1"})
	ct := env.ClientToken()
	if r := env.Do("DELETE", "/account/"+itoa(a.ID), tok, nil); r.Status != 200 {
		t.Fatalf("delete own account: %d %s", r.Status, r.Body)
	}
	if r := env.Do("GET", "/vehicle/", tok, nil); r.Status != 401 {
		t.Errorf("token of a deleted account: %d, want 401", r.Status)
	}
	if r := env.Do("GET", "/account/"+itoa(a.ID), ct, nil); r.Status != 404 {
		t.Errorf("deleted account: %d", r.Status)
	}
	// Its vehicle went with it: the device serial is free again.
	_, tok2 := createUser(t, env, "newowner")
	w := createVehicle(t, env, tok2, map[string]any{"deviceId": "LEAVE-1"})
	if w.VehicleID == v.VehicleID {
		t.Errorf("vehicle id reused")
	}
}

func TestUserTokenCannotCreateAccounts(t *testing.T) {
	env := servertest.New(t)
	r := env.Do("POST", "/account/", env.DemoToken(), newAccount("sneaky"))
	if r.Status != 403 || r.Error(t).Code != api.CodeForbidden {
		t.Fatalf("user token creating an account: %d %s", r.Status, r.Body)
	}
	r = env.Do("POST", "/vehicle/", env.ClientToken(), map[string]any{"label": "x"})
	if r.Status != 403 {
		t.Fatalf("client token creating a vehicle: %d %s", r.Status, r.Body)
	}
}

func TestMethodsAndUnknownPaths(t *testing.T) {
	env := servertest.New(t)
	tok := env.DemoToken()
	r := env.Do("PUT", "/vehicle/1", tok, `{}`)
	if r.Status != 405 || r.Header.Get("Allow") != "DELETE, GET, HEAD, POST" || r.Error(t).HTTPStatus != 405 {
		t.Errorf("PUT: %d %q %s", r.Status, r.Header.Get("Allow"), r.Body)
	}
	r = env.Do("GET", "/nothing/here", tok, nil)
	if r.Status != 404 || r.Error(t).Code != api.CodeNotFound {
		t.Errorf("unknown path: %d %s", r.Status, r.Body)
	}
	r = env.Do("GET", "/oauth/token", "", nil)
	if r.Status != 405 {
		t.Errorf("GET token endpoint: %d", r.Status)
	}
}

func TestBasePath(t *testing.T) {
	env := servertest.New(t, servertest.WithBasePath("/api"))
	if !strings.HasSuffix(env.URL, "/api") {
		t.Fatalf("URL %s", env.URL)
	}
	tok := env.DemoToken() // authorize at the root, token under /api
	r := env.Do("GET", "/vehicle/?searchLimit=1", tok, nil)
	var page api.Envelope[[]api.Vehicle]
	r.JSON(t, &page)
	next, _ := url.Parse(page.Action("next"))
	if r.Status != 200 || next.Path != "/api/vehicle" {
		t.Fatalf("GET /api/vehicle/: %d, next %s", r.Status, page.Action("next"))
	}
	// Metadata: at the SPEC's place under the base path, and at RFC 8414's.
	root := strings.TrimSuffix(env.URL, "/api")
	for _, u := range []string{env.URL + "/.well-known/oauth-authorization-server", root + "/.well-known/oauth-authorization-server/api"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		var md api.ServerMetadata
		err = json.NewDecoder(resp.Body).Decode(&md)
		resp.Body.Close()
		if err != nil || md.Issuer != env.URL {
			t.Errorf("GET %s: %d, issuer %q", u, resp.StatusCode, md.Issuer)
		}
	}
}
