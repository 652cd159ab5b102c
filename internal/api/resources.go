// Package api holds the wire types of the connected-vehicle service: resources, envelopes,
// DateTime, error bodies and OAuth messages. The server writes them and the client reads
// them; this is their one definition.
package api

// Account is one account, as the service returns it. The password is write-only and so is
// not here; AccessToken appears only in the response that creates the account.
type Account struct {
	ID               int64            `json:"id"`
	FirstName        string           `json:"firstName"`
	LastName         string           `json:"lastName"`
	DateCreated      DateTime         `json:"dateCreated"`
	Zipcode          string           `json:"zipcode"`
	Email            *string          `json:"email"`
	Phone            *string          `json:"phone"`
	TimeZone         string           `json:"timeZone"`
	PreferredContact string           `json:"preferredContact"`
	Username         string           `json:"username"`
	AccessToken      *AccountCodeInfo `json:"accessToken,omitempty"`
}

// AccountCodeInfo carries the authorization code of a newly created account.
type AccountCodeInfo struct {
	Code string `json:"code"`
}

// AccountInput is the body of POST /account/ (create) and POST /account/{id} (update).
// Members absent from an update stay unchanged.
type AccountInput struct {
	FirstName        Optional[string] `json:"firstName,omitzero"`
	LastName         Optional[string] `json:"lastName,omitzero"`
	Zipcode          Optional[string] `json:"zipcode,omitzero"`
	Email            Optional[string] `json:"email,omitzero"`
	Phone            Optional[string] `json:"phone,omitzero"`
	TimeZone         Optional[string] `json:"timeZone,omitzero"`
	PreferredContact Optional[string] `json:"preferredContact,omitzero"`
	Username         Optional[string] `json:"username,omitzero"`
	Password         Optional[string] `json:"password,omitzero"`
}

// Preferred contact values.
const (
	ContactPhone = "PHONE"
	ContactEmail = "EMAIL"
)

// UnidentifiedVehicle is the name of a vehicle whose VIN does not decode.
const UnidentifiedVehicle = "Unidentified Vehicle"

// Vehicle is one vehicle, as the service returns it.
type Vehicle struct {
	Name                 string    `json:"name"`
	VehicleID            int64     `json:"vehicleId"`
	DeviceID             *string   `json:"deviceId"`
	VIN                  *string   `json:"vin"`
	Label                *string   `json:"label"`
	AutoAssignDevice     bool      `json:"autoAssignDevice"`
	Mileage              *int64    `json:"mileage"`
	LastWaypoint         *Waypoint `json:"lastWaypoint"`
	Running              bool      `json:"running"`
	LastRunningTimestamp *DateTime `json:"lastRunningTimestamp"`
	Year                 *string   `json:"year"`
	Make                 *string   `json:"make"`
	Model                *string   `json:"model"`
}

// VehicleInput is the body of POST /vehicle/ (create) and POST /vehicle/{id} (update).
type VehicleInput struct {
	DeviceID         Optional[string] `json:"deviceId,omitzero"`
	VIN              Optional[string] `json:"vin,omitzero"`
	Label            Optional[string] `json:"label,omitzero"`
	AutoAssignDevice Optional[bool]   `json:"autoAssignDevice,omitzero"`
	Mileage          Optional[int64]  `json:"mileage,omitzero"`
}

// Waypoint is a recorded location.
type Waypoint struct {
	Timestamp DateTime `json:"timestamp"`
	Latitude  float64  `json:"latitude"`
	Longitude float64  `json:"longitude"`
}
