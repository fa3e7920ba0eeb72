package admissionconf

import (
	"net/http"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The ValidatingAdmissionPolicy and MutatingAdmissionPolicy scenarios.

var (
	deny  = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
	warn  = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn}
	audit = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}
)

// validate creates a ValidatingAdmissionPolicy and its binding.
func (r *run) validate(name string, spec admissionregistrationv1.ValidatingAdmissionPolicySpec, actions []admissionregistrationv1.ValidationAction, param *admissionregistrationv1.ParamRef) error {
	if err := r.setup(arPath("validatingadmissionpolicies"), validatingPolicy(name, spec)); err != nil {
		return err
	}
	return r.setup(arPath("validatingadmissionpolicybindings"), validatingBinding(name, actions, param))
}

// vapParams: a policy whose parameter, a ConfigMap named by the binding,
// reserves a name (message, reason Forbidden) and caps the number of data
// keys (variables, a messageExpression naming the namespaceObject, reason
// Invalid by default), on create, update and patch, dry run or not.
func vapParams(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	// The parameter comes before the binding: the policy matches it too.
	if err := r.setup(cmPath(r.ns), configMap("limits", nil, map[string]string{"reserved": "reserved", "maxKeys": "2"})); err != nil {
		return err
	}
	err := r.validate(r.name(), admissionregistrationv1.ValidatingAdmissionPolicySpec{
		ParamKind:        configMapParams,
		MatchConstraints: matchIn(r.scn, rule([]string{"configmaps"}, create, update)),
		Validations: []admissionregistrationv1.Validation{{
			Expression: "object.metadata.name != params.data.reserved && !object.metadata.name.startsWith('probe-')",
			Message:    "this name is reserved",
			Reason:     ptr.To(metav1.StatusReasonForbidden),
		}, {
			Expression: "variables.keys <= variables.maxKeys",
			MessageExpression: "'in ' + namespaceObject.metadata.name + ', at most ' + string(variables.maxKeys) +" +
				" ' data keys, got ' + string(variables.keys)",
		}},
		Variables: []admissionregistrationv1.Variable{
			{Name: "maxKeys", Expression: "int(params.data.maxKeys)"},
			{Name: "keys", Expression: "has(object.data) ? size(object.data) : 0"},
		},
	}, deny, paramRef("limits", admissionregistrationv1.DenyAction))
	if err != nil {
		return err
	}
	if err := r.awaitDenied("the policy", cmPath(r.ns), configMap("probe-1", nil, nil)); err != nil {
		return err
	}
	p := cmPath(r.ns)
	steps := []struct {
		label, method, path string
		dry                 bool
		ct                  string
		body                any
	}{
		{"create allowed", http.MethodPost, p, false, "", configMap("small", nil, keys(1))},
		{"create reserved name", http.MethodPost, p, false, "", configMap("reserved", nil, keys(1))},
		{"create too many keys", http.MethodPost, p, false, "", configMap("big", nil, keys(3))},
		{"dry-run create too many keys", http.MethodPost, p, true, "", configMap("big", nil, keys(3))},
		{"update to too many keys", http.MethodPut, p + "/small", false, "", configMap("small", nil, keys(3))},
		{"merge patch to too many keys", http.MethodPatch, p + "/small", false, "application/merge-patch+json", []byte(`{"data":{"x":"1","y":"2"}}`)},
		{"update within the limit", http.MethodPut, p + "/small", false, "", configMap("small", nil, keys(2))},
	}
	for _, s := range steps {
		q := dryRunIf(s.dry)
		if _, err := r.write(s.label, s.method, s.path, q, s.ct, s.body); err != nil {
			return err
		}
	}
	return nil
}

// refusesPrefixes is a validation refusing ConfigMaps whose names start
// with probe- or warned-, and one refusing two data keys or more.
var refusesPrefixes = []admissionregistrationv1.Validation{{
	Expression: "!object.metadata.name.startsWith('probe-') && !object.metadata.name.startsWith('warned-')",
	Message:    "names starting probe- or warned- are discouraged",
}, {
	Expression:        "!has(object.data) || size(object.data) < 2",
	MessageExpression: "'ConfigMap ' + object.metadata.name + ' has ' + string(size(object.data)) + ' keys'",
}}

