// Package vin validates and decodes vehicle identification numbers
// (ISO 3779, 49 CFR 565) far enough to name a vehicle: model year and make.
//
// The model year comes from position 10. Its code repeats every 30 years, so
// position 7 picks the cycle: a digit means 1980–2009, a letter 2010–2039.
// 49 CFR 565.15 only requires that for North American passenger cars, MPVs
// and light trucks; this package applies it to every VIN anyway, because the
// service needs one answer and its fleet is mostly North American. For other
// VINs (heavy trucks, many European ones) the year may be off by 30.
//
// The make comes from the World Manufacturer Identifier (positions 1–3) via the
// embedded wmi.tsv table.
package vin

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// unidentified is the display name for a VIN that does not decode.
const unidentified = "Unidentified Vehicle"

// validationError is a constant, comparable error: no mutable package state.
type validationError string

func (e validationError) Error() string { return string(e) }

const (
	errLength validationError = "vin must be 17 characters"
	errIOQ    validationError = "vin must not contain I, O or Q"
	errChar   validationError = "vin must contain only letters A-Z and digits"
)

// Normalize upper-cases and trims s.
func Normalize(s string) string {
	return strings.ToUpper(strings.TrimSpace(s))
}

// Validate reports why s (already normalized) is not a well-formed VIN: not 17
// characters, or a character outside 0-9 A-Z minus I, O, Q. It returns nil when
// s is well-formed; it does not check the check digit or the model year.
func Validate(s string) error {
	// Count runes, not bytes, so "17 characters" is true of what the user typed.
	if utf8.RuneCountInString(s) != 17 {
		return errLength
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == 'I' || c == 'O' || c == 'Q':
			return errIOQ
		case !isVINChar(c):
			return errChar
		}
	}
	return nil
}

// Decoded is what a VIN tells about a vehicle.
type Decoded struct {
	Year  int    // model year, e.g. 1999
	Make  string // e.g. "Jeep"
	Model string // "" when unknown (the WMI table does not give models)
}

// Decode returns what the VIN s (already normalized) tells, and false when s
// is not well-formed, its check digit (position 9) is wrong, its model-year
// code (position 10) is not one, or its WMI is not in the table.
func Decode(s string) (Decoded, bool) {
	if Validate(s) != nil || s[8] != checkDigit(s) {
		return Decoded{}, false
	}
	year, ok := modelYear(s)
	if !ok {
		return Decoded{}, false
	}
	mk, ok := lookupMake(s)
	if !ok {
		return Decoded{}, false
	}
	return Decoded{Year: year, Make: mk}, true
}

// Name returns the service's display name for the VIN s (already normalized):
// "<year> <make>" (plus " <model>" when known) when s decodes, and
// "Unidentified Vehicle" otherwise.
func Name(s string) string {
	d, ok := Decode(s)
	if !ok {
		return unidentified
	}
	name := strconv.Itoa(d.Year) + " " + d.Make
	if d.Model != "" {
		name += " " + d.Model
	}
	return name
}

// isVINChar reports whether c may appear in a VIN: 0-9 and A-Z except I, O, Q
// (left out so they are not mistaken for 1 and 0).
func isVINChar(c byte) bool {
	_, ok := transliterate(c)
	return ok
}

// transliterate gives the ISO 3779 value of a VIN character: digits are
// themselves, letters A=1 … H=8, J=1 … N=5, P=7, R=9, S=2 … Z=9.
func transliterate(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c >= 'A' && c <= 'H':
		return int(c-'A') + 1, true
	case c >= 'J' && c <= 'N':
		return int(c-'J') + 1, true
	case c == 'P':
		return 7, true
	case c == 'R':
		return 9, true
	case c >= 'S' && c <= 'Z':
		return int(c-'S') + 2, true
	}
	return 0, false
}

// checkDigit computes position 9 of the well-formed VIN s: the weighted sum of
// the transliterated characters modulo 11, with 10 written as 'X'. Position 9
// itself has weight 0, so its current value does not matter.
func checkDigit(s string) byte {
	weights := [17]int{8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2}
	sum := 0
	for i, w := range weights {
		v, _ := transliterate(s[i])
		sum += v * w
	}
	r := sum % 11
	if r == 10 {
		return 'X'
	}
	return byte('0' + r)
}

// yearCodes lists the position-10 codes in order, 30 per cycle: A=1980 (or
// 2010) … Y=2000 (2030), 1=2001 (2031) … 9=2009 (2039). 0, U and Z (and the
// always-invalid I, O, Q) are not year codes.
const yearCodes = "ABCDEFGHJKLMNPRSTVWXY123456789"

// modelYear decodes position 10 of the well-formed VIN s, using position 7 to
// choose the 30-year cycle (see the package comment).
func modelYear(s string) (int, bool) {
	i := strings.IndexByte(yearCodes, s[9])
	if i < 0 {
		return 0, false
	}
	year := 1980 + i
	if c := s[6]; c < '0' || c > '9' {
		year += 30
	}
	return year, true
}
