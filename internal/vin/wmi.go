package vin

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
)

// wmiTSV maps World Manufacturer Identifiers to makes; see the file's header.
//
//go:embed wmi.tsv
var wmiTSV string

// wmiTable parses wmiTSV on first use. The data is compiled in, so a parse
// error is a build defect (caught by the tests), not a runtime condition.
var wmiTable = sync.OnceValue(func() map[string]string {
	t, err := parseTable(wmiTSV)
	if err != nil {
		panic("vin: embedded wmi.tsv: " + err.Error())
	}
	return t
})

// lookupMake finds the make for the well-formed VIN s. A 3-character entry
// wins over a 2-character prefix entry.
//
// A '9' in position 3 marks a small manufacturer (under 1,000 vehicles a
// year, 49 CFR 565.15 / ISO 3780) whose identity is in positions 12–14, so
// the prefix of such a VIN says nothing about its make and is not looked up.
func lookupMake(s string) (string, bool) {
	t := wmiTable()
	if mk, ok := t[s[:3]]; ok {
		return mk, true
	}
	if s[2] == '9' {
		return "", false
	}
	mk, ok := t[s[:2]]
	return mk, ok
}

// parseTable reads "WMI<TAB>Make" lines; blank lines and lines starting with
// '#' are skipped. A WMI is 2 (a whole prefix) or 3 VIN characters, and a
// 3-character WMI must not end in '9' (see lookupMake). Duplicates are errors.
func parseTable(data string) (map[string]string, error) {
	t := make(map[string]string, 512)
	for n, line := range strings.Split(data, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		wmi, mk, ok := strings.Cut(line, "\t")
		switch {
		case !ok || strings.Contains(mk, "\t"):
			return nil, fmt.Errorf("line %d: want WMI<TAB>Make, got %q", n+1, line)
		case len(wmi) != 2 && len(wmi) != 3:
			return nil, fmt.Errorf("line %d: WMI %q is not 2 or 3 characters", n+1, wmi)
		case !allVINChars(wmi):
			return nil, fmt.Errorf("line %d: WMI %q has a character a VIN cannot have", n+1, wmi)
		case len(wmi) == 3 && wmi[2] == '9':
			return nil, fmt.Errorf("line %d: WMI %q is a small-manufacturer code shared by many makes", n+1, wmi)
		case mk == "" || strings.TrimSpace(mk) != mk:
			return nil, fmt.Errorf("line %d: make %q is empty or padded", n+1, mk)
		}
		if prev, dup := t[wmi]; dup {
			return nil, fmt.Errorf("line %d: WMI %q listed twice (%q, %q)", n+1, wmi, prev, mk)
		}
		t[wmi] = mk
	}
	return t, nil
}

func allVINChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isVINChar(s[i]) {
			return false
		}
	}
	return true
}
