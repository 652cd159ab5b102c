package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Envelope member names of the event, trip and data resources.
const (
	KeySubscription  = "subscription"
	KeySubscriptions = "subscriptions"
	KeyNotification  = "notification"
	KeyNotifications = "notifications"
	KeyTrip          = "trip"
	KeyDataSet       = "dataSet"
	KeySimulation    = "simulation"
)

// Event types and notification periods.
const (
	EventWaypoint = "WAYPOINT"

	PeriodContinuous = "CONTINUOUS"
	PeriodOnetime    = "ONETIME"
)

// Subscription asks the service to POST a notification to PostURL for each waypoint the
// vehicle records (at most one per MinimumTime minutes).
type Subscription struct {
	ID                 int64             `json:"id"`
	Type               string            `json:"_type"`
	CreationTimestamp  DateTime          `json:"creationTimestamp"`
	DeletionTimestamp  *DateTime         `json:"deletionTimestamp"`
	MinimumTime        int               `json:"minimumTime"`
	CreatorClientID    string            `json:"creatorClientId"`
	VehicleID          int64             `json:"vehicleId"`
	PostURL            string            `json:"postUrl"`
	PostHeaders        map[string]string `json:"postHeaders"`
	NotificationPeriod string            `json:"notificationPeriod"`
	// SigningSecret keys the Standard Webhooks signature of every notification (whsec_...).
	SigningSecret string `json:"signingSecret"`
}

// SubscriptionInput is the body of POST /vehicle/{id}/eventSubscription/{type}/.
type SubscriptionInput struct {
	MinimumTime        Optional[int]               `json:"minimumTime,omitzero"`
	PostURL            Optional[string]            `json:"postUrl,omitzero"`
	PostHeaders        Optional[map[string]string] `json:"postHeaders,omitzero"`
	NotificationPeriod Optional[string]            `json:"notificationPeriod,omitzero"`
}

// Notification is one waypoint event sent, or to be sent, to a subscription's postUrl. The
// receiver gets NotificationBody; the history adds the delivery outcome.
type Notification struct {
	NotificationBody
	// Status is PENDING (delivery under way or scheduled), DELIVERED or FAILED (given up).
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	// NextAttemptTimestamp is when the next try is due; null once delivered or given up.
	NextAttemptTimestamp *DateTime `json:"nextAttemptTimestamp"`
	DeliveredTimestamp   *DateTime `json:"deliveredTimestamp"`
	// LastError says why the last attempt failed, when it did.
	LastError        *string           `json:"lastError"`
	Test             bool              `json:"test,omitempty"`
	DeliveryAttempts []DeliveryAttempt `json:"deliveryAttempts,omitempty"`
}

// Notification delivery states.
const (
	StatusPending   = "PENDING"
	StatusDelivered = "DELIVERED"
	StatusFailed    = "FAILED"
)

// NotificationBody is exactly what a receiver is sent.
type NotificationBody struct {
	ID                 int64    `json:"id"`
	SubscriptionID     int64    `json:"subscriptionId"`
	Domain             string   `json:"_domain"`
	Type               string   `json:"_type"`
	Name               string   `json:"_name"`
	Timestamp          DateTime `json:"_timestamp"`
	MinimumTime        int      `json:"minimumTime"`
	NotificationPeriod string   `json:"notificationPeriod"`
	CreatorClientID    string   `json:"creatorClientId"`
	AccountID          int64    `json:"accountId"`
	VehicleID          int64    `json:"vehicleId"`
	TripID             *int64   `json:"tripId"`
	DataSetID          *int64   `json:"dataSetId"`
	// HTTPStatusCode is the receiver's last answer in the history; 0 in what is sent.
	HTTPStatusCode   int      `json:"httpStatusCode"`
	RecordedWaypoint Waypoint `json:"recordedWaypoint"`
}

// DeliveryAttempt is one try at delivering a notification.
type DeliveryAttempt struct {
	Timestamp      DateTime `json:"timestamp"`
	URL            string   `json:"url"`
	HTTPStatusCode int      `json:"httpStatusCode"`
	Error          *string  `json:"error"`
	DurationMillis int64    `json:"durationMillis"`
}

// Trip is a vehicle's activity between ignition on and ignition off.
type Trip struct {
	ID            int64     `json:"id"`
	VehicleID     int64     `json:"vehicleId"`
	StartTime     DateTime  `json:"startTime"`
	EndTime       *DateTime `json:"endTime"`
	Mileage       *float64  `json:"mileage"` // miles
	StartWaypoint *Waypoint `json:"startWaypoint"`
	EndWaypoint   *Waypoint `json:"endWaypoint"`
	Data          []DataSet `json:"data,omitempty"`
}

// Ignition states of a data set.
const (
	IgnitionOn      = "ON"
	IgnitionRunning = "RUNNING"
	IgnitionOff     = "OFF"
)

// Data keys the service acts on. Others are stored as they come.
const (
	KeyWaypoint    = "GEN_WAYPOINT"     // "lat,lng"
	KeySpeed       = "GEN_SPEED"        // mph
	KeyHeading     = "GEN_HEADING"      // degrees clockwise from north
	KeyVoltage     = "GEN_VOLTAGE"      // volts
	KeyRPM         = "GEN_RPM"          // revolutions per minute
	KeyTripMileage = "GEN_TRIP_MILEAGE" // miles since ignition on
	KeyOdometer    = "GEN_ODOMETER"     // miles
)

