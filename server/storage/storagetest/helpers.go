package storagetest

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apiloom/apiloom/server/storage"
)

// labelPred parses a label selector into a predicate.
func labelPred(t *testing.T, sel string) storage.Predicate {
	t.Helper()
	s, err := labels.Parse(sel)
	if err != nil {
		t.Fatalf("label selector %q: %v", sel, err)
	}
	return storage.Predicate{Label: s}
}

// fieldPred parses a field selector into a predicate.
func fieldPred(t *testing.T, sel string) storage.Predicate {
	t.Helper()
	s, err := fields.ParseSelector(sel)
	if err != nil {
		t.Fatalf("field selector %q: %v", sel, err)
	}
	return storage.Predicate{Field: s}
}

// eventually calls f until it returns nil, failing the test with f's last
// error if that does not happen within eventTimeout.
func eventually(t *testing.T, ctx context.Context, f func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, eventTimeout)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		err := f()
		if err == nil {
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatalf("condition not met within %v: %v", eventTimeout, err)
		}
	}
}