// vapWarn: a binding with validationActions [Warn] admits the write and
// says why it would not in warnings, one per failed validation, in order.
func vapWarn(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	err := r.validate(r.name(), admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: matchIn(r.scn, rule([]string{"configmaps"}, create)),
		Validations:      refusesPrefixes,
	}, warn, nil)
	if err != nil {
		return err
	}
	err = r.await("the policy", r.dryRunCreate(cmPath(r.ns), configMap("probe-1", nil, nil)),
		func(a answer) bool { return len(a.Warnings) > 0 })
	if err != nil {
		return err
	}
	for _, c := range []struct {
		label string
		body  any
	}{
		{"create, one validation failing", configMap("warned-1", nil, keys(1))},
		{"create, two validations failing", configMap("warned-2", nil, keys(2))},
		{"create, none failing", configMap("fine", nil, keys(1))},
	} {
		if _, err := r.create(c.label, cmPath(r.ns), c.body); err != nil {
			return err
		}
	}
	return nil
}

// vapAudit: a binding with validationActions [Audit] admits the write
// without a warning (the audit annotation is not seen: no audit log). It
// is known to be in effect once a marker policy bound after it is: the
// bindings reach the policy plugin through one informer, in order.
func vapAudit(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	err := r.validate(r.name(), admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: matchIn(r.scn, rule([]string{"configmaps"}, create)),
		Validations:      refusesPrefixes[1:],
	}, audit, nil)
	if err != nil {
		return err
	}
	err = r.validate(r.name()+"-marker", admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: matchIn(r.scn, rule([]string{"configmaps"}, create)),
		Validations:      []admissionregistrationv1.Validation{{Expression: "!object.metadata.name.startsWith('probe-')"}},
	}, deny, nil)
	if err != nil {
		return err
	}
	if err := r.awaitDenied("the marker policy", cmPath(r.ns), configMap("probe-1", nil, nil)); err != nil {
		return err
	}
	_, err = r.create("create, the audited validation failing", cmPath(r.ns), configMap("audited", nil, keys(3)))
	return err
}

// vapParamMissingDeny: a binding whose parameter does not exist, with
// parameterNotFoundAction Deny, refuses every matched write.
func vapParamMissingDeny(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	err := r.validate(r.name(), admissionregistrationv1.ValidatingAdmissionPolicySpec{
		ParamKind:        configMapParams,
		MatchConstraints: matchIn(r.scn, rule([]string{"configmaps"}, create)),
		Validations:      []admissionregistrationv1.Validation{{Expression: "true"}},
	}, deny, paramRef("missing", admissionregistrationv1.DenyAction))
	if err != nil {
		return err
	}
	if err := r.awaitDenied("the policy", cmPath(r.ns), configMap("probe-1", nil, nil)); err != nil {
		return err
	}
	_, err = r.create("create without the parameter", cmPath(r.ns), configMap("any", nil, keys(1)))
	return err
}

// vapParamMissingAllow: with parameterNotFoundAction Allow, the writes a
// parameter refused are admitted once it is deleted.
func vapParamMissingAllow(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	if err := r.setup(cmPath(r.ns), configMap("switch", nil, map[string]string{"prefix": "probe-"})); err != nil {
		return err
	}
	err := r.validate(r.name(), admissionregistrationv1.ValidatingAdmissionPolicySpec{
		ParamKind:        configMapParams,
		MatchConstraints: matchIn(r.scn, rule([]string{"configmaps"}, create)),
		Validations: []admissionregistrationv1.Validation{{
			Expression: "!object.metadata.name.startsWith(params.data.prefix)",
			Message:    "the parameter's prefix is refused",
		}},
	}, deny, paramRef("switch", admissionregistrationv1.AllowAction))
	if err != nil {
		return err
	}
	probe := configMap("probe-1", nil, nil)
	if err := r.awaitDenied("the policy", cmPath(r.ns), probe); err != nil {
		return err
	}
	if _, err := r.write("create refused by the parameter", http.MethodPost, cmPath(r.ns), dryRun, "", configMap("probe-2", nil, nil)); err != nil {
		return err
	}
	if _, err := r.write("delete the parameter", http.MethodDelete, cmPath(r.ns)+"/switch", nil, "", nil); err != nil {
		return err
	}
	err = r.await("the parameter's deletion", r.dryRunCreate(cmPath(r.ns), probe),
		func(a answer) bool { return !a.failed() })
	if err != nil {
		return err
	}
	_, err = r.create("create without the parameter", cmPath(r.ns), configMap("probe-after", nil, keys(1)))
	return err
}

