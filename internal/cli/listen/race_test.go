//go:build race

package listen

// raceEnabled: the race detector slows everything several times, so the intake test checks
// that nothing is lost but not the rate.
const raceEnabled = true
