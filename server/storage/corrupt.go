package storage

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// maxLoggedKeys bounds the memory of which keys and revisions were logged
// as undecodable. Past it the memory starts over, so the bound costs at
// most a repeated log line per corrupt object, never a missed one.
const maxLoggedKeys = 1024

// decodeErrors reports stored values that do not decode. Every read of one
// is counted (apiloom_storage_decode_errors_total, kube-apiserver's
// apiserver_storage_decode_errors_total), so the rate shows how often
// readers meet them. Each key and revision is logged once, however many
// readers meet it: a Get, every list and every watch read the same value,
// and the log names it once for the operator to act on.
type decodeErrors struct {
	// Immutable after newDecodeErrors.
	log     *slog.Logger
	counter prometheus.Counter

	mu     sync.Mutex
	logged map[string]int64 // guarded by mu: full key → the newest revision logged
}

func newDecodeErrors(log *slog.Logger, reg prometheus.Registerer, resource string) *decodeErrors {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "apiloom", Subsystem: "storage", Name: "decode_errors_total",
		Help: "Stored values read from etcd that did not decode into their resource's type, counted at every read. " +
			"Such objects are left out of lists and watches; DELETE with ignoreStoreReadErrorWithClusterBreakingPotential removes them.",
	}, []string{"resource"})
	if reg != nil {
		if err := reg.Register(vec); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
					vec = existing
				}
			} else {
				log.Warn("storage: metrics not registered", "err", err)
			}
		}
	}
	return &decodeErrors{log: log, counter: vec.WithLabelValues(resource), logged: make(map[string]int64)}
}

// report counts err, an ErrCorrupt *Error for the value at fullKey, and
// logs it unless this key and revision were logged already.
func (d *decodeErrors) report(fullKey string, err error) {
	d.counter.Inc()
	se, ok := AsError(err)
	if !ok {
		return
	}
	d.mu.Lock()
	// Revisions only grow: an older one than the last logged (a watch
	// decoding a previous value) was logged when it was new.
	if rev, seen := d.logged[fullKey]; seen && se.ResourceVersion <= rev {
		d.mu.Unlock()
		return
	}
	if len(d.logged) >= maxLoggedKeys {
		clear(d.logged)
	}
	d.logged[fullKey] = se.ResourceVersion
	// Logged under mu, so a reader that finds this revision recorded
	// returns after its line is written (rare: once per revision).
	defer d.mu.Unlock()
	what := "storage: stored object does not decode"
	if se.Untransformable {
		what = "storage: stored object cannot be decrypted"
	}
	d.log.Error(what+"; it is left out of lists and watches until it is rewritten, "+
		"or deleted with DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential",
		"key", fullKey, "revision", se.ResourceVersion, "err", se.Detail)
}

// decode decodes the stored value of the relative key at rev, reporting a
// value that does not decrypt or decode. Every read of a stored value goes
// through it (or read).
func (s *Store[O]) decode(ctx context.Context, data []byte, rev int64, key string) (O, error) {
	obj, _, _, err := s.read(ctx, data, rev, key)
	return obj, err
}

// read is decode that also returns the value's plaintext and whether it
// is stale: stored with other than the current encryption key or
// provider (transform.go).
func (s *Store[O]) read(ctx context.Context, data []byte, rev int64, key string) (O, []byte, bool, error) {
	plain, stale, err := s.fromStorage(ctx, data, rev, key)
	if err == nil {
		var obj O
		if obj, err = s.codec.decode(plain, rev, key); err == nil {
			return obj, plain, stale, nil
		}
	}
	s.decodeErrors.report(s.prefix+key, err)
	var zero O
	return zero, nil, false, err
}

// corruptError returns err's *Error if it wraps ErrCorrupt.
func corruptError(err error) (*Error, bool) {
	se, ok := AsError(err)
	if !ok || !errors.Is(se, ErrCorrupt) {
		return nil, false
	}
	return se, true
}