// vapMatchConditions: a policy on Secrets with two matchConditions (the
// name, the user) refuses only what both match; a validating webhook with
// a matchCondition is not called for what it excludes.
func vapMatchConditions(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	err := r.validate(r.name(), admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: matchIn(r.scn, rule([]string{"secrets"}, create)),
		MatchConditions: []admissionregistrationv1.MatchCondition{
			{Name: "named", Expression: "object.metadata.name.startsWith('mc-') || object.metadata.name.startsWith('probe-')"},
			{Name: "by-admin", Expression: "request.userInfo.username == 'admin'"},
		},
		Validations: []admissionregistrationv1.Validation{{
			Expression: "has(object.data) && 'allowed' in object.data",
			Message:    "a matched Secret needs the key allowed",
		}},
	}, deny, nil)
	if err != nil {
		return err
	}
	err = r.setup(arPath("validatingwebhookconfigurations"), validatingWebhooks(r.name(), webhook{
		name: "deny.admconf.example.com", url: r.tg.hooks.url(r.scn, "deny"), caPEM: r.tg.hooks.caPEM,
		rules: []admissionregistrationv1.RuleWithOperations{rule([]string{"configmaps"}, create)}, scenario: r.scn,
		failurePolicy: admissionregistrationv1.Fail, timeoutSeconds: 10,
		matchConditions: []admissionregistrationv1.MatchCondition{{Name: "not-deny-b", Expression: "object.metadata.name != 'deny-b'"}},
	}))
	if err != nil {
		return err
	}
	if err := r.awaitDenied("the policy", secretPath(r.ns), secret("probe-1", nil)); err != nil {
		return err
	}
	if err := r.awaitDenied("the webhook", cmPath(r.ns), configMap("probe-1", nil, nil)); err != nil {
		return err
	}
	for _, c := range []struct {
		label, path string
		body        any
	}{
		{"secret matched, refused", secretPath(r.ns), secret("mc-1", nil)},
		{"secret matched, valid", secretPath(r.ns), secret("mc-2", map[string]string{"allowed": "eWVz"})},
		{"secret not matched", secretPath(r.ns), secret("plain", nil)},
		{"configmap the webhook denies", cmPath(r.ns), configMap("deny-a", nil, nil)},
		{"configmap the webhook's matchCondition excludes", cmPath(r.ns), configMap("deny-b", nil, nil)},
	} {
		if _, err := r.create(c.label, c.path, c.body); err != nil {
			return err
		}
	}
	r.reviews("the webhook's requests", "deny")
	return nil
}

// vapNamespaceStatus: a policy on namespaces/status only refuses a status
// write of a labelled namespace, and not the same write to the namespace.
func vapNamespaceStatus(r *run) error {
	const denyLabel = "admconf.example.com/deny-status"
	blocked := map[string]string{denyLabel: "yes"}
	for _, ns := range []struct {
		name   string
		labels map[string]string
	}{{r.ns, nil}, {r.ns + "-blocked", blocked}, {"probe-" + r.ns, blocked}} {
		if err := r.namespace(ns.name, ns.labels); err != nil {
			return err
		}
	}
	err := r.validate(r.name(), admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: matchIn(r.scn, rule([]string{"namespaces/status"}, update)),
		Validations: []admissionregistrationv1.Validation{{
			Expression: "!has(object.metadata.labels) || !('" + denyLabel + "' in object.metadata.labels)",
			Message:    "status writes of this namespace are refused",
		}},
	}, deny, nil)
	if err != nil {
		return err
	}
	err = r.await("the policy", func() (answer, error) { return r.updateStatus("", "probe-"+r.ns, "status", nil) }, answer.failed)
	if err != nil {
		return err
	}
	if _, err := r.updateStatus("status write, labelled", r.ns+"-blocked", "status", nil); err != nil {
		return err
	}
	if _, err := r.updateStatus("namespace write, labelled", r.ns+"-blocked", "", map[string]string{"touched": "yes"}); err != nil {
		return err
	}
	_, err = r.updateStatus("status write, not labelled", r.ns, "status", nil)
	return err
}

