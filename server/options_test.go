package server

import (
	"strings"
	"testing"
	"time"
)

// New refuses negative limits, naming them, rather than taking the
// defaults in their place.
func TestNewRefusesNegativeOptions(t *testing.T) {
	_, err := New(Options{Token: "x", MaxSessions: -1, IdleTimeout: -5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "MaxSessions, IdleTimeout") {
		t.Errorf("New with negative MaxSessions and IdleTimeout: error %v, want one naming both", err)
	}
}
