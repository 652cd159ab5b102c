package api_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/connected-vehicle/vcs/internal/api"
)

type envItem struct {
	Name string `json:"name"`
}

func TestEnvelopeMarshal(t *testing.T) {
	next := []api.Action{{Name: api.ActionNext, URI: "http://x/vehicle/?searchOffset=2"}}
	for _, tc := range []struct {
		name string
		env  any
		want string
	}{
		// The SPEC's bytes, in the SPEC's member order.
		{"single", api.Single(api.KeyVehicle, envItem{"a"}),
			`{"vehicle":{"name":"a"},"totalRecords":null,"actions":[]}`},
		{"nil page", api.List[envItem](api.KeyVehicle, nil, 0, nil),
			`{"vehicle":[],"totalRecords":0,"actions":[]}`},
		{"empty page", api.List(api.KeyAccount, []envItem{}, 0, nil),
			`{"account":[],"totalRecords":0,"actions":[]}`},
		{"page", api.List(api.KeyVehicle, []envItem{{"a"}, {"b"}}, 137, next),
			`{"vehicle":[{"name":"a"},{"name":"b"}],"totalRecords":137,"actions":[{"name":"next","uri":"http://x/vehicle/?searchOffset=2"}]}`},
		{"deleted", api.Deleted(),
			`{"result":"OK","totalRecords":1,"actions":[]}`},
		{"zero total is not null", api.Envelope[int]{Key: "n", Data: 1, TotalRecords: new(int)},
			`{"n":1,"totalRecords":0,"actions":[]}`},
	} {
		b, err := json.Marshal(tc.env)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if string(b) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, b, tc.want)
		}
	}
}

func TestEnvelopeMarshalError(t *testing.T) {
	// A value encoding/json cannot write fails the envelope instead of writing half of it.
	if b, err := json.Marshal(api.Single("x", make(chan int))); err == nil {
		t.Errorf("marshal of a channel = %s, want an error", b)
	}
}

func TestEnvelopeUnmarshalFindsKey(t *testing.T) {
	body := `{"vehicle":[{"name":"a"}],"totalRecords":137,"actions":[{"name":"next","uri":"http://x/n"},{"name":"previous","uri":"http://x/p"}]}`
	var e api.Envelope[[]envItem]
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatal(err)
	}
	if e.Key != api.KeyVehicle || !reflect.DeepEqual(e.Data, []envItem{{"a"}}) || e.TotalRecords == nil || *e.TotalRecords != 137 {
		t.Errorf("unmarshal = %+v", e)
	}
	if e.Action(api.ActionNext) != "http://x/n" || e.Action(api.ActionPrev) != "http://x/p" || e.Action("last") != "" {
		t.Errorf("actions = %+v", e.Actions)
	}
}

func TestEnvelopeUnmarshalSingleAndDeleted(t *testing.T) {
	var single api.Envelope[envItem]
	if err := json.Unmarshal([]byte(`{"account":{"name":"a"},"totalRecords":null,"actions":[]}`), &single); err != nil {
		t.Fatal(err)
	}
	if single.Key != api.KeyAccount || single.Data.Name != "a" || single.TotalRecords != nil || len(single.Actions) != 0 {
		t.Errorf("single = %+v", single)
	}
	var del api.Envelope[string]
	if err := json.Unmarshal([]byte(`{"result":"OK","totalRecords":1,"actions":[]}`), &del); err != nil {
		t.Fatal(err)
	}
	if del.Key != api.KeyResult || del.Data != api.ResultOK || del.TotalRecords == nil || *del.TotalRecords != 1 {
		t.Errorf("deleted = %+v", del)
	}
}

func TestEnvelopeUnmarshalPresetKey(t *testing.T) {
	// With Key set, the envelope reads that member and ignores others, which lets a client
	// read a response that grows new members.
	e := api.Envelope[envItem]{Key: api.KeyVehicle}
	if err := json.Unmarshal([]byte(`{"vehicle":{"name":"v"},"extra":{"name":"no"},"totalRecords":null}`), &e); err != nil {
		t.Fatal(err)
	}
	if e.Key != api.KeyVehicle || e.Data.Name != "v" {
		t.Errorf("preset key: %+v", e)
	}

	e = api.Envelope[envItem]{Key: api.KeyVehicle}
	err := json.Unmarshal([]byte(`{"account":{"name":"a"},"totalRecords":null,"actions":[]}`), &e)
	if err == nil || !strings.Contains(err.Error(), `"vehicle"`) {
		t.Errorf("preset key vehicle on an account envelope: %v", err)
	}
}

func TestEnvelopeUnmarshalErrors(t *testing.T) {
	for _, body := range []string{
		`{"vehicle":{"name":"a"},"account":{"name":"b"},"totalRecords":null,"actions":[]}`, // two data members
		`{"totalRecords":null,"actions":[]}`,                                               // none
		`{}`,
		`null`,
		`[]`,
		`{"vehicle":{"name":"a"},"totalRecords":"many","actions":[]}`,
		`{"vehicle":{"name":"a"},"totalRecords":null,"actions":{}}`,
		`{"vehicle":"a name","totalRecords":null,"actions":[]}`, // data of the wrong type
		`{"vehicle":{"name":"a"}`,
	} {
		var e api.Envelope[envItem]
		if err := json.Unmarshal([]byte(body), &e); err == nil {
			t.Errorf("%s: unmarshal = %+v, want an error", body, e)
		}
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	// URIs with & are escaped by encoding/json; they must still read back the same.
	in := api.List(api.KeyVehicle, []envItem{{"<a&b>"}}, 3, []api.Action{
		{Name: api.ActionNext, URI: "http://x/vehicle/?searchLimit=1&searchOffset=2"},
		{Name: api.ActionPrev, URI: "http://x/vehicle/?searchLimit=1&searchOffset=0"},
	})
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out api.Envelope[[]envItem]
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n in %+v\nout %+v", in, out)
	}
}
