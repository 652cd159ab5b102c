// Package password hashes account passwords with bcrypt.
package password

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// MaxLen is bcrypt's input limit; longer passwords are refused rather than cut short.
const MaxLen = 72

// DefaultCost is the work factor for new hashes.
const DefaultCost = bcrypt.DefaultCost

// Hash returns the bcrypt hash of pw at cost (DefaultCost when 0).
func Hash(pw string, cost int) (string, error) {
	if cost == 0 {
		cost = DefaultCost
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// Check reports whether pw matches hash. An empty hash (no such account) still costs one
// comparison, so that a wrong username takes as long as a wrong password.
func Check(hash, pw string) bool {
	if hash == "" {
		hash = dummyHash()
	}
	err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw))
	return err == nil && hash != dummyHash()
}

var dummyHash = sync.OnceValue(func() string {
	h, err := bcrypt.GenerateFromPassword([]byte("no account has this password"), DefaultCost)
	if err != nil {
		panic(errors.Join(errors.New("password: dummy hash"), err))
	}
	return string(h)
})
