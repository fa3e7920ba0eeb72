package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	admissionclient "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	"k8s.io/utils/ptr"
)

// admissionResult is the outcome of the admission scenario: creates of
// new objects, round after round, each with another configuration of
// dynamic admission in effect.
type admissionResult struct {
	Creators int              `json:"creators"`
	Creates  int              `json:"creates"`
	Rounds   []admissionRound `json:"rounds"`
}

// admissionRound is one configuration's creates.
type admissionRound struct {
	Name     string `json:"name"`
	Policies int    `json:"policies"`
	Webhook  bool   `json:"webhook"`
	// Created objects in CreateTime; CPU is the measured processes' CPU
	// over them, LoadGenCPU the load generator's own (which serves the
	// webhook).
	Created      int64         `json:"created"`
	CreateTime   time.Duration `json:"createTime"`
	CreateRate   float64       `json:"createRate"`
	CPU          cpuSpan       `json:"cpu"`
	CPUPerCreate time.Duration `json:"cpuPerCreate"`
	LoadGenCPU   time.Duration `json:"loadGenCPU"`
	// WebhookCalls is how many reviews the webhook answered during the
	// creates.
	WebhookCalls int64  `json:"webhookCalls,omitempty"`
	Error        string `json:"error,omitempty"`
}

// admissionConfig is what a round has in effect: policies
// ValidatingAdmissionPolicies (each with a Deny binding, one expression
// every load object passes) and perhaps the validating webhook.
type admissionConfig struct {
	policies int
	webhook  bool
}

// maxAdmissionPolicies bounds a round's policies.
const maxAdmissionPolicies = 100

// admissionWarmup is how many creates precede the first round.
const admissionWarmup = 500

// parseAdmissionRound reads a round's name: "none", "policy-1" or
// "policies-N", "webhook-1".
func parseAdmissionRound(name string) (admissionConfig, error) {
	switch {
	case name == "none":
		return admissionConfig{}, nil
	case name == "webhook-1":
		return admissionConfig{webhook: true}, nil
	case name == "policy-1":
		return admissionConfig{policies: 1}, nil
	case strings.HasPrefix(name, "policies-"):
		n, err := strconv.Atoi(strings.TrimPrefix(name, "policies-"))
		if err == nil && n >= 1 && n <= maxAdmissionPolicies {
			return admissionConfig{policies: n}, nil
		}
	}
	return admissionConfig{}, fmt.Errorf(`admission round %q is none of "none", "policy-1", "policies-N" (N ≤ %d), "webhook-1"`, name, maxAdmissionPolicies)
}

// Names of what the scenario creates in the server. A probe is an object
// that one policy (or the webhook) denies, and no load object is called
// like one: a dry-run create of it shows whether the policy is in effect.
const (
	admissionPrefix   = "apiloom-load-"
	admissionWebhook  = "apiloom-load.example.apiloom.dev"
	probeWebhook      = "load-adm-probe-webhook"
	admissionSettleIn = 60 * time.Second
)

func admissionPolicyName(i int) string { return fmt.Sprintf("%s%d", admissionPrefix, i) }
func admissionProbe(i int) string      { return fmt.Sprintf("load-adm-probe-%d", i) }

// admissionSetup puts configurations of dynamic admission into effect.
type admissionSetup struct {
	api  admissionclient.AdmissionregistrationV1Interface
	t    *target
	objs *objectFactory
	hook *admissionWebhookServer
	c    *config
	// have is what the server holds now.
	have admissionConfig
}

