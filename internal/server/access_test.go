package server_test

import (
	"strings"
	"testing"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/server/servertest"
)

// TestOtherAccountSeesNothing: a second account's token gets 404, never 403 or data, on
// every account and vehicle path of the first, in every path form.
func TestOtherAccountSeesNothing(t *testing.T) {
	env := servertest.New(t)
	victim, victimTok := createUser(t, env, "victim")
	v := createVehicle(t, env, victimTok, map[string]any{"deviceId": "VICTIM-1", "label": "mine"})
	_, intruderTok := createUser(t, env, "intruder")

	// A client token of another partner: it created neither account.
	other, err := env.Server.OAuth.CreateClient(t.Context(), "other partner", nil)
	if err != nil {
		t.Fatal(err)
	}
	otherClientTok := env.ClientTokenFor(other.ID, other.Secret)

	aid, vid := itoa(victim.ID), itoa(v.VehicleID)
	paths := []struct{ method, path, body string }{
		{"GET", "/account/" + aid, ""},
		{"GET", "/account/" + aid + "/", ""},
		{"POST", "/account/" + aid, `{"firstName":"Pwned"}`},
		{"DELETE", "/account/" + aid, ""},
		{"GET", "/vehicle/" + vid, ""},
		{"GET", "/vehicle/" + vid + "/", ""},
		{"GET", "/vehicle/VICTIM-1", ""},
		{"POST", "/vehicle/" + vid, `{"label":"pwned"}`},
		{"POST", "/vehicle/VICTIM-1", `{"label":"pwned"}`},
		{"DELETE", "/vehicle/" + vid, ""},
		{"DELETE", "/vehicle/VICTIM-1", ""},
	}
	for name, tok := range map[string]string{"other account": intruderTok, "other partner's client": otherClientTok} {
		for _, p := range paths {
			t.Run(name+" "+p.method+" "+p.path, func(t *testing.T) {
				var body any
				if p.body != "" {
					body = p.body
				}
				r := env.Do(p.method, p.path, tok, body)
				if r.Status != 404 || r.Error(t).Code != api.CodeNotFound {
					t.Fatalf("%d %s, want 404 NOTFOUND", r.Status, r.Body)
				}
				if strings.Contains(string(r.Body), "victim") || strings.Contains(string(r.Body), "mine") {
					t.Fatalf("response reveals the victim's data: %s", r.Body)
				}
			})
		}
	}

	// Devices do not move out of another account, even when its vehicle allows moves.
	r0 := env.Do("POST", "/vehicle/", intruderTok, map[string]any{"deviceId": "VICTIM-1"})
	if r0.Status != 409 {
		t.Fatalf("taking another account's device: %d %s, want 409", r0.Status, r0.Body)
	}
	if strings.Contains(string(r0.Body), "vehicleId") || strings.Contains(string(r0.Body), "mine") {
		t.Fatalf("409 reveals the holder: %s", r0.Body)
	}

	// Lists show only what is the caller's.
	r := env.Do("GET", "/vehicle/", intruderTok, nil)
	if strings.Contains(string(r.Body), "VICTIM-1") {
		t.Fatalf("intruder's list shows the victim's vehicle: %s", r.Body)
	}
	r = env.Do("GET", "/account/", otherClientTok, nil)
	if r.Status != 200 || string(r.Body) != `{"account":[],"totalRecords":0,"actions":[]}` {
		t.Fatalf("other partner's account list: %s", r.Body)
	}

	// Nothing changed for the owner.
	r = env.Do("GET", "/vehicle/"+vid, victimTok, nil)
	var got api.Envelope[api.Vehicle]
	r.JSON(t, &got)
	if r.Status != 200 || *got.Data.Label != "mine" || got.Data.DeviceID == nil || *got.Data.DeviceID != "VICTIM-1" {
		t.Fatalf("victim's vehicle after the attempts: %d %s", r.Status, r.Body)
	}
	// The creating partner's client token does see it.
	r = env.Do("GET", "/vehicle/"+vid, env.ClientToken(), nil)
	if r.Status != 200 {
		t.Fatalf("creating client: %d %s", r.Status, r.Body)
	}
}
