package main

import (
	"sync"

	clientfeatures "k8s.io/client-go/features"
)

// clientGates is client-go's feature gates with overrides the informer
// scenario sets per round: watch-list on or off, CBOR allowed and preferred
// or not. client-go reads its gates through features.FeatureGates() when it
// builds a client or a reflector and on each request, so a round sets its
// overrides before it builds anything and restores them after it stopped
// everything; rounds run one at a time.
type clientGates struct {
	// base is the implementation client-go had before ours (its
	// environment-variable gates); features without an override ask it.
	base clientfeatures.Gates

	// mu guards overrides.
	mu        sync.Mutex
	overrides map[clientfeatures.Feature]bool
}

var _ clientfeatures.Gates = (*clientGates)(nil)

// Enabled is the override for key if one is set, else the base's answer.
func (g *clientGates) Enabled(key clientfeatures.Feature) bool {
	g.mu.Lock()
	v, ok := g.overrides[key]
	g.mu.Unlock()
	if ok {
		return v
	}
	return g.base.Enabled(key)
}

// set overrides the given features and returns a function that restores
// the overrides in force before.
func (g *clientGates) set(values map[clientfeatures.Feature]bool) (restore func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.overrides
	next := make(map[clientfeatures.Feature]bool, len(old)+len(values))
	for k, v := range old {
		next[k] = v
	}
	for k, v := range values {
		next[k] = v
	}
	g.overrides = next
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.overrides = old
	}
}

var (
	gatesOnce sync.Once
	gates     *clientGates
)

// installClientGates puts clientGates in place of client-go's feature gates
// (once per process) and returns it. main calls it first thing, before
// client-go has read its environment-variable gates, so that client-go has
// no reason to warn that its gates were replaced after use.
func installClientGates() *clientGates {
	gatesOnce.Do(func() {
		gates = &clientGates{base: clientfeatures.FeatureGates()}
		clientfeatures.ReplaceFeatureGates(gates)
	})
	return gates
}
