package vehicle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/connected-vehicle/vcs/internal/api"
	"github.com/connected-vehicle/vcs/internal/cmdutil"
	"github.com/connected-vehicle/vcs/internal/output"
)

// writeFile writes content to a file in a temporary directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestNewCmdCreate(t *testing.T) {
	file := writeFile(t, "van.json", `{"label": "From file", "mileage": 5, "vin": null, "deviceId": "F-1"}`)
	unknown := writeFile(t, "unknown.json", `{"label": "Van", "colour": "red"}`)
	wrongType := writeFile(t, "wrong.json", `{"mileage": "ten"}`)
	tests := []struct {
		name    string
		args    []string
		stdin   string
		want    api.VehicleInput
		wantOut output.Options
		wantErr string
	}{
		{name: "no flags: nothing is sent", want: api.VehicleInput{}},
		{name: "every flag",
			args: []string{"--label", "Van 7", "--vin", "1M8GDM9AXKP042788", "--device-id", "C2015000009", "--mileage", "12000", "--auto-assign-device=false", "-o", "json"},
			want: api.VehicleInput{Label: api.Some("Van 7"), VIN: api.Some("1M8GDM9AXKP042788"), DeviceID: api.Some("C2015000009"),
				Mileage: api.Some[int64](12000), AutoAssignDevice: api.Some(false)},
			wantOut: output.Options{Format: "json"}},
		{name: "empty label is null", args: []string{"--label", ""}, want: api.VehicleInput{Label: api.Null[string]()}},
		{name: "empty vin and device are null", args: []string{"--vin=", "--device-id="},
			want: api.VehicleInput{VIN: api.Null[string](), DeviceID: api.Null[string]()}},
		{name: "zero mileage is sent", args: []string{"--mileage", "0"}, want: api.VehicleInput{Mileage: api.Some[int64](0)}},
		{name: "auto-assign given as its default is sent", args: []string{"--auto-assign-device"}, want: api.VehicleInput{AutoAssignDevice: api.Some(true)}},
		{name: "file", args: []string{"-f", file},
			want: api.VehicleInput{Label: api.Some("From file"), Mileage: api.Some[int64](5), VIN: api.Null[string](), DeviceID: api.Some("F-1")}},
		{name: "flags override the file", args: []string{"--file", file, "--label", "Flag", "--device-id", ""},
			want: api.VehicleInput{Label: api.Some("Flag"), Mileage: api.Some[int64](5), VIN: api.Null[string](), DeviceID: api.Null[string]()}},
		{name: "file from stdin", args: []string{"-f", "-", "--mileage", "7"}, stdin: `{"label": "Piped", "mileage": 1, "autoAssignDevice": false}`,
			want: api.VehicleInput{Label: api.Some("Piped"), Mileage: api.Some[int64](7), AutoAssignDevice: api.Some(false)}},
		{name: "unknown member", args: []string{"-f", unknown}, wantErr: `unknown field "colour"`},
		{name: "unknown member on stdin", args: []string{"-f", "-"}, stdin: `{"vehicleId": 9}`, wantErr: `unknown field "vehicleId"`},
		{name: "wrong type", args: []string{"-f", wrongType}, wantErr: "mileage"},
		{name: "not JSON", args: []string{"-f", "-"}, stdin: "label: Van", wantErr: "standard input"},
		{name: "missing file", args: []string{"-f", filepath.Join(t.TempDir(), "nope.json")}, wantErr: "nope.json"},
		{name: "mileage not a number", args: []string{"--mileage", "lots"}, wantErr: "invalid argument"},
		{name: "bad output", args: []string{"--label", "x", "-o", "xml"}, wantErr: "unknown output format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(t, NewCmdCreate, tt.stdin, tt.args...)
			if tt.wantErr != "" {
				wantUsageError(t, err, tt.wantErr)
				if got != nil {
					t.Errorf("the run function was called with %+v", got.Input)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Input != tt.want {
				t.Errorf("input = %+v\nwant    %+v", got.Input, tt.want)
			}
			wantOut := tt.wantOut
			if wantOut.Format == "" {
				wantOut.Format = "table"
			}
			if got.Output != wantOut {
				t.Errorf("output = %+v, want %+v", got.Output, wantOut)
			}
		})
	}
}

