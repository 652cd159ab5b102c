package route_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/paulmach/orb"

	"github.com/connected-vehicle/vcs/internal/sim/route"
)

// tampa is the route every accepted form below describes: three points in Tampa.
var tampa = orb.LineString{{-82.5886, 28.0270}, {-82.5850, 28.0500}, {-82.5786, 28.0884}}

func TestParseForms(t *testing.T) {
	tests := []struct{ name, raw string }{
		{"LineString", `{"type":"LineString","coordinates":[[-82.5886,28.0270],[-82.5850,28.0500],[-82.5786,28.0884]]}`},
		{"LineString with altitudes", `{"type":"LineString","coordinates":[[-82.5886,28.0270,3],[-82.5850,28.0500,4.5],[-82.5786,28.0884,2]]}`},
		{"Feature", `{"type":"Feature","properties":{"name":"to work"},"geometry":
			{"type":"LineString","coordinates":[[-82.5886,28.0270],[-82.5850,28.0500],[-82.5786,28.0884]]}}`},
		{"FeatureCollection with markers", `{"type":"FeatureCollection","features":[
			{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[-82.5886,28.0270]}},
			{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[[-82.5886,28.0270],[-82.5850,28.0500],[-82.5786,28.0884]]}},
			{"type":"Feature","properties":{},"geometry":null}]}`},
		{"point objects", `[{"latitude":28.0270,"longitude":-82.5886},{"latitude":28.0500,"longitude":-82.5850},{"longitude":-82.5786,"latitude":28.0884}]`},
		{"lng,lat pairs", ` [[-82.5886,28.0270],[-82.5850,28.0500],[-82.5786,28.0884]] `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := route.Parse([]byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tampa) {
				t.Errorf("Parse = %v, want %v", got, tampa)
			}
			if err := route.Check(got); err != nil {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct{ name, raw, want string }{
		{"empty", ``, "route is empty"},
		{"null", `null`, "route is empty"},
		{"string", `"28.0270,-82.5886"`, "must be a GeoJSON LineString"},
		{"empty list", `[]`, "route has no points"},
		{"short position", `[[-82.5886,28.0270],[-82.5786]]`, "point 2: a position needs a longitude and a latitude"},
		{"text in a pair", `[[-82.5886,28.0270],["a","b"]]`, "bad pair"},
		{"point without longitude", `[{"latitude":28.0270,"longitude":-82.5886},{"latitude":28.05,"lng":-82.58}]`, "point 2: latitude and longitude are required"},
		{"point not an object", `[{"latitude":28.0270,"longitude":-82.5886},7]`, "point 2: must be"},
		{"Point geometry", `{"type":"Point","coordinates":[-82.5886,28.0270]}`, "GeoJSON Point is not a line"},
		{"no type", `{"coordinates":[[-82.5886,28.0270],[-82.5786,28.0884]]}`, "needs a type"},
		{"LineString without coordinates", `{"type":"LineString"}`, "coordinates must be a list"},
		{"Feature with a Polygon", `{"type":"Feature","geometry":{"type":"Polygon","coordinates":[]}}`, "not a LineString"},
		{"collection of two lines", `{"type":"FeatureCollection","features":[
			{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}},
			{"type":"Feature","geometry":{"type":"LineString","coordinates":[[1,1],[2,2]]}}]}`, "exactly one LineString feature; this one holds 2"},
		{"collection of none", `{"type":"FeatureCollection","features":[]}`, "this one holds 0"},
		{"collection holding a geometry", `{"type":"FeatureCollection","features":[{"type":"LineString","coordinates":[[0,0],[1,1]]}]}`, "feature 1 of the collection is not a GeoJSON Feature"},
		{"bad JSON", `{"type":"LineString",`, "not valid GeoJSON"},
		{"too many points", `[` + strings.Repeat(`[1,1],`, route.MaxPoints) + `[1,2]]`, "at most 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := route.Parse([]byte(tt.raw))
			if err == nil {
				t.Fatalf("Parse = %v, want an error saying %q", got, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	long := make(orb.LineString, route.MaxPoints+1)
	for i := range long {
		long[i] = orb.Point{float64(i) / 1e4, 0}
	}
	tests := []struct {
		name string
		ls   orb.LineString
		want string
	}{
		{"one point", orb.LineString{{1, 2}}, "needs at least 2"},
		{"latitude out of range", orb.LineString{{1, 2}, {1, 90.5}}, "point 2: latitude 90.5 is out of range"},
		{"longitude out of range", orb.LineString{{-180.1, 2}, {1, 2}}, "point 1: longitude -180.1 is out of range"},
		{"NaN", orb.LineString{{1, 2}, {1, math.NaN()}}, "latitude NaN is out of range"},
		{"no length", orb.LineString{{1, 2}, {1, 2}, {1, 2}}, "has no length"},
		{"too many points", long, "at most 10000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := route.Check(tt.ls)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check = %v, want an error saying %q", err, tt.want)
			}
		})
	}
	edges := orb.LineString{{-180, -90}, {180, 90}}
	if err := route.Check(edges); err != nil {
		t.Errorf("the edges of the ranges are valid: %v", err)
	}
}

func TestLengthOfStraightRoute(t *testing.T) {
	// A degree along a meridian is 1/360 of a great circle of orb's sphere (the equatorial
	// radius): 69.17 miles.
	want := math.Pi / 180 * orb.EarthRadius / route.MetersPerMile
	got := route.Length(route.Straight(orb.Point{-82, 28}, orb.Point{-82, 29})) / route.MetersPerMile
	if math.Abs(got-want) > 1e-9 || math.Abs(got-69.17) > 0.01 {
		t.Errorf("one degree north = %.4f mi, want %.4f", got, want)
	}
}

func TestGeoJSONRoundTrip(t *testing.T) {
	raw := route.GeoJSON(tampa)
	var obj struct {
		Type        string
		Coordinates [][]float64
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	if obj.Type != "LineString" || len(obj.Coordinates) != 3 || obj.Coordinates[0][0] != -82.5886 || obj.Coordinates[0][1] != 28.0270 {
		t.Errorf("GeoJSON = %s", raw)
	}
	back, err := route.Parse(raw)
	if err != nil || !back.Equal(tampa) {
		t.Errorf("Parse(GeoJSON(r)) = %v, %v; want %v", back, err, tampa)
	}
}

const gpxHead = `<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1">
  <metadata><name>to work</name></metadata>
  <wpt lat="10" lon="10"><name>ignored</name></wpt>
`

func TestParseFileGPX(t *testing.T) {
	tests := []struct{ name, body string }{
		{"track in two segments", gpxHead + `
  <trk><name>t</name>
    <trkseg><trkpt lat="28.0270" lon="-82.5886"><ele>3</ele><time>2024-05-01T08:00:00Z</time></trkpt>
            <trkpt lon="-82.5850" lat="28.0500"/></trkseg>
    <trkseg><trkpt lat="28.0884" lon="-82.5786"></trkpt></trkseg>
  </trk>
  <rte><rtept lat="1" lon="1"/><rtept lat="2" lon="2"/></rte>
</gpx>`},
		{"route only", gpxHead + `<rte><rtept lat="28.0270" lon="-82.5886"/><rtept lat="28.0500" lon="-82.5850"/><rtept lat="28.0884" lon="-82.5786"/></rte></gpx>`},
		{"GPX 1.0 without a namespace, with a BOM", "\uFEFF" + `<gpx version="1.0"><trk><trkseg>
			<trkpt lat="28.0270" lon="-82.5886"/><trkpt lat="28.0500" lon="-82.5850"/><trkpt lat="28.0884" lon="-82.5786"/></trkseg></trk></gpx>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := route.ParseFile([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tampa) {
				t.Errorf("ParseFile = %v, want %v", got, tampa)
			}
		})
	}
}

func TestParseFileDetectsGeoJSON(t *testing.T) {
	got, err := route.ParseFile([]byte("\n  " + string(route.GeoJSON(tampa)) + "\n"))
	if err != nil || !got.Equal(tampa) {
		t.Errorf("ParseFile(GeoJSON) = %v, %v", got, err)
	}
}

func TestParseFileRefuses(t *testing.T) {
	many := strings.Repeat(`<trkpt lat="1" lon="1"/>`, route.MaxPoints+1)
	tests := []struct{ name, body, want string }{
		{"empty", "  \n", "the file is empty"},
		{"CSV", "lat,lng\n28,-82\n", "neither GeoJSON nor GPX"},
		{"other XML", `<kml><Placemark/></kml>`, "not GPX: its root element is <kml>"},
		{"broken XML", `<gpx><trk><trkseg><trkpt lat="1" lon="2">`, "not valid XML"},
		{"no points", gpxHead + `</gpx>`, "no track points (trkpt) or route points (rtept)"},
		{"bad number", `<gpx><trk><trkseg><trkpt lat="1" lon="2"/><trkpt lat="north" lon="2"/></trkseg></trk></gpx>`, `trkpt 2: lat="north" is not a number`},
		{"NaN", `<gpx><trk><trkseg><trkpt lat="NaN" lon="2"/></trkseg></trk></gpx>`, `lat="NaN" is not a number`},
		{"missing lon", `<gpx><rte><rtept lat="1"/></rte></gpx>`, "rtept 1: lat and lon are required"},
		{"too many points", `<gpx><trk><trkseg>` + many + `</trkseg></trk></gpx>`, fmt.Sprintf("more than %d trkpt points", route.MaxPoints)},
		{"bad GeoJSON", `{"type":"Polygon","coordinates":[]}`, "not a line to drive along"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := route.ParseFile([]byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseFile = %v, %v; want an error saying %q", got, err, tt.want)
			}
		})
	}
}