// mapApply: a MutatingAdmissionPolicy whose ApplyConfiguration sets a
// label on create (not on update).
func mapApply(r *run) error {
	return mutatingPolicyScenario(r, admissionregistrationv1.Mutation{
		PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
			Expression: `Object{metadata: Object.metadata{labels: {"map-applied": "yes"}}}`,
		},
	}, "map-applied")
}

// mapJSONPatch: a MutatingAdmissionPolicy whose JSONPatch adds a label
// (its key escaped by jsonpatch.escapeKey) on create; on an object
// without labels the patch fails and, failurePolicy Fail, so does the
// write.
func mapJSONPatch(r *run) error {
	return mutatingPolicyScenario(r, admissionregistrationv1.Mutation{
		PatchType: admissionregistrationv1.PatchTypeJSONPatch,
		JSONPatch: &admissionregistrationv1.JSONPatch{
			Expression: `[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("admconf.example.com/jsonpatched"), value: "yes"}]`,
		},
	}, "admconf.example.com/jsonpatched")
}

func mutatingPolicyScenario(r *run, m admissionregistrationv1.Mutation, label string) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	if err := r.setup(arPath("mutatingadmissionpolicies"), mutatingPolicy(r.name(), matchIn(r.scn, rule([]string{"configmaps"}, create)), m)); err != nil {
		return err
	}
	if err := r.setup(arPath("mutatingadmissionpolicybindings"), mutatingBinding(r.name())); err != nil {
		return err
	}
	own := map[string]string{"own": "x"}
	err := r.await("the policy", r.dryRunCreate(cmPath(r.ns), configMap("probe-1", own, nil)),
		func(a answer) bool { return a.Labels[label] == "yes" })
	if err != nil {
		return err
	}
	p := cmPath(r.ns)
	if _, err := r.create("create", p, configMap("mutated", own, keys(1))); err != nil {
		return err
	}
	if _, err := r.write("get", http.MethodGet, p+"/mutated", nil, "", nil); err != nil {
		return err
	}
	if _, err := r.write("update, not matched", http.MethodPut, p+"/mutated", nil, "", configMap("mutated", map[string]string{"own": "y"}, keys(1))); err != nil {
		return err
	}
	if _, err := r.write("dry-run create", http.MethodPost, p, dryRun, "", configMap("dry", own, nil)); err != nil {
		return err
	}
	_, err = r.create("create without labels", p, configMap("bare", nil, nil))
	return err
}

// secret is a Secret named name with data (base64 values).
func secret(name string, data map[string]string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name},
		"data":     data,
	}
}

// dryRunIf is the dry-run query when dry, else none.
func dryRunIf(dry bool) map[string][]string {
	if dry {
		return dryRun
	}
	return nil
}