// runAdmission creates --admission-creates new objects with
// --admission-creators concurrent clients in each --admission-rounds
// round, after putting that round's policies or webhook into effect
// (seen acting on a dry-run probe). What it configured, and the objects,
// are removed at the end.
func runAdmission(ctx context.Context, c *config, t *target, objs *objectFactory, s *sampler, logf logFunc) (*admissionResult, error) {
	kc, err := kubernetes.NewForConfig(t.freshConfig())
	if err != nil {
		return nil, err
	}
	setup := &admissionSetup{api: kc.AdmissionregistrationV1(), t: t, objs: objs, c: c}
	defer func() {
		// The server is left as it was, even when ctx has ended.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if err := setup.apply(cctx, admissionConfig{}, logf); err != nil {
			logf("admission: removing the policies and webhook: %v", err)
		}
		if setup.hook != nil {
			setup.hook.stop()
		}
	}()
	res := &admissionResult{Creators: c.AdmissionCreators, Creates: c.AdmissionCreates}
	// Untimed: connections, the server's caches and the first writes'
	// costs are not the first round's.
	warm := min(c.AdmissionCreates, admissionWarmup)
	logf("admission: %d creates to warm up", warm)
	if _, err := createMissing(ctx, t, objs, "load-adm-warm", warm, c.AdmissionCreators); err != nil {
		return nil, err
	}
	for i, name := range c.AdmissionRounds {
		want, _ := parseAdmissionRound(name) // validated with the flags
		round := admissionRound{Name: name, Policies: want.policies, Webhook: want.webhook}
		if err := setup.apply(ctx, want, logf); err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			round.Error = err.Error()
			logf("admission %s: %v; skipping the round", name, err)
			res.Rounds = append(res.Rounds, round)
			continue
		}
		prefix := fmt.Sprintf("load-adm-%d", i)
		logf("admission %s: %d creates with %d creators", name, c.AdmissionCreates, c.AdmissionCreators)
		calls := setup.hookCalls()
		before := s.sample(ctx)
		start := time.Now()
		created, err := createMissing(ctx, t, objs, prefix, c.AdmissionCreates, c.AdmissionCreators)
		round.CreateTime = time.Since(start)
		after := s.sample(ctx)
		round.CPU, _ = cpuBetween(before, after)
		round.LoadGenCPU = after.SelfCPU - before.SelfCPU
		round.WebhookCalls = setup.hookCalls() - calls
		round.Created = created
		round.CreateRate = float64(created) / round.CreateTime.Seconds()
		if created > 0 {
			round.CPUPerCreate = round.CPU.Total / time.Duration(created)
		}
		if err != nil {
			round.Error = err.Error()
		}
		res.Rounds = append(res.Rounds, round)
		if err := ctx.Err(); err != nil {
			return res, err
		}
		logf("admission %s: %d created at %.0f/s, server CPU %s per create", name, created, round.CreateRate, us(round.CPUPerCreate))
	}
	// Untimed: the next scenario finds the namespace as it was.
	prefixes := []string{"load-adm-warm"}
	for i := range c.AdmissionRounds {
		prefixes = append(prefixes, fmt.Sprintf("load-adm-%d", i))
	}
	for _, prefix := range prefixes {
		if _, err := deleteAll(ctx, t, prefix, c.AdmissionCreates, c.AdmissionCreators); err != nil {
			logf("admission: deleting the objects: %v", err)
			break
		}
	}
	return res, nil
}

