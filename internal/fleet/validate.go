package fleet

import (
	"fmt"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zone names must validate on machines without a zoneinfo database
	"unicode/utf8"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/password"
	"github.com/connected-vehicle/vcs/internal/store"
	"github.com/connected-vehicle/vcs/internal/vin"
)

const (
	minPasswordLen = 8
	maxTextLen     = 100
	maxMileage     = 10_000_000
)

var (
	usernamePattern = regexp.MustCompile(`^[A-Za-z0-9._@+-]{3,64}$`)
	zipcodePattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9 -]{1,9}$`)
	phonePattern    = regexp.MustCompile(`^\+?[0-9 ().-]{5,32}$`)
	// Device serials appear as a path segment (/vehicle/{serial}), so no "/" or spaces.
	deviceIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)
)

// textRule checks one string member of a request body.
type textRule struct {
	name     string
	required bool                  // required on create, and never null
	check    func(v string) string // returns the fault's display text, or ""
}

func (r textRule) validate(fe *api.FieldErrors, o api.Optional[string], create bool) {
	switch {
	case !o.Set:
		if create && r.required {
			fe.Add(r.name, api.CodeRequired, "%s is required", r.name)
		}
	case o.Null:
		if r.required {
			fe.Add(r.name, api.CodeRequired, "%s cannot be null", r.name)
		}
	case r.required && strings.TrimSpace(o.Value) == "":
		fe.Add(r.name, api.CodeRequired, "%s cannot be empty", r.name)
	case r.check != nil:
		if msg := r.check(o.Value); msg != "" {
			fe.Add(r.name, api.CodeInvalid, "%s", msg)
		}
	}
}

func maxLen(name string, n int) func(string) string {
	return func(v string) string {
		if utf8.RuneCountInString(strings.TrimSpace(v)) > n {
			return fmt.Sprintf("%s must be at most %d characters", name, n)
		}
		return ""
	}
}

func matches(re *regexp.Regexp, msg string) func(string) string {
	return func(v string) string {
		if !re.MatchString(strings.TrimSpace(v)) {
			return msg
		}
		return ""
	}
}

var accountRules = struct {
	firstName, lastName, zipcode, email, phone, timeZone, preferredContact, username, password textRule
}{
	firstName: textRule{"firstName", true, maxLen("firstName", maxTextLen)},
	lastName:  textRule{"lastName", true, maxLen("lastName", maxTextLen)},
	zipcode:   textRule{"zipcode", true, matches(zipcodePattern, "zipcode must be 2 to 10 letters, digits, spaces or hyphens")},
	email: textRule{"email", false, func(v string) string {
		addr, err := mail.ParseAddress(strings.TrimSpace(v))
		if err != nil || addr.Address != strings.TrimSpace(v) || len(v) > 254 {
			return "email must be an address like name@example.com"
		}
		return ""
	}},
	phone: textRule{"phone", false, matches(phonePattern, "phone must be 5 to 32 digits, spaces and + ( ) . -")},
	timeZone: textRule{"timeZone", true, func(v string) string {
		v = strings.TrimSpace(v)
		if _, err := time.LoadLocation(v); err != nil || v == "" || v == "Local" {
			return "timeZone must be an IANA time zone name such as America/New_York"
		}
		return ""
	}},
	preferredContact: textRule{"preferredContact", true, func(v string) string {
		switch strings.ToUpper(strings.TrimSpace(v)) {
		case api.ContactPhone, api.ContactEmail:
			return ""
		}
		return "preferredContact must be PHONE or EMAIL"
	}},
	username: textRule{"username", true, matches(usernamePattern, "username must be 3 to 64 letters, digits or . _ @ + -")},
	password: textRule{"password", true, func(v string) string {
		if len(v) < minPasswordLen || len(v) > password.MaxLen {
			return fmt.Sprintf("password must be %d to %d bytes long", minPasswordLen, password.MaxLen)
		}
		return ""
	}},
}

// validateAccountInput collects every fault of an account body; create requires the members
// the seed marks Required.
func validateAccountInput(in api.AccountInput, create bool) api.FieldErrors {
	var fe api.FieldErrors
	r := accountRules
	r.firstName.validate(&fe, in.FirstName, create)
	r.lastName.validate(&fe, in.LastName, create)
	r.zipcode.validate(&fe, in.Zipcode, create)
	r.email.validate(&fe, in.Email, create)
	r.phone.validate(&fe, in.Phone, create)
	r.timeZone.validate(&fe, in.TimeZone, create)
	r.preferredContact.validate(&fe, in.PreferredContact, create)
	r.username.validate(&fe, in.Username, create)
	r.password.validate(&fe, in.Password, create)
	return fe
}

// applyAccountInput copies the members present in a validated body into a; the password is
// the caller's to hash.
func applyAccountInput(a *store.Account, in api.AccountInput) {
	setText(&a.FirstName, in.FirstName)
	setText(&a.LastName, in.LastName)
	setText(&a.Zipcode, in.Zipcode)
	setOptionalText(&a.Email, in.Email)
	setOptionalText(&a.Phone, in.Phone)
	setText(&a.TimeZone, in.TimeZone)
	setText(&a.Username, in.Username)
	if in.PreferredContact.Present() {
		a.PreferredContact = strings.ToUpper(strings.TrimSpace(in.PreferredContact.Value))
	}
}

func setText(dst *string, o api.Optional[string]) {
	if o.Present() {
		*dst = strings.TrimSpace(o.Value)
	}
}

func setOptionalText(dst **string, o api.Optional[string]) {
	switch {
	case o.Null:
		*dst = nil
	case o.Set:
		v := strings.TrimSpace(o.Value)
		*dst = &v
	}
}

var vehicleRules = struct{ deviceID, vin, label textRule }{
	deviceID: textRule{"deviceId", false, func(v string) string {
		if !deviceIDPattern.MatchString(v) {
			return "deviceId must be 1 to 64 letters, digits or . _ : -"
		}
		return ""
	}},
	vin: textRule{"vin", false, func(v string) string {
		if err := vin.Validate(vin.Normalize(v)); err != nil {
			return err.Error()
		}
		return ""
	}},
	label: textRule{"label", false, maxLen("label", maxTextLen)},
}

// validateVehicleInput collects every fault of a vehicle body.
func validateVehicleInput(in api.VehicleInput) api.FieldErrors {
	var fe api.FieldErrors
	vehicleRules.deviceID.validate(&fe, in.DeviceID, false)
	vehicleRules.vin.validate(&fe, in.VIN, false)
	vehicleRules.label.validate(&fe, in.Label, false)
	if in.AutoAssignDevice.Null {
		fe.Add("autoAssignDevice", api.CodeInvalid, "autoAssignDevice must be true or false")
	}
	if in.Mileage.Present() && (in.Mileage.Value < 0 || in.Mileage.Value > maxMileage) {
		fe.Add("mileage", api.CodeInvalid, "mileage must be between 0 and %d", maxMileage)
	}
	return fe
}

// applyVehicleInput copies the members present in a validated body into v and derives the
// vehicle's name, year, make and model from its VIN.
func applyVehicleInput(v *store.Vehicle, in api.VehicleInput) {
	setOptionalText(&v.DeviceID, in.DeviceID)
	setOptionalText(&v.Label, in.Label)
	if in.AutoAssignDevice.Present() {
		v.AutoAssignDevice = in.AutoAssignDevice.Value
	}
	switch {
	case in.Mileage.Null:
		v.Mileage = nil
	case in.Mileage.Set:
		m := in.Mileage.Value
		v.Mileage = &m
	}
	switch {
	case in.VIN.Null:
		v.VIN = nil
	case in.VIN.Set:
		n := vin.Normalize(in.VIN.Value)
		v.VIN = &n
	}
	v.Name, v.Year, v.Make, v.Model = api.UnidentifiedVehicle, nil, nil, nil
	if v.VIN != nil {
		if d, ok := vin.Decode(*v.VIN); ok {
			v.Name = vin.Name(*v.VIN)
			year := strconv.Itoa(d.Year)
			v.Year, v.Make = &year, &d.Make
			if d.Model != "" {
				v.Model = &d.Model
			}
		}
	}
}
