package vin

import (
	"strconv"
	"strings"
	"testing"
)

// specValue is the ISO 3779 / 49 CFR 565 transliteration table written out
// as in the standard, so the tests do not trust the code under test.
var specValue = map[byte]int{
	'A': 1, 'B': 2, 'C': 3, 'D': 4, 'E': 5, 'F': 6, 'G': 7, 'H': 8,
	'J': 1, 'K': 2, 'L': 3, 'M': 4, 'N': 5, 'P': 7, 'R': 9,
	'S': 2, 'T': 3, 'U': 4, 'V': 5, 'W': 6, 'X': 7, 'Y': 8, 'Z': 9,
	'0': 0, '1': 1, '2': 2, '3': 3, '4': 4, '5': 5, '6': 6, '7': 7, '8': 8, '9': 9,
}

var specWeights = [17]int{8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2}

// specCheckDigit computes position 9 of a 17-character VIN from the spec tables.
func specCheckDigit(t *testing.T, v string) byte {
	t.Helper()
	if len(v) != 17 {
		t.Fatalf("specCheckDigit(%q): not 17 characters", v)
	}
	sum := 0
	for i := range 17 {
		val, ok := specValue[v[i]]
		if !ok {
			t.Fatalf("specCheckDigit(%q): bad character %q", v, v[i])
		}
		sum += val * specWeights[i]
	}
	if r := sum % 11; r < 10 {
		return byte('0' + r)
	}
	return 'X'
}

// withCheckDigit returns v with a correct check digit in position 9, so
// tests can build decodable VINs around one varying position.
func withCheckDigit(t *testing.T, v string) string {
	t.Helper()
	b := []byte(v)
	b[8] = specCheckDigit(t, v)
	return string(b)
}

// The product's demo vehicles. Their check digits are verified below rather
// than assumed.
var demo = []struct {
	vin  string
	year int
	make string
}{
	{"1J4FY29P7XP442798", 1999, "Jeep"},
	{"1G1YY22G2Y5108919", 2000, "Chevrolet"},
	{"JF2GPAKC5D2889395", 2013, "Subaru"},
}

func TestDemoCheckDigits(t *testing.T) {
	for _, d := range demo {
		if got, want := d.vin[8], specCheckDigit(t, d.vin); got != want {
			t.Errorf("%s: check digit is %q, the spec computes %q", d.vin, got, want)
		}
	}
}

func TestDecode(t *testing.T) {
	const unknownWMI = "ZZZ" // asserted absent from the table below
	if _, ok := wmiTable()[unknownWMI]; ok {
		t.Fatalf("test assumes %s is not in wmi.tsv", unknownWMI)
	}

	tests := []struct {
		name   string
		vin    string
		want   Decoded
		wantOK bool
	}{
		{"demo Jeep", demo[0].vin, Decoded{Year: 1999, Make: "Jeep"}, true},
		{"demo Chevrolet", demo[1].vin, Decoded{Year: 2000, Make: "Chevrolet"}, true},
		{"demo Subaru", demo[2].vin, Decoded{Year: 2013, Make: "Subaru"}, true},
		{"bad check digit", "1J4FY29P8XP442798", Decoded{}, false},
		// The standard's worked example, whose check digit is X.
		{"check digit X", "1M8GDM9AXKP042788", Decoded{Year: 1989, Make: "MCI"}, true},
		{"check digit X expected, 0 given", "1M8GDM9A0KP042788", Decoded{}, false},
		{"16 characters", "1J4FY29P7XP44279", Decoded{}, false},
		{"18 characters", "1J4FY29P7XP4427981", Decoded{}, false},
		{"empty", "", Decoded{}, false},
		{"contains I", "1J4FY29P7XP44279I", Decoded{}, false},
		{"contains O", "1J4FY29P7XP4427O8", Decoded{}, false},
		{"contains Q", "1J4FY29P7XP442Q98", Decoded{}, false},
		{"lower case is not normalized", strings.ToLower(demo[0].vin), Decoded{}, false},
		{"surrounding space is not normalized", " " + demo[0].vin, Decoded{}, false},
		{"unknown WMI", withCheckDigit(t, unknownWMI+"FY29P0XP442798"), Decoded{}, false},
		{"year code 0", withCheckDigit(t, "1G1YY22G005108919"), Decoded{}, false},
		{"year code U", withCheckDigit(t, "1G1YY22G0U5108919"), Decoded{}, false},
		{"year code Z", withCheckDigit(t, "1G1YY22G0Z5108919"), Decoded{}, false},
		// JT is a whole-prefix entry (Toyota); JTH overrides it (Lexus).
		{"prefix entry", withCheckDigit(t, "JTDKN3DU0A0123456"), Decoded{Year: 2010, Make: "Toyota"}, true},
		{"longest match wins", withCheckDigit(t, "JTHBK1GG0E2123456"), Decoded{Year: 2014, Make: "Lexus"}, true},
		// A '9' in position 3 is a small manufacturer, not whoever owns "JT".
		{"small manufacturer", withCheckDigit(t, "JT9AB12C0E2123456"), Decoded{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Decode(tt.vin)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Decode(%q) = %+v, %v; want %+v, %v", tt.vin, got, ok, tt.want, tt.wantOK)
			}
			wantName := "Unidentified Vehicle"
			if tt.wantOK {
				wantName = strconv.Itoa(tt.want.Year) + " " + tt.want.Make
			}
			if name := Name(tt.vin); name != wantName {
				t.Errorf("Name(%q) = %q, want %q", tt.vin, name, wantName)
			}
		})
	}
}

