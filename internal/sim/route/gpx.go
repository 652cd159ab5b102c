package route

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/paulmach/orb"
)

// ParseFile reads a route file, telling the format from its content: GPX (XML) or any of
// the JSON forms that Parse reads.
func ParseFile(b []byte) (orb.LineString, error) {
	b = bytes.TrimPrefix(b, []byte("\uFEFF")) // a byte order mark some editors write
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return nil, errors.New("the file is empty")
	}
	switch trimmed[0] {
	case '<':
		return ParseGPX(trimmed)
	case '{', '[':
		return Parse(trimmed)
	}
	return nil, errors.New("the file is neither GeoJSON nor GPX")
}

// ParseGPX reads the points of a GPX file: its track points (trkpt) in order, all
// segments and tracks joined, or when it has no track, its route points (rtept). Waypoints
// (wpt) are places, not a path, and are ignored. The file is read as a token stream, so
// GPX 1.0, 1.1 and extensions all read the same.
func ParseGPX(b []byte) (orb.LineString, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	var trk, rte orb.LineString
	root := true
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the GPX file is not valid XML: %w", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root {
			if el.Name.Local != "gpx" {
				return nil, fmt.Errorf("the XML file is not GPX: its root element is <%s>", el.Name.Local)
			}
			root = false
			continue
		}
		var into *orb.LineString
		switch el.Name.Local {
		case "trkpt":
			into = &trk
		case "rtept":
			into = &rte
		default:
			continue
		}
		if len(*into) >= MaxPoints {
			return nil, fmt.Errorf("the GPX file has more than %d %s points; simplify it first", MaxPoints, el.Name.Local)
		}
		p, err := gpxPoint(el, len(*into)+1)
		if err != nil {
			return nil, err
		}
		*into = append(*into, p)
	}
	if root {
		return nil, errors.New("the GPX file has no <gpx> element")
	}
	if len(trk) > 0 {
		return trk, nil
	}
	if len(rte) > 0 {
		return rte, nil
	}
	return nil, errors.New("the GPX file has no track points (trkpt) or route points (rtept)")
}

func gpxPoint(el xml.StartElement, n int) (orb.Point, error) {
	var lat, lon *float64
	for _, a := range el.Attr {
		if a.Name.Local != "lat" && a.Name.Local != "lon" {
			continue
		}
		f, err := strconv.ParseFloat(a.Value, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return orb.Point{}, fmt.Errorf("%s %d: %s=%q is not a number", el.Name.Local, n, a.Name.Local, a.Value)
		}
		if a.Name.Local == "lat" {
			lat = &f
		} else {
			lon = &f
		}
	}
	if lat == nil || lon == nil {
		return orb.Point{}, fmt.Errorf("%s %d: lat and lon are required", el.Name.Local, n)
	}
	return orb.Point{*lon, *lat}, nil
}