func TestVehicleInputJSON(t *testing.T) {
	// What the flags produce is what goes on the wire: absent members absent, empty ones null.
	got, err := parse(t, NewCmdUpdate, "", "3", "--label", "", "--mileage", "61900")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(got.Input)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"label":null,"mileage":61900}` {
		t.Errorf("body = %s", b)
	}
}

func TestNewCmdUpdate(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		stdin   string
		wantRef string
		want    api.VehicleInput
		wantErr string
	}{
		{name: "mileage", args: []string{"3", "--mileage", "61900"}, wantRef: "3", want: api.VehicleInput{Mileage: api.Some[int64](61900)}},
		{name: "clear label by serial", args: []string{"C2015000003", "--label", ""}, wantRef: "C2015000003", want: api.VehicleInput{Label: api.Null[string]()}},
		{name: "stdin", args: []string{"2", "-f", "-"}, stdin: `{"vin": "1M8GDM9AXKP042788"}`, wantRef: "2", want: api.VehicleInput{VIN: api.Some("1M8GDM9AXKP042788")}},
		{name: "nothing to change", args: []string{"3"}, wantErr: "nothing to change"},
		{name: "empty file changes nothing", args: []string{"3", "-f", "-"}, stdin: "{}", wantErr: "nothing to change"},
		{name: "no vehicle", args: []string{"--label", "x"}, wantErr: "give the vehicle's id or device serial"},
		{name: "two vehicles", args: []string{"1", "2", "--label", "x"}, wantErr: "too many arguments"},
		{name: "unsupported member", args: []string{"1", "-f", "-"}, stdin: `{"dateCreated": "20260101T000000+0000"}`, wantErr: "dateCreated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(t, NewCmdUpdate, tt.stdin, tt.args...)
			if tt.wantErr != "" {
				wantUsageError(t, err, tt.wantErr)
				if got != nil {
					t.Errorf("the run function was called with %+v", got.Input)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Ref != tt.wantRef || got.Input != tt.want {
				t.Errorf("ref %q input %+v\nwant %q %+v", got.Ref, got.Input, tt.wantRef, tt.want)
			}
		})
	}
}

func TestNewCmdDelete(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantRef string
		wantYes bool
		wantErr string
	}{
		{name: "asks", args: []string{"3"}, wantRef: "3"},
		{name: "yes", args: []string{"C2015000003", "--yes"}, wantRef: "C2015000003", wantYes: true},
		{name: "y", args: []string{"-y", "2"}, wantRef: "2", wantYes: true},
		{name: "no vehicle", args: []string{"--yes"}, wantErr: "give the vehicle's id or device serial"},
		{name: "two vehicles", args: []string{"1", "2"}, wantErr: "too many arguments"},
		{name: "no output flags", args: []string{"1", "-o", "json"}, wantErr: "unknown shorthand flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(t, NewCmdDelete, "", tt.args...)
			if tt.wantErr != "" {
				wantUsageError(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Ref != tt.wantRef || got.Yes != tt.wantYes {
				t.Errorf("ref %q yes %v, want %q %v", got.Ref, got.Yes, tt.wantRef, tt.wantYes)
			}
		})
	}
}

func TestCreateUpdateDeleteRoundTrip(t *testing.T) {
	env, c := loggedIn(t, false)
	ctx := context.Background()
	tok := env.DemoToken()

	// create, piped: the vehicle as field/value lines, the news on stderr
	err := createRun(ctx, &CreateOptions{IO: c.IO, APIClient: c.F.APIClient, Output: output.Options{Format: "table"},
		Input: api.VehicleInput{VIN: api.Some("1M8GDM9AXKP042788"), Label: api.Some("Coach"), DeviceID: api.Some("C2015000009"), Mileage: api.Some[int64](12000)}})
	if err != nil {
		t.Fatal(err)
	}
	matchGolden(t, "create.tsv.golden", c.Stdout.String())
	r := env.Do("GET", "/vehicle/C2015000009", tok, nil)
	var body struct {
		Vehicle api.Vehicle `json:"vehicle"`
	}
	r.JSON(t, &body)
	stored := body.Vehicle
	if r.Status != 200 || stored.VehicleID != 4 || *stored.Label != "Coach" || *stored.Mileage != 12000 || *stored.VIN != "1M8GDM9AXKP042788" || !stored.AutoAssignDevice {
		t.Fatalf("stored vehicle: %d %+v", r.Status, stored)
	}
	if want := "Created vehicle 4 (" + stored.Name + ")\n"; c.Stderr.String() != want {
		t.Errorf("stderr = %q, want %q", c.Stderr, want)
	}
	if !strings.Contains(c.Stdout.String(), "vehicleId\t4\n") || !strings.Contains(c.Stdout.String(), "name\t"+stored.Name+"\n") {
		t.Errorf("stdout = %s", c.Stdout)
	}

	// update by device serial: absent members stay, null clears, values replace
	c.Reset()
	err = updateRun(ctx, &UpdateOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "C2015000009", Output: output.Options{Format: "json"},
		Input: api.VehicleInput{Label: api.Null[string](), Mileage: api.Some[int64](13000)}})
	if err != nil {
		t.Fatal(err)
	}
	var updated api.Vehicle
	if err := json.Unmarshal(c.Stdout.Bytes(), &updated); err != nil {
		t.Fatalf("%v in %s", err, c.Stdout)
	}
	if updated.VehicleID != 4 || updated.Label != nil || *updated.Mileage != 13000 || *updated.VIN != "1M8GDM9AXKP042788" || *updated.DeviceID != "C2015000009" {
		t.Errorf("updated = %+v", updated)
	}
	if c.Stderr.Len() != 0 {
		t.Errorf("stderr = %q", c.Stderr)
	}

	// create as JSON: only the object on stdout
	c.Reset()
	err = createRun(ctx, &CreateOptions{IO: c.IO, APIClient: c.F.APIClient, Output: output.Options{Format: "json"}, Input: api.VehicleInput{Label: api.Some("Van 7")}})
	if err != nil {
		t.Fatal(err)
	}
	var created api.Vehicle
	if err := json.Unmarshal(c.Stdout.Bytes(), &created); err != nil {
		t.Fatalf("%v in %s", err, c.Stdout)
	}
	if created.VehicleID != 5 || created.Name != "Unidentified Vehicle" || c.Stderr.Len() != 0 {
		t.Errorf("created %+v, stderr %q", created, c.Stderr)
	}

	// delete by id, with --yes
	c.Reset()
	if err := deleteRun(ctx, &DeleteOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "4", Yes: true}); err != nil {
		t.Fatal(err)
	}
	if c.Stderr.String() != "Deleted vehicle 4\n" || c.Stdout.Len() != 0 {
		t.Errorf("stdout %q stderr %q", c.Stdout, c.Stderr)
	}
	if r := env.Do("GET", "/vehicle/4", tok, nil); r.Status != 404 {
		t.Errorf("deleted vehicle: %d", r.Status)
	}
	err = deleteRun(ctx, &DeleteOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "4", Yes: true})
	if cmdutil.ExitCode(err) != cmdutil.ExitError || err == nil || !strings.Contains(err.Error(), "delete vehicle 4: ") {
		t.Errorf("deleting twice: %v", err)
	}
}

func TestCommandEndToEnd(t *testing.T) {
	// The whole command, flags to service: what `vcs vehicle create ...` runs.
	env, c := loggedIn(t, false)
	cmd := NewCmdVehicle(c.F)
	cmd.SetArgs([]string{"create", "--label", "Van 7", "--mileage", "12000", "--auto-assign-device=false", "-o", "json", "--jq", "[.vehicleId, .label, .mileage, .autoAssignDevice]"})
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "[4,\"Van 7\",12000,false]\n" {
		t.Errorf("stdout = %q", got)
	}
	c.Reset()
	cmd = NewCmdVehicle(c.F)
	cmd.SetArgs([]string{"update", "4", "--label", "", "--jq", ".label"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := c.Stdout.String(); got != "null\n" {
		t.Errorf("stdout = %q", got)
	}
	if len(serviceVehicles(t, env)) != 4 {
		t.Error("the service does not have 4 vehicles")
	}
}

func TestServiceFieldErrors(t *testing.T) {
	env, c := loggedIn(t, false)
	ctx := context.Background()
	tests := []struct {
		name  string
		run   func() error
		wants []string
	}{
		{name: "mileage out of range", wants: []string{"create vehicle: ", "mileage must be between 0 and 10000000"},
			run: func() error {
				return createRun(ctx, &CreateOptions{IO: c.IO, APIClient: c.F.APIClient, Output: output.Options{Format: "table"},
					Input: api.VehicleInput{Mileage: api.Some[int64](-5)}})
			}},
		{name: "two faults at once", wants: []string{"deviceId must be", "; ", "mileage must be"},
			run: func() error {
				return createRun(ctx, &CreateOptions{IO: c.IO, APIClient: c.F.APIClient, Output: output.Options{Format: "table"},
					Input: api.VehicleInput{Mileage: api.Some[int64](-5), DeviceID: api.Some("has a space")}})
			}},
		{name: "device held by a vehicle that keeps it", wants: []string{"update vehicle 2: ", "device C2015000001 is installed in another vehicle"},
			run: func() error {
				if r := env.Do("POST", "/vehicle/1", env.DemoToken(), map[string]any{"autoAssignDevice": false}); r.Status != 200 {
					t.Fatalf("keep device: %d %s", r.Status, r.Body)
				}
				return updateRun(ctx, &UpdateOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: "2", Output: output.Options{Format: "table"},
					Input: api.VehicleInput{DeviceID: api.Some("C2015000001")}})
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.Reset()
			err := tt.run()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			var apiErr *api.Error
			if !errors.As(err, &apiErr) || len(apiErr.FieldErrors) == 0 {
				t.Errorf("error %#v carries no field errors", err)
			}
			if code := cmdutil.ExitCode(err); code != cmdutil.ExitError {
				t.Errorf("exit code %d, want 1", code)
			}
			if c.Stdout.Len() != 0 || c.Stderr.Len() != 0 {
				t.Errorf("printed: stdout %q stderr %q", c.Stdout, c.Stderr)
			}
		})
	}
	if n := len(serviceVehicles(t, env)); n != 3 {
		t.Errorf("%d vehicles after failed requests, want 3", n)
	}
}

func TestDeleteConfirmation(t *testing.T) {
	tests := []struct {
		name                string
		stdinTTY, stdoutTTY bool
		answer              string
		wantDeleted         bool
		wantCode            int
		wantPrompt          bool
		wantErr             string
	}{
		{name: "piped needs --yes", answer: "y\n", wantCode: cmdutil.ExitUsage, wantErr: "--yes"},
		{name: "stdout piped cannot ask", stdinTTY: true, answer: "y\n", wantCode: cmdutil.ExitUsage, wantErr: "--yes"},
		{name: "stdin piped cannot ask", stdoutTTY: true, answer: "y\n", wantCode: cmdutil.ExitUsage, wantErr: "--yes"},
		{name: "tty yes", stdinTTY: true, stdoutTTY: true, answer: "y\n", wantDeleted: true, wantPrompt: true},
		{name: "tty YES", stdinTTY: true, stdoutTTY: true, answer: " YES \n", wantDeleted: true, wantPrompt: true},
		{name: "tty no", stdinTTY: true, stdoutTTY: true, answer: "n\n", wantCode: cmdutil.ExitUsage, wantPrompt: true, wantErr: "cancelled"},
		{name: "tty enter", stdinTTY: true, stdoutTTY: true, answer: "\n", wantCode: cmdutil.ExitUsage, wantPrompt: true, wantErr: "cancelled"},
		{name: "tty end of input", stdinTTY: true, stdoutTTY: true, answer: "", wantCode: cmdutil.ExitUsage, wantPrompt: true, wantErr: "cancelled"},
	}
	env, c := loggedIn(t, false)
	tok := env.DemoToken()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.Reset()
			c.Stdin.Reset()
			c.Stdin.WriteString(tt.answer)
			c.IO.SetStdinTTY(tt.stdinTTY)
			c.IO.SetStdoutTTY(tt.stdoutTTY)
			defer c.IO.SetStdinTTY(false)
			defer c.IO.SetStdoutTTY(false)
			addVehicles(t, env, 1)
			victim := serviceVehicles(t, env)
			ref := strconv.FormatInt(victim[len(victim)-1].VehicleID, 10)

			err := deleteRun(context.Background(), &DeleteOptions{IO: c.IO, APIClient: c.F.APIClient, Ref: ref})
			if code := cmdutil.ExitCode(err); code != tt.wantCode {
				t.Errorf("exit code %d for %v, want %d", code, err, tt.wantCode)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v does not say %q", err, tt.wantErr)
			}
			prompt := "Delete vehicle " + ref + " and everything recorded about it? [y/N] "
			if got := strings.HasPrefix(c.Stderr.String(), prompt); got != tt.wantPrompt {
				t.Errorf("asked %v, want %v: stderr %q", got, tt.wantPrompt, c.Stderr)
			}
			status := env.Do("GET", "/vehicle/"+ref, tok, nil).Status
			if deleted := status == 404; deleted != tt.wantDeleted {
				t.Errorf("deleted = %v (status %d), want %v", deleted, status, tt.wantDeleted)
			}
			if tt.wantDeleted && !strings.HasSuffix(c.Stderr.String(), "Deleted vehicle "+ref+"\n") {
				t.Errorf("stderr = %q", c.Stderr)
			}
		})
	}
}
