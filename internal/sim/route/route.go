// Package route reads the routes the traffic simulator follows — GeoJSON, lists of points,
// GPX files — into an orb.LineString of [longitude, latitude] points, and checks them. The
// service uses it for the route member of POST /simulator/trip/, the CLI for `vcs simulate
// trip --route FILE`, so that both accept and refuse the same routes.
package route

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geo"
)

// MaxPoints is the most points a route may have.
const MaxPoints = 10_000

// MetersPerMile converts the metres of orb/geo to the miles of the API.
const MetersPerMile = 1609.344

// minLength is the shortest route worth driving, in metres: a route whose points all lie
// on one spot has no direction to drive in.
const minLength = 1.0

// Parse reads a route given as JSON: a GeoJSON LineString, a GeoJSON Feature holding one,
// a FeatureCollection holding exactly one LineString feature, a list of
// {"latitude", "longitude"} objects, or a list of [longitude, latitude] pairs (GeoJSON's
// order). It checks the route's shape; Check checks its values.
func Parse(raw []byte) (orb.LineString, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, errors.New("route is empty")
	}
	switch raw[0] {
	case '[':
		return parseList(raw)
	case '{':
		return parseGeoJSON(raw)
	}
	return nil, errors.New("route must be a GeoJSON LineString, Feature or FeatureCollection, or a list of points")
}

// parseList reads a list of point objects or of [longitude, latitude] pairs.
func parseList(raw []byte) (orb.LineString, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("route is not a valid list of points: %w", err)
	}
	if len(items) == 0 {
		return nil, errors.New("route has no points")
	}
	if len(items) > MaxPoints {
		return nil, fmt.Errorf("route has %d points; at most %d are allowed", len(items), MaxPoints)
	}
	if first := bytes.TrimSpace(items[0]); len(first) > 0 && first[0] == '[' {
		var pairs [][]float64
		if err := json.Unmarshal(raw, &pairs); err != nil {
			return nil, fmt.Errorf("route is a list of [longitude, latitude] pairs with a bad pair: %w", err)
		}
		return positions(pairs)
	}
	ls := make(orb.LineString, len(items))
	for i, it := range items {
		var p struct {
			Latitude  *float64 `json:"latitude"`
			Longitude *float64 `json:"longitude"`
		}
		if err := json.Unmarshal(it, &p); err != nil {
			return nil, fmt.Errorf("point %d: must be {\"latitude\": number, \"longitude\": number}", i+1)
		}
		if p.Latitude == nil || p.Longitude == nil {
			return nil, fmt.Errorf("point %d: latitude and longitude are required", i+1)
		}
		ls[i] = orb.Point{*p.Longitude, *p.Latitude}
	}
	return ls, nil
}

// positions turns GeoJSON positions into points. RFC 7946 §3.1.1: a position has two or
// more numbers, longitude first; a third is the altitude, which a drive on the ground
// ignores. (encoding/json would quietly turn [lng] into [lng, 0], so each is counted.)
func positions(pairs [][]float64) (orb.LineString, error) {
	if len(pairs) > MaxPoints {
		return nil, fmt.Errorf("route has %d points; at most %d are allowed", len(pairs), MaxPoints)
	}
	ls := make(orb.LineString, len(pairs))
	for i, p := range pairs {
		if len(p) < 2 {
			return nil, fmt.Errorf("point %d: a position needs a longitude and a latitude", i+1)
		}
		ls[i] = orb.Point{p[0], p[1]}
	}
	return ls, nil
}

// geoJSONObject holds the members of any GeoJSON object that a route can be found in.
//
// orb/geojson would decode these, but it imports the MongoDB driver's bson package, which
// the module does not otherwise need; the three object types a route can come in are
// small enough to read here.
type geoJSONObject struct {
	Type        string            `json:"type"`
	Coordinates json.RawMessage   `json:"coordinates"`
	Geometry    json.RawMessage   `json:"geometry"`
	Features    []json.RawMessage `json:"features"`
}

