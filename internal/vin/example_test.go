package vin_test

import (
	"fmt"

	"github.com/connected-vehicle/vcs/internal/vin"
)

func ExampleName() {
	v := vin.Normalize(" 1j4fy29p7xp442798 ")
	fmt.Println(vin.Validate(v))
	fmt.Println(vin.Name(v))
	fmt.Println(vin.Name("1J4FY29P8XP442798")) // wrong check digit
	// Output:
	// <nil>
	// 1999 Jeep
	// Unidentified Vehicle
}
