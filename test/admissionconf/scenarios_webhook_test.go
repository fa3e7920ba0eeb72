package admissionconf

import (
	"net/http"
	"net/url"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// The webhook scenarios: a validating and a mutating webhook served by the
// target's hookServer, and webhooks that are down or slow.

// hook is a webhook of the scenario calling the target's hookServer with
// behaviour, on rules.
func (r *run) hook(name, behaviour string, rules ...admissionregistrationv1.RuleWithOperations) webhook {
	return webhook{
		name: name, url: r.tg.hooks.url(r.scn, behaviour), caPEM: r.tg.hooks.caPEM,
		rules: rules, scenario: r.scn,
		failurePolicy: admissionregistrationv1.Fail, timeoutSeconds: 10,
	}
}

func (r *run) validatingWebhooks(hooks ...webhook) error {
	return r.setup(arPath("validatingwebhookconfigurations"), validatingWebhooks(r.name(), hooks...))
}

// webhookValidating: a validating webhook on ConfigMaps (create, update,
// patch, delete, deletecollection), namespaces/status and the deletion of
// a namespace: what it receives for each operation (the
// objects, options, dryRun, subresource, user), its warnings, its denial.
func webhookValidating(r *run) error {
	for _, ns := range []string{r.ns, r.ns + "-gone"} {
		if err := r.namespace(ns, nil); err != nil {
			return err
		}
	}
	err := r.validatingWebhooks(r.hook("validate.admconf.example.com", "deny",
		rule([]string{"configmaps"}, create, update, del),
		rule([]string{"namespaces/status"}, update),
		rule([]string{"namespaces"}, del)))
	if err != nil {
		return err
	}
	if err := r.awaitDenied("the webhook", cmPath(r.ns), configMap("probe-1", nil, nil)); err != nil {
		return err
	}
	p := cmPath(r.ns)
	steps := []struct {
		label, method, path string
		dry                 bool
		ct                  string
		body                any
	}{
		{"create", http.MethodPost, p, false, "", configMap("seen", map[string]string{"own": "x"}, keys(1))},
		{"update", http.MethodPut, p + "/seen", false, "", configMap("seen", map[string]string{"own": "x"}, keys(2))},
		{"merge patch", http.MethodPatch, p + "/seen", false, "application/merge-patch+json", []byte(`{"data":{"patched":"yes"}}`)},
		{"dry-run create", http.MethodPost, p, true, "", configMap("seen-dry", nil, nil)},
		{"create denied", http.MethodPost, p, false, "", configMap("deny-1", nil, nil)},
	}
	for _, s := range steps {
		if _, err := r.write(s.label, s.method, s.path, dryRunIf(s.dry), s.ct, s.body); err != nil {
			return err
		}
	}
	if _, err := r.updateStatus("namespace status write", r.ns, "status", nil); err != nil {
		return err
	}
	if _, err := r.write("delete", http.MethodDelete, p+"/seen", nil, "", nil); err != nil {
		return err
	}
	if _, err := r.write("delete a namespace", http.MethodDelete, nsPath+"/"+r.ns+"-gone", nil, "", nil); err != nil {
		return err
	}
	for _, name := range []string{"dc-1", "dc-2"} {
		if err := r.setup(p, configMap(name, map[string]string{"group": "dc"}, nil)); err != nil {
			return err
		}
	}
	if _, err := r.write("delete a collection", http.MethodDelete, p, url.Values{"labelSelector": {"group=dc"}}, "", nil); err != nil {
		return err
	}
	r.reviews("the webhook's requests", "deny")
	return nil
}

// webhookMutating: a mutating webhook's JSON patch sets a label on create;
// what it receives, on create and on delete, of one object or a
// collection, and for the delete of a missing object.
func webhookMutating(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	h := r.hook("mutate.admconf.example.com", "patch", rule([]string{"configmaps"}, create, del))
	if err := r.setup(arPath("mutatingwebhookconfigurations"), mutatingWebhooks(r.name(), h)); err != nil {
		return err
	}
	own := map[string]string{"own": "x"}
	err := r.await("the webhook", r.dryRunCreate(cmPath(r.ns), configMap("probe-1", own, nil)),
		func(a answer) bool { return a.Labels["webhook-mutated"] == "yes" })
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
	if _, err := r.write("dry-run create", http.MethodPost, p, dryRun, "", configMap("dry", own, nil)); err != nil {
		return err
	}
	if _, err := r.write("delete", http.MethodDelete, p+"/mutated", nil, "", nil); err != nil {
		return err
	}
	for _, name := range []string{"col-1", "col-2"} {
		if err := r.setup(p, configMap(name, map[string]string{"group": "col"}, nil)); err != nil {
			return err
		}
	}
	if _, err := r.write("delete a collection", http.MethodDelete, p, url.Values{"labelSelector": {"group=col"}}, "", nil); err != nil {
		return err
	}
	if _, err := r.write("delete a missing object", http.MethodDelete, p+"/missing-1", nil, "", nil); err != nil {
		return err
	}
	r.reviews("the webhook's requests", "patch")
	r.reviewsOf(missingDeleteLabel, "patch", "missing-1")
	return nil
}

// missingDeleteLabel is the observation of the requests a mutating
// webhook received for the DELETE of an object that does not exist.
const missingDeleteLabel = "requests for deleting a missing object"

// down is a webhook of the scenario at a closed port.
func (r *run) down(name string, policy admissionregistrationv1.FailurePolicyType) webhook {
	h := r.hook(name, "", rule([]string{"configmaps"}, create))
	h.url, h.failurePolicy = r.tg.down, policy
	return h
}

// webhookDownFail: a webhook nobody listens at, failurePolicy Fail: the
// write fails.
func webhookDownFail(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	if err := r.validatingWebhooks(r.down("down.admconf.example.com", admissionregistrationv1.Fail)); err != nil {
		return err
	}
	if err := r.awaitDenied("the webhook", cmPath(r.ns), configMap("probe-1", nil, nil)); err != nil {
		return err
	}
	_, err := r.create("create", cmPath(r.ns), configMap("down-1", nil, nil))
	return err
}

// webhookDownIgnore: a webhook nobody listens at, failurePolicy Ignore:
// the write is admitted. The configuration is known to be in effect when
// its other webhook, which is up, denies a probe.
func webhookDownIgnore(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	err := r.validatingWebhooks(
		r.hook("deny.admconf.example.com", "deny", rule([]string{"configmaps"}, create)),
		r.down("down.admconf.example.com", admissionregistrationv1.Ignore))
	if err != nil {
		return err
	}
	if err := r.awaitDenied("the webhooks", cmPath(r.ns), configMap("probe-1", nil, nil)); err != nil {
		return err
	}
	_, err = r.create("create", cmPath(r.ns), configMap("ignored-1", nil, nil))
	return err
}

// webhookTimeout: a webhook that answers no sooner than its caller gives
// up, timeoutSeconds 1, failurePolicy Fail, for objects labelled slow=yes;
// the same configuration's other webhook, up, denies a probe.
func webhookTimeout(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	slow := r.hook("slow.admconf.example.com", "slow", rule([]string{"configmaps"}, create))
	slow.timeoutSeconds, slow.objectLabels = 1, map[string]string{"slow": "yes"}
	err := r.validatingWebhooks(r.hook("deny.admconf.example.com", "deny", rule([]string{"configmaps"}, create)), slow)
	if err != nil {
		return err
	}
	if err := r.awaitDenied("the webhooks", cmPath(r.ns), configMap("probe-1", nil, nil)); err != nil {
		return err
	}
	_, err = r.create("create, the slow webhook called", cmPath(r.ns), configMap("slow-1", map[string]string{"slow": "yes"}, nil))
	return err
}

// webhookNamespaces: a validating webhook on Namespaces: created by POST
// and by server-side apply, updated, their status and finalize
// subresources written.
func webhookNamespaces(r *run) error {
	if err := r.namespace(r.ns, nil); err != nil {
		return err
	}
	err := r.validatingWebhooks(r.hook("namespaces.admconf.example.com", "deny",
		rule([]string{"namespaces"}, create, update),
		rule([]string{"namespaces/status", "namespaces/finalize"}, update)))
	if err != nil {
		return err
	}
	labels := map[string]string{scenarioLabel: r.scn}
	ns := func(name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name, "labels": labels}}
	}
	err = r.await("the webhook", r.dryRunCreate(nsPath, ns("probe-"+r.ns)), answer.failed)
	if err != nil {
		return err
	}
	posted, applied := r.ns+"-posted", r.ns+"-applied"
	if _, err := r.create("create", nsPath, ns(posted)); err != nil {
		return err
	}
	apply := url.Values{"fieldManager": {"admconf-apply"}}
	if _, err := r.write("create by apply", http.MethodPatch, nsPath+"/"+applied, apply, "application/apply-patch+yaml", ns(applied)); err != nil {
		return err
	}
	if _, err := r.updateStatus("update", posted, "", map[string]string{"touched": "yes"}); err != nil {
		return err
	}
	if _, err := r.updateStatus("status write", posted, "status", nil); err != nil {
		return err
	}
	if _, err := r.updateStatus("finalize write", posted, "finalize", nil); err != nil {
		return err
	}
	r.reviews("the webhook's requests", "deny")
	return nil
}