// DataSet is what a device reports at one moment.
type DataSet struct {
	ID             int64    `json:"id"`
	VehicleID      int64    `json:"vehicleId"`
	TripID         *int64   `json:"tripId"`
	Timestamp      DateTime `json:"timestamp"`
	IgnitionStatus string   `json:"ignitionStatus"`
	Datum          []Datum  `json:"datum"`
}

// Datum is one reading of a data set.
type Datum struct {
	Timestamp DateTime   `json:"timestamp"`
	Key       string     `json:"key"`
	Value     DatumValue `json:"value"`
}

// DataSetInput is the body of POST /vehicle/{id}/dataSet/.
type DataSetInput struct {
	Timestamp      Optional[DateTime] `json:"timestamp,omitzero"`
	IgnitionStatus Optional[string]   `json:"ignitionStatus,omitzero"`
	Datum          Optional[[]Datum]  `json:"datum,omitzero"`
}

// DatumValue is a reading's value. Devices send strings ("28.03,-82.58", "13.6") and
// sometimes bare numbers (a heading of 323); both are kept as the string form.
type DatumValue string

// MarshalJSON writes the string form.
func (v DatumValue) MarshalJSON() ([]byte, error) { return json.Marshal(string(v)) }

// UnmarshalJSON accepts a string or a number.
func (v *DatumValue) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = DatumValue(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return &json.UnmarshalTypeError{Value: "non-string", Type: reflect.TypeFor[DatumValue]()}
	}
	*v = DatumValue(n.String())
	return nil
}

// Float reads the value as a number.
func (v DatumValue) Float() (float64, error) { return strconv.ParseFloat(string(v), 64) }

// Waypoint reads a GEN_WAYPOINT value, "lat,lng".
func (v DatumValue) Waypoint() (lat, lng float64, err error) {
	latS, lngS, ok := strings.Cut(string(v), ",")
	if !ok {
		return 0, 0, fmt.Errorf("waypoint %q is not \"latitude,longitude\"", string(v))
	}
	if lat, err = strconv.ParseFloat(strings.TrimSpace(latS), 64); err != nil {
		return 0, 0, fmt.Errorf("waypoint %q has a bad latitude", string(v))
	}
	if lng, err = strconv.ParseFloat(strings.TrimSpace(lngS), 64); err != nil {
		return 0, 0, fmt.Errorf("waypoint %q has a bad longitude", string(v))
	}
	if lat < -90 || lat > 90 || lng < -180 || lng > 180 {
		return 0, 0, fmt.Errorf("waypoint %q is out of range", string(v))
	}
	return lat, lng, nil
}

// WaypointValue formats a GEN_WAYPOINT value.
func WaypointValue(lat, lng float64) DatumValue {
	return DatumValue(strconv.FormatFloat(lat, 'f', 6, 64) + "," + strconv.FormatFloat(lng, 'f', 6, 64))
}

// Simulation is a trip the sandbox's traffic simulator drives.
type Simulation struct {
	ID        int64  `json:"id"`
	VehicleID int64  `json:"vehicleId"`
	Status    string `json:"status"` // RUNNING, COMPLETED, CANCELLED, FAILED
	// TripID is the trip the simulated drive opened.
	TripID         *int64    `json:"tripId"`
	SpeedMph       float64   `json:"speed"`
	IntervalSecs   float64   `json:"interval"`
	TimeScale      float64   `json:"timeScale"`
	DistanceMiles  float64   `json:"distance"`
	DrivenMiles    float64   `json:"driven"`
	PointsTotal    int       `json:"pointsTotal"`
	PointsSent     int       `json:"pointsSent"`
	StartTimestamp DateTime  `json:"startTimestamp"`
	EndTimestamp   *DateTime `json:"endTimestamp"`
	LastWaypoint   *Waypoint `json:"lastWaypoint"`
	Error          *string   `json:"error"`
}

// Simulation states.
const (
	SimRunning   = "RUNNING"
	SimCompleted = "COMPLETED"
	SimCancelled = "CANCELLED"
	SimFailed    = "FAILED"
)

// Point is a position in a route, for the simulator.
type Point struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
}

// SimulationInput is the body of POST /simulator/trip/. A route is From and To (a straight
// drive), or Route: a GeoJSON LineString or a list of points to follow.
type SimulationInput struct {
	VehicleID Optional[int64]           `json:"vehicleId,omitzero"`
	From      Optional[Point]           `json:"from,omitzero"`
	To        Optional[Point]           `json:"to,omitzero"`
	Route     Optional[json.RawMessage] `json:"route,omitzero"`
	// Speed is the cruising speed in mph (default 30).
	Speed Optional[float64] `json:"speed,omitzero"`
	// Interval is the reporting interval in simulated seconds (default 10).
	Interval Optional[float64] `json:"interval,omitzero"`
	// TimeScale is simulated seconds per real second (default 1): 60 plays a 20-minute
	// trip in 20 seconds.
	TimeScale Optional[float64] `json:"timeScale,omitzero"`
}