// deleteAll deletes objects prefix-000000 .. n-1 that exist.
func deleteAll(ctx context.Context, t *target, prefix string, n, workers int) (int64, error) {
	return eachObject(ctx, prefix, n, workers, "delete", func(name string) (bool, error) {
		err := t.writer.Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}

func (a *admissionSetup) hookCalls() int64 {
	if a.hook == nil {
		return 0
	}
	return a.hook.calls.Load()
}

// apply creates and deletes policies and the webhook until the server
// holds want, then waits until a dry-run create of each probe shows
// want in effect.
func (a *admissionSetup) apply(ctx context.Context, want admissionConfig, logf logFunc) error {
	if want == a.have {
		return nil
	}
	for i := a.have.policies; i < want.policies; i++ {
		if err := a.createPolicy(ctx, i); err != nil {
			return err
		}
	}
	for i := want.policies; i < a.have.policies; i++ {
		if err := a.deletePolicy(ctx, i); err != nil {
			return err
		}
	}
	if want.webhook && !a.have.webhook {
		if err := a.createWebhook(ctx); err != nil {
			return err
		}
	}
	if !want.webhook && a.have.webhook {
		err := a.api.ValidatingWebhookConfigurations().Delete(ctx, admissionWebhook, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	old := a.have
	a.have = want
	logf("admission: waiting for %d policies and %s webhook to be in effect", want.policies, map[bool]string{true: "the", false: "no"}[want.webhook])
	// Each policy denies its probe; those deleted no longer do.
	for i := range max(want.policies, old.policies) {
		if err := a.waitProbe(ctx, admissionProbe(i), i < want.policies); err != nil {
			return err
		}
	}
	if want.webhook || old.webhook {
		return a.waitProbe(ctx, probeWebhook, want.webhook)
	}
	return nil
}

var errNotInEffect = errors.New("not in effect")

// waitProbe dry-runs a create of name until it is denied (deny) or
// allowed (!deny).
func (a *admissionSetup) waitProbe(ctx context.Context, name string, deny bool) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, admissionSettleIn, true, func(ctx context.Context) (bool, error) {
		_, err := a.t.writer.Create(ctx, a.objs.object(name, "probe"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		last = err
		denied := err != nil && (apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err))
		return denied == deny, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w after %v: a dry-run create of %s was %s (last answer: %v)", errNotInEffect, admissionSettleIn, name,
			map[bool]string{true: "never denied", false: "still denied"}[deny], last)
	}
	return nil
}

// databaseMatch matches creates and updates of the resource under load.
func (a *admissionSetup) match() *admissionregistrationv1.MatchResources {
	return &admissionregistrationv1.MatchResources{
		NamespaceSelector: &metav1.LabelSelector{},
		ObjectSelector:    &metav1.LabelSelector{},
		MatchPolicy:       ptr.To(admissionregistrationv1.Equivalent),
		ResourceRules:     []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: a.rule()}},
	}
}

func (a *admissionSetup) rule() admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{APIGroups: []string{a.t.gvr.Group}, APIVersions: []string{a.t.gvr.Version},
			Resources: []string{a.t.gvr.Resource}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)},
	}
}

// createPolicy creates policy i and its Deny binding: one expression,
// which denies probe i and passes every load object.
func (a *admissionSetup) createPolicy(ctx context.Context, i int) error {
	name := admissionPolicyName(i)
	_, err := a.api.ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: a.match(),
			Validations:      []admissionregistrationv1.Validation{{Expression: fmt.Sprintf("object.metadata.name != '%s'", admissionProbe(i))}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create ValidatingAdmissionPolicy %s: %w", name, err)
	}
	_, err = a.api.ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create ValidatingAdmissionPolicyBinding %s: %w", name, err)
	}
	return nil
}

func (a *admissionSetup) deletePolicy(ctx context.Context, i int) error {
	name := admissionPolicyName(i)
	err := a.api.ValidatingAdmissionPolicyBindings().Delete(ctx, name, metav1.DeleteOptions{})
	if err == nil || apierrors.IsNotFound(err) {
		err = a.api.ValidatingAdmissionPolicies().Delete(ctx, name, metav1.DeleteOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete policy %s: %w", name, err)
	}
	return nil
}

// createWebhook starts the webhook server (once) and registers it, with
// its certificate as the caBundle.
func (a *admissionSetup) createWebhook(ctx context.Context) error {
	if a.hook == nil {
		h, err := startAdmissionWebhook(probeWebhook)
		if err != nil {
			return err
		}
		a.hook = h
	}
	_, err := a.api.ValidatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: admissionWebhook},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:          admissionWebhook,
			ClientConfig:  admissionregistrationv1.WebhookClientConfig{URL: ptr.To(a.hook.url + "/validate"), CABundle: a.hook.caPEM},
			Rules:         []admissionregistrationv1.RuleWithOperations{a.rule()},
			FailurePolicy: ptr.To(admissionregistrationv1.Fail), MatchPolicy: ptr.To(admissionregistrationv1.Equivalent),
			NamespaceSelector: &metav1.LabelSelector{}, ObjectSelector: &metav1.LabelSelector{},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), TimeoutSeconds: ptr.To[int32](10),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create ValidatingWebhookConfiguration: %w", err)
	}
	return nil
}