func TestNameDemo(t *testing.T) {
	want := []string{"1999 Jeep", "2000 Chevrolet", "2013 Subaru"}
	for i, d := range demo {
		if got := Name(d.vin); got != want[i] {
			t.Errorf("Name(%q) = %q, want %q", d.vin, got, want[i])
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1j4fy29p7xp442798", "1J4FY29P7XP442798"},
		{"  jf2gpakc5d2889395\t\n", "JF2GPAKC5D2889395"},
		{"1G1YY22G2Y5108919", "1G1YY22G2Y5108919"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// The service's path: user input → Normalize → Name.
	if got := Name(Normalize(" 1j4fy29p7xp442798 ")); got != "1999 Jeep" {
		t.Errorf("Name(Normalize(lower-case demo VIN)) = %q, want %q", got, "1999 Jeep")
	}
}

func TestValidate(t *testing.T) {
	const (
		length = "vin must be 17 characters"
		ioq    = "vin must not contain I, O or Q"
		chars  = "vin must contain only letters A-Z and digits"
	)
	tests := []struct {
		in   string
		want string // "" means nil
	}{
		{"1J4FY29P7XP442798", ""},
		{"1J4FY29P8XP442798", ""}, // well-formed; the check digit is Decode's business
		{"", length},
		{"1J4FY29P7XP44279", length},
		{"1J4FY29P7XP4427981", length},
		{"1J4FY29P7XP44279I", ioq},
		{"OJ4FY29P7XP442798", ioq},
		{"1J4FY29P7XPQ42798", ioq},
		{"1J4FY29P7XP44279-", chars},
		{"1J4FY29P7XP44279 ", chars},
		{"1j4FY29P7XP442798", chars},
		{"1J4FY29P7XP44279É", chars}, // 17 characters, 18 bytes
	}
	for _, tt := range tests {
		err := Validate(tt.in)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Validate(%q) = %q, want nil", tt.in, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("Validate(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestModelYear(t *testing.T) {
	// Position 7 of the base VIN is set to a digit or a letter to pick the cycle.
	const base = "1G1YY22G0Y5108919"
	at := func(pos7, pos10 byte) string {
		b := []byte(base)
		b[6], b[9] = pos7, pos10
		return withCheckDigit(t, string(b))
	}
	tests := []struct {
		pos7, pos10 byte
		want        int // 0: not decodable
	}{
		{'2', 'A', 1980}, {'K', 'A', 2010},
		{'2', 'H', 1987}, {'K', 'H', 2017},
		{'2', 'J', 1988}, {'K', 'J', 2018}, // I is skipped
		{'2', 'P', 1993}, {'K', 'P', 2023}, // O is skipped
		{'2', 'R', 1994}, {'K', 'R', 2024}, // Q is skipped
		{'2', 'V', 1997}, {'K', 'V', 2027}, // U is skipped
		{'2', 'X', 1999}, {'K', 'X', 2029},
		{'2', 'Y', 2000}, {'K', 'Y', 2030},
		{'2', '1', 2001}, {'K', '1', 2031},
		{'0', '5', 2005}, {'Z', '5', 2035},
		{'9', '9', 2009}, {'A', '9', 2039},
		{'2', '0', 0}, {'K', '0', 0},
		{'2', 'U', 0}, {'K', 'U', 0},
		{'2', 'Z', 0}, {'K', 'Z', 0},
	}
	for _, tt := range tests {
		v := at(tt.pos7, tt.pos10)
		got, ok := Decode(v)
		if tt.want == 0 {
			if ok {
				t.Errorf("Decode(%s) = %+v, want not decodable (position 10 %q)", v, got, tt.pos10)
			}
			continue
		}
		if !ok || got.Year != tt.want {
			t.Errorf("Decode(%s) year = %d, %v; want %d (position 7 %q, position 10 %q)",
				v, got.Year, ok, tt.want, tt.pos7, tt.pos10)
		}
	}

	// Every code, in order, in both cycles: 30 consecutive years each.
	const codes = "ABCDEFGHJKLMNPRSTVWXY123456789"
	for i := range len(codes) {
		for _, c := range []struct {
			pos7 byte
			from int
		}{{'2', 1980}, {'K', 2010}} {
			v := at(c.pos7, codes[i])
			if got, ok := Decode(v); !ok || got.Year != c.from+i {
				t.Errorf("Decode(%s) year = %d, %v; want %d", v, got.Year, ok, c.from+i)
			}
		}
	}
}

func TestWMITable(t *testing.T) {
	table, err := parseTable(wmiTSV)
	if err != nil {
		t.Fatalf("wmi.tsv: %v", err)
	}

	// Check each row again without parseTable, so a lenient parser can't hide
	// a bad row or a duplicate.
	seen := map[string]int{}
	rows := 0
	for n, line := range strings.Split(wmiTSV, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		rows++
		fields := strings.Split(line, "\t")
		if len(fields) != 2 || fields[1] == "" {
			t.Errorf("line %d: %q is not WMI<TAB>Make", n+1, line)
			continue
		}
		wmi := fields[0]
		if len(wmi) != 2 && len(wmi) != 3 {
			t.Errorf("line %d: WMI %q is not 2 or 3 characters", n+1, wmi)
		}
		for i := range len(wmi) {
			if _, ok := specValue[wmi[i]]; !ok || wmi[i] == 'I' || wmi[i] == 'O' || wmi[i] == 'Q' {
				t.Errorf("line %d: WMI %q has %q, which a VIN cannot contain", n+1, wmi, wmi[i])
			}
		}
		if prev, dup := seen[wmi]; dup {
			t.Errorf("line %d: WMI %q already on line %d", n+1, wmi, prev)
		}
		seen[wmi] = n + 1
	}
	if len(table) != rows {
		t.Errorf("parseTable kept %d of %d rows", len(table), rows)
	}
	if rows < 300 {
		t.Errorf("wmi.tsv has %d entries; want broad coverage (300+)", rows)
	}

	// The table must name the common makes the way people write them.
	makes := map[string]bool{}
	for _, m := range table {
		makes[m] = true
	}
	for _, m := range []string{
		"Chevrolet", "Ford", "Toyota", "Mercedes-Benz", "BMW", "Volkswagen",
		"Honda", "Subaru", "Jeep", "Dodge", "Tesla", "Nissan", "Hyundai", "Kia",
		"Audi", "Porsche", "Lexus", "Acura", "GMC", "Cadillac", "Volvo", "Mazda",
	} {
		if !makes[m] {
			t.Errorf("no WMI maps to %q", m)
		}
	}
}

func TestParseTableRejects(t *testing.T) {
	for _, bad := range []string{
		"1G1\tChevrolet\n1G1\tChevrolet\n", // duplicate
		"1G1 Chevrolet\n",                  // no tab
		"1G1\tChevrolet\tCar\n",            // extra field
		"1GI\tChevrolet\n",                 // I cannot appear in a VIN
		"1g1\tChevrolet\n",                 // lower case
		"1\tChevrolet\n",                   // too short
		"1G1Y\tChevrolet\n",                // too long
		"1G9\tChevrolet\n",                 // small-manufacturer code
		"1G1\t\n",                          // no make
		"1G1\t Chevrolet\n",                // padded make
	} {
		if _, err := parseTable(bad); err == nil {
			t.Errorf("parseTable(%q) = nil error, want one", bad)
		}
	}
	got, err := parseTable("# comment\n\nJT\tToyota\r\nJTH\tLexus\n")
	if err != nil || len(got) != 2 || got["JT"] != "Toyota" || got["JTH"] != "Lexus" {
		t.Errorf("parseTable(good) = %v, %v", got, err)
	}
}

// FuzzDecode checks Decode and Name never panic and agree with Validate.
// Seeds live in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := Decode(s)
		name := Name(s)
		if !ok {
			if d != (Decoded{}) {
				t.Errorf("Decode(%q) = %+v, false; want zero Decoded", s, d)
			}
			if name != "Unidentified Vehicle" {
				t.Errorf("Name(%q) = %q for an undecodable VIN", s, name)
			}
			return
		}
		if err := Validate(s); err != nil {
			t.Errorf("Decode(%q) ok but Validate = %v", s, err)
		}
		if !strings.HasPrefix(name, strconv.Itoa(d.Year)+" ") {
			t.Errorf("Name(%q) = %q does not start with year %d", s, name, d.Year)
		}
		if d.Year < 1980 || d.Year > 2039 || d.Make == "" {
			t.Errorf("Decode(%q) = %+v: year out of range or no make", s, d)
		}
		if Normalize(s) != s {
			t.Errorf("Decode(%q) ok for input that is not normalized", s)
		}
	})
}
