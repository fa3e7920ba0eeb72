package main

import (
	"context"
	"errors"
	"testing"
)

func TestCheckLoopbackURL(t *testing.T) {
	for _, ok := range []string{"https://127.0.0.1:6443", "https://127.9.9.9", "https://[::1]:443", "https://localhost:1"} {
		if err := checkLoopbackURL(ok); err != nil {
			t.Errorf("checkLoopbackURL(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"https://10.0.0.1:6443", "https://192.168.1.2", "https://example.com", "https://0.0.0.0:6443", "https://[::]:1"} {
		if err := checkLoopbackURL(bad); !errors.Is(err, errNotLoopback) {
			t.Errorf("checkLoopbackURL(%q) = %v, want errNotLoopback", bad, err)
		}
	}
}

func TestLoopbackDialRefusesOtherAddresses(t *testing.T) {
	// An IP literal resolves without any lookup, so this sends nothing.
	_, err := loopbackDial(context.Background(), "tcp", "192.0.2.1:443")
	if !errors.Is(err, errNotLoopback) {
		t.Fatalf("loopbackDial to a non-loopback address: %v, want errNotLoopback", err)
	}
}
