package admission

import (
	"context"
	"time"

	"k8s.io/apiserver/pkg/admission"
	admissionmetrics "k8s.io/apiserver/pkg/admission/metrics"

	"github.com/apiloom/apiloom/server/internal/tracing"
)

// A Plugin is one stage of the chain: an admission.MutationInterface, an
// admission.ValidationInterface or both, by name.
type Plugin struct {
	Name string
	admission.Interface
}

// Chain runs its plugins as kube-apiserver's admission chain does: Admit
// calls every mutating plugin that handles the operation, in order, and
// stops at the first error; Validate does the same for the validating
// ones. A nil *Chain admits everything. It implements both interfaces, so
// a chain can itself be a plugin.
type Chain struct {
	plugins []Plugin
	// objects are what plugins create, convert and default objects
	// with when a caller gives none (WithObjects).
	objects admission.ObjectInterfaces
	// observed chains record kube-apiserver's admission metrics: each
	// plugin's and each phase's duration (New's chain).
	observed bool
}

var (
	_ admission.MutationInterface   = (*Chain)(nil)
	_ admission.ValidationInterface = (*Chain)(nil)
)

// NewChain returns the chain of plugins, in the order given.
func NewChain(plugins ...Plugin) *Chain {
	return &Chain{plugins: plugins}
}

// Names are the plugins' names, in order.
func (c *Chain) Names() []string {
	if c == nil {
		return nil
	}
	names := make([]string, len(c.plugins))
	for i, p := range c.plugins {
		names[i] = p.Name
	}
	return names
}

// With is a chain of c's plugins followed by more.
func (c *Chain) With(more ...Plugin) *Chain {
	var ps []Plugin
	if c != nil {
		ps = append(ps, c.plugins...)
	}
	out := NewChain(append(ps, more...)...)
	if c != nil {
		out.objects, out.observed = c.objects, c.observed
	}
	return out
}

// WithObjects is c, whose plugins are given o (the served kinds'
// ObjectInterfaces) when a caller of Admit or Validate gives none.
func (c *Chain) WithObjects(o admission.ObjectInterfaces) *Chain {
	if c == nil {
		return nil
	}
	out := *c
	out.objects = o
	return &out
}

// Handles implements admission.Interface: the chain sees every operation,
// and its plugins choose.
func (c *Chain) Handles(admission.Operation) bool { return true }

// Admit is the mutating phase. When a plugin asks to be called again
// (a webhook or policy with reinvocationPolicy IfNeeded, after a later one
// changed the object), every mutating plugin runs once more, as
// kube-apiserver's reinvocation handler has them.
func (c *Chain) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if c == nil {
		return nil
	}
	if o == nil {
		o = c.objects
	}
	ctx, span := startPhase(ctx, spanAdmit, a)
	start := c.now()
	err := c.admitOnce(ctx, a, o)
	if rc := a.GetReinvocationContext(); err == nil && rc != nil && rc.ShouldReinvoke() && !rc.IsReinvoke() {
		rc.SetIsReinvoke()
		tracing.Event(ctx, "reinvocation")
		err = c.admitOnce(ctx, a, o)
	}
	if c.observed {
		admissionmetrics.Metrics.ObserveAdmissionStep(ctx, time.Since(start), err != nil, a, stepAdmit)
	}
	tracing.End(span, err)
	return err
}

// The phases as kube-apiserver's metrics name them.
const (
	stepAdmit    = "admit"
	stepValidate = "validate"
)

// now is the time a phase or plugin starts, when c records metrics.
func (c *Chain) now() time.Time {
	if !c.observed {
		return time.Time{}
	}
	return time.Now()
}

// done records a plugin's call that started at start and returned err:
// its metrics, and, in a traced request, an event named by the plugin
// on the phase's span, when it returned.
func (c *Chain) done(ctx context.Context, start time.Time, err error, a admission.Attributes, step, name string) {
	tracing.Event(ctx, name)
	if c.observed {
		admissionmetrics.Metrics.ObserveAdmissionController(ctx, time.Since(start), err != nil, a, step, name)
	}
}

// admitOnce calls each mutating plugin once, in order.
func (c *Chain) admitOnce(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	for _, p := range c.plugins {
		m, ok := p.Interface.(admission.MutationInterface)
		if !ok || !m.Handles(a.GetOperation()) {
			continue
		}
		start := c.now()
		err := m.Admit(ctx, a, o)
		c.done(ctx, start, err, a, stepAdmit, p.Name)
		if err != nil {
			return err
		}
	}
	return nil
}

// Validate is the validating phase.
func (c *Chain) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if c == nil {
		return nil
	}
	if o == nil {
		o = c.objects
	}
	ctx, span := startPhase(ctx, spanValidate, a)
	start := c.now()
	err := c.validate(ctx, a, o)
	if c.observed {
		admissionmetrics.Metrics.ObserveAdmissionStep(ctx, time.Since(start), err != nil, a, stepValidate)
	}
	tracing.End(span, err)
	return err
}

// validate calls each validating plugin, in order.
func (c *Chain) validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	for _, p := range c.plugins {
		v, ok := p.Interface.(admission.ValidationInterface)
		if !ok || !v.Handles(a.GetOperation()) {
			continue
		}
		start := c.now()
		err := v.Validate(ctx, a, o)
		c.done(ctx, start, err, a, stepValidate, p.Name)
		if err != nil {
			return err
		}
	}
	return nil
}

// Traced is a chain of c's plugins that calls trace with the plugin's
// name and phase ("mutating", "validating") each time one runs: what a
// test asserts the order with, and where per-plugin metrics go.
func (c *Chain) Traced(trace func(plugin, phase string)) *Chain {
	if c == nil {
		return nil
	}
	ps := make([]Plugin, len(c.plugins))
	for i, p := range c.plugins {
		ps[i] = Plugin{Name: p.Name, Interface: traced{p: p, trace: trace}}
	}
	out := NewChain(ps...)
	out.objects, out.observed = c.objects, c.observed
	return out
}

// traced is a plugin reporting its calls. It mutates or validates only
// where the plugin it wraps does.
type traced struct {
	p     Plugin
	trace func(plugin, phase string)
}

func (t traced) Handles(op admission.Operation) bool { return t.p.Handles(op) }

func (t traced) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	m, ok := t.p.Interface.(admission.MutationInterface)
	if !ok {
		return nil
	}
	t.trace(t.p.Name, "mutating")
	return m.Admit(ctx, a, o)
}

func (t traced) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	v, ok := t.p.Interface.(admission.ValidationInterface)
	if !ok {
		return nil
	}
	t.trace(t.p.Name, "validating")
	return v.Validate(ctx, a, o)
}
