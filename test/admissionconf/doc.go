// Package admissionconf is the live differential test of dynamic
// admission: the same ValidatingAdmissionPolicies, MutatingAdmissionPolicies,
// their bindings and Validating/MutatingWebhookConfigurations
// (admissionregistration.k8s.io/v1), then the same writes, against a real
// kube-apiserver v1.37 (internal/hostcluster, with kube-controller-manager's
// validatingadmissionpolicy-status controller) and an in-process apiloom
// (server/testserver), both started by the test, each calling a webhook
// server of its own. Each scenario's answers (HTTP code, Status reason,
// message and details, warnings, the labels a mutation set), what its
// webhooks received (normalised AdmissionReview requests) and the policies'
// type-checking status must be the same on both; the test prints a table
// of same and different per scenario and fails on any difference its
// exceptions do not document, and on an exception that no longer matches
// anything. APILOOM_ADMCONF_DUMP=file writes every observation there.
//
// Both servers enforce policies and webhook configurations
// asynchronously, through informers. Before its checked writes every
// scenario waits, with a deadline, until what it configured is in effect,
// as upstream's e2e tests do: it repeats a dry-run probe write until the
// probe is denied, warned about or mutated.
package admissionconf