func parseGeoJSON(raw []byte) (orb.LineString, error) {
	var o geoJSONObject
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, fmt.Errorf("route is not valid GeoJSON: %w", err)
	}
	switch o.Type {
	case "LineString":
		return lineString(o)
	case "Feature":
		return featureLine(o)
	case "FeatureCollection":
		var lines []orb.LineString
		for i, f := range o.Features {
			var fo geoJSONObject
			if err := json.Unmarshal(f, &fo); err != nil || fo.Type != "Feature" {
				return nil, fmt.Errorf("route: feature %d of the collection is not a GeoJSON Feature", i+1)
			}
			ls, err := featureLine(fo)
			if errors.Is(err, errNotLine) {
				continue // a marker or an area beside the line: not part of the drive
			} else if err != nil {
				return nil, fmt.Errorf("feature %d: %w", i+1, err)
			}
			lines = append(lines, ls)
		}
		if len(lines) != 1 {
			return nil, fmt.Errorf("route: a FeatureCollection must hold exactly one LineString feature; this one holds %d", len(lines))
		}
		return lines[0], nil
	case "":
		return nil, errors.New("route: a GeoJSON object needs a type; a point is a list item, not the route")
	}
	return nil, fmt.Errorf("route: GeoJSON %s is not a line to drive along; use a LineString", o.Type)
}

var errNotLine = errors.New("route: the feature's geometry is not a LineString")

func featureLine(f geoJSONObject) (orb.LineString, error) {
	var g geoJSONObject
	if len(f.Geometry) == 0 || bytes.Equal(bytes.TrimSpace(f.Geometry), []byte("null")) {
		return nil, errNotLine
	}
	if err := json.Unmarshal(f.Geometry, &g); err != nil {
		return nil, fmt.Errorf("route: the feature's geometry is not valid GeoJSON: %w", err)
	}
	if g.Type != "LineString" {
		return nil, errNotLine
	}
	return lineString(g)
}

func lineString(g geoJSONObject) (orb.LineString, error) {
	var pairs [][]float64
	if err := json.Unmarshal(g.Coordinates, &pairs); err != nil || pairs == nil {
		return nil, errors.New("route: a LineString's coordinates must be a list of [longitude, latitude] positions")
	}
	return positions(pairs)
}

// Straight is the route from one point straight to another. Points along it come from
// orb/geo's great-circle functions, so it is the great circle between them.
func Straight(from, to orb.Point) orb.LineString { return orb.LineString{from, to} }

// Check reports what makes a route undrivable: fewer than two or more than MaxPoints
// points, a coordinate out of range, or no length at all.
func Check(ls orb.LineString) error {
	if len(ls) < 2 {
		return fmt.Errorf("route has %d point(s); it needs at least 2", len(ls))
	}
	if len(ls) > MaxPoints {
		return fmt.Errorf("route has %d points; at most %d are allowed", len(ls), MaxPoints)
	}
	for i, p := range ls {
		if err := CheckPoint(p); err != nil {
			return fmt.Errorf("point %d: %w", i+1, err)
		}
	}
	if Length(ls) < minLength {
		return errors.New("route has no length: all its points are in one place")
	}
	return nil
}

// CheckPoint reports a coordinate out of range.
func CheckPoint(p orb.Point) error {
	lng, lat := p[0], p[1]
	if math.IsNaN(lat) || lat < -90 || lat > 90 {
		return fmt.Errorf("latitude %g is out of range (-90 to 90)", lat)
	}
	if math.IsNaN(lng) || lng < -180 || lng > 180 {
		return fmt.Errorf("longitude %g is out of range (-180 to 180)", lng)
	}
	return nil
}

// Length is the route's length in metres along the great circles between its points.
func Length(ls orb.LineString) float64 { return geo.LengthHaversine(ls) }

// GeoJSON returns the route as a GeoJSON LineString.
func GeoJSON(ls orb.LineString) json.RawMessage {
	coords := make([][2]float64, len(ls))
	for i, p := range ls {
		coords[i] = [2]float64{p[0], p[1]}
	}
	b, _ := json.Marshal(struct {
		Type        string       `json:"type"`
		Coordinates [][2]float64 `json:"coordinates"`
	}{"LineString", coords}) // numbers that came from JSON or XML always marshal
	return b
}
