//go:build !race

package listen

const raceEnabled = false