// vapFailurePolicy: a validation that fails to evaluate (int() of a
// non-number) refuses the write under failurePolicy Fail and admits it
// under Ignore. The Ignore policy is bound first; the Fail one, bound
// after it, shows both in effect.
func vapFailurePolicy(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	for _, p := range []struct {
		suffix, prefix string
		policy         admissionregistrationv1.FailurePolicyType
	}{{"-ignore", "i-", admissionregistrationv1.Ignore}, {"-fail", "f-", admissionregistrationv1.Fail}} {
		err := r.validate(r.name()+p.suffix, admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: matchIn(r.scn, rule([]string{"configmaps"}, create)),
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "prefixed",
				Expression: "object.metadata.name.startsWith('" + p.prefix + "') || ('" + p.prefix + "' == 'f-' && object.metadata.name.startsWith('probe-'))",
			}},
			Validations:   []admissionregistrationv1.Validation{{Expression: "int(object.data.n) >= 0"}},
			FailurePolicy: ptr.To(p.policy),
		}, deny, nil)
		if err != nil {
			return err
		}
	}
	if err := r.awaitDenied("the policies", cmPath(r.ns), configMap("probe-1", nil, map[string]string{"n": "x"})); err != nil {
		return err
	}
	for _, c := range []struct {
		label, name, n string
	}{
		{"Fail, the expression failing", "f-1", "x"},
		{"Fail, the expression true", "f-2", "1"},
		{"Fail, the expression false", "f-3", "-1"},
		{"Ignore, the expression failing", "i-1", "x"},
	} {
		if _, err := r.create(c.label, cmPath(r.ns), configMap(c.name, nil, map[string]string{"n": c.n})); err != nil {
			return err
		}
	}
	return nil
}

// vapParamKindMissing: a policy whose paramKind names a kind no server
// serves refuses every matched write.
func vapParamKindMissing(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	err := r.validate(r.name(), admissionregistrationv1.ValidatingAdmissionPolicySpec{
		ParamKind:        &admissionregistrationv1.ParamKind{APIVersion: "nope.example.com/v1", Kind: "Nope"},
		MatchConstraints: matchIn(r.scn, rule([]string{"configmaps"}, create)),
		Validations:      []admissionregistrationv1.Validation{{Expression: "true"}},
	}, deny, paramRef("any", admissionregistrationv1.DenyAction))
	if err != nil {
		return err
	}
	if err := r.awaitDenied("the policy", cmPath(r.ns), configMap("probe-1", nil, nil)); err != nil {
		return err
	}
	_, err = r.create("create", cmPath(r.ns), configMap("any", nil, nil))
	return err
}

// vapAuthorizer: a policy's expressions ask the authorizer (may the admin
// list Secrets here, create this ConfigMap?) and its message reads the
// request's user.
func vapAuthorizer(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	user := "'user ' + request.userInfo.username + ' in ' + request.userInfo.groups.join(',')"
	err := r.validate(r.name(), admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: matchIn(r.scn, rule([]string{"configmaps"}, create)),
		Validations: []admissionregistrationv1.Validation{{
			Expression:        "!object.metadata.name.startsWith('probe-')",
			MessageExpression: user + " + ' wrote a probe'",
		}, {
			Expression: "!object.metadata.name.startsWith('list-') ||" +
				" !authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('list').allowed()",
			MessageExpression: user + " + ' may list secrets'",
		}, {
			Expression:        "!object.metadata.name.startsWith('create-') || !authorizer.requestResource.check('create').allowed()",
			MessageExpression: user + " + ' may create configmaps'",
		}},
	}, deny, nil)
	if err != nil {
		return err
	}
	if err := r.awaitDenied("the policy", cmPath(r.ns), configMap("probe-1", nil, nil)); err != nil {
		return err
	}
	if _, err := r.create("create, asking about secrets", cmPath(r.ns), configMap("list-1", nil, nil)); err != nil {
		return err
	}
	_, err = r.create("create, asking about this create", cmPath(r.ns), configMap("create-1", nil, nil))
	return err
}

// mapParamsThenVAP: a MutatingAdmissionPolicy sets a label from its
// parameter; a ValidatingAdmissionPolicy requires it, so a create passes
// only if mutation ran first. A name the mutating policy's matchCondition
// excludes is refused.
func mapParamsThenVAP(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	if err := r.setup(cmPath(r.ns), configMap("tier", map[string]string{"tier": "param"}, map[string]string{"tier": "gold"})); err != nil {
		return err
	}
	m := mutatingPolicy(r.name(), matchIn(r.scn, rule([]string{"configmaps"}, create)), admissionregistrationv1.Mutation{
		PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
		ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
			Expression: `Object{metadata: Object.metadata{labels: {"tier": params.data.tier}}}`,
		},
	})
	m.Spec.ParamKind = configMapParams
	m.Spec.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "not-skipped", Expression: "!object.metadata.name.startsWith('skip-')"}}
	if err := r.setup(arPath("mutatingadmissionpolicies"), m); err != nil {
		return err
	}
	b := mutatingBinding(r.name())
	b.Spec.ParamRef = paramRef("tier", admissionregistrationv1.DenyAction)
	if err := r.setup(arPath("mutatingadmissionpolicybindings"), b); err != nil {
		return err
	}
	err := r.validate(r.name(), admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: matchIn(r.scn, rule([]string{"configmaps"}, create)),
		Validations: []admissionregistrationv1.Validation{{
			Expression:        "has(object.metadata.labels) && 'tier' in object.metadata.labels && object.metadata.labels.tier == 'gold'",
			MessageExpression: "'ConfigMap ' + object.metadata.name + ' has no gold tier'",
		}},
	}, deny, nil)
	if err != nil {
		return err
	}
	if err := r.awaitDenied("the validating policy", cmPath(r.ns), configMap("skip-probe", nil, nil)); err != nil {
		return err
	}
	err = r.await("the mutating policy", r.dryRunCreate(cmPath(r.ns), configMap("probe-1", nil, nil)),
		func(a answer) bool { return a.Labels["tier"] == "gold" })
	if err != nil {
		return err
	}
	if _, err := r.create("create, mutated then valid", cmPath(r.ns), configMap("tiered", nil, nil)); err != nil {
		return err
	}
	_, err = r.create("create, not mutated", cmPath(r.ns), configMap("skip-1", nil, nil))
	return err
}

// vapTypeChecking: the validatingadmissionpolicy-status controller
// (kube-controller-manager's; apiloom's runs inside it) type-checks each
// policy's expressions against the schemas of the kinds it matches and
// writes the warnings into its status: none for a sound policy, one per
// ill-typed expression otherwise, for each kind.
func vapTypeChecking(r *run) error {
	for _, p := range []struct {
		label, suffix string
		validations   []admissionregistrationv1.Validation
	}{{
		"a sound policy's status", "-sound",
		[]admissionregistrationv1.Validation{{Expression: "!has(object.data) || size(object.data) < 10"}},
	}, {
		"an ill-typed policy's status", "-ill-typed",
		[]admissionregistrationv1.Validation{
			{Expression: "object.data.x > 1"},
			{Expression: "object.spec.replicas > 1"},
			{Expression: "true", MessageExpression: "'immutable: ' + object.immutable"},
		},
	}} {
		name := r.name() + p.suffix
		err := r.setup(arPath("validatingadmissionpolicies"), validatingPolicy(name, admissionregistrationv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: matchIn(r.scn, rule([]string{"configmaps", "secrets"}, create)),
			Validations:      p.validations,
		}))
		if err != nil {
			return err
		}
		var status any
		err = r.await(name+"'s type check", func() (answer, error) {
			return r.tg.c.do(r.ctx, http.MethodGet, arPath("validatingadmissionpolicies")+"/"+name, nil, "", nil)
		}, func(a answer) bool {
			st, _ := a.object["status"].(map[string]any)
			meta, _ := a.object["metadata"].(map[string]any)
			if st == nil || st["typeChecking"] == nil || meta == nil || st["observedGeneration"] != meta["generation"] {
				return false
			}
			status = st["typeChecking"]
			return true
		})
		if err != nil {
			return err
		}
		r.record(p.label, status)
	}
	return nil
}

// vapInvalid: a policy whose messageExpression cannot compile even
// without a schema (string + int) is refused at create.
func vapInvalid(r *run) error {
	_, err := r.create("create an invalid policy", arPath("validatingadmissionpolicies"), validatingPolicy(r.name(), admissionregistrationv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: matchIn(r.scn, rule([]string{"configmaps"}, create)),
		Validations:      []admissionregistrationv1.Validation{{Expression: "true", MessageExpression: "'keys: ' + size(object.data)"}},
	}))
	return err
}
