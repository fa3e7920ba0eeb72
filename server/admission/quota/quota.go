// Package quota is what apiloom gives k8s.io/apiserver's ResourceQuota
// admission plugin and its own quota controller
// (server/controllers/resourcequota): the quota configuration, an
// object-count evaluator (k8s.io/apiserver/pkg/quota/v1/generic) for
// every namespaced resource the server serves, named
// count/<resource>.<group> (count/<resource> for the core group), with
// kube-apiserver's legacy names (configmaps, secrets, resourcequotas) for
// the core kinds that have them, and the resources quota never counts.
//
// apiloom serves no pods, services or claims, so none of upstream's
// compute, service or storage evaluators apply; the pod scopes
// (Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass,
// CrossNamespacePodAffinity) match no object count, as upstream's
// object-count evaluator has them: a quota with one of them limits no
// kind apiloom serves and its status.used counts 0.
package quota

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"

	"github.com/apiloom/apiloom/server/resource"
)

// legacyNames are kube-apiserver's older names of the core kinds' object
// counts (k8s.io/kubernetes pkg/quota/v1/evaluator/core), which a quota
// may use beside count/<resource>.
var legacyNames = map[schema.GroupResource]corev1.ResourceName{
	{Resource: "configmaps"}:             corev1.ResourceConfigMaps,
	{Resource: "resourcequotas"}:         corev1.ResourceQuotas,
	{Resource: "replicationcontrollers"}: corev1.ResourceReplicationControllers,
	{Resource: "secrets"}:                corev1.ResourceSecrets,
}

// ignored are the resources quota leaves alone, kube-apiserver's
// (k8s.io/kubernetes pkg/quota/v1/install): the reviews, which store
// nothing, and events, never counted.
var ignored = map[schema.GroupResource]struct{}{
	{Resource: "bindings"}:                                                 {},
	{Resource: "componentstatuses"}:                                        {},
	{Group: "authentication.k8s.io", Resource: "tokenreviews"}:             {},
	{Group: "authentication.k8s.io", Resource: "selfsubjectreviews"}:       {},
	{Group: "authorization.k8s.io", Resource: "subjectaccessreviews"}:      {},
	{Group: "authorization.k8s.io", Resource: "selfsubjectaccessreviews"}:  {},
	{Group: "authorization.k8s.io", Resource: "localsubjectaccessreviews"}: {},
	{Group: "authorization.k8s.io", Resource: "selfsubjectrulesreviews"}:   {},
	{Resource: "events"}:                         {},
	{Group: "events.k8s.io", Resource: "events"}: {},
}

// Ignored reports whether quota leaves gr's objects uncounted.
func Ignored(gr schema.GroupResource) bool {
	_, ok := ignored[gr]
	return ok
}

// Counted are the resources of infos whose objects quota counts: each
// namespaced one, once (whatever its versions), none ignored, in order.
func Counted(infos []*resource.Info) []schema.GroupResource {
	var out []schema.GroupResource
	for _, i := range infos {
		gr := i.GroupResource()
		if !i.Namespaced || Ignored(gr) || slices.Contains(out, gr) {
			continue
		}
		out = append(out, gr)
	}
	return out
}

// Lister lists a resource's objects in a namespace, for the controller's
// usage; nil in admission, which reads usage from the quotas' status.
type Lister func(gr schema.GroupResource) generic.ListFuncByNamespace

// Evaluators are the object-count evaluators of resources.
func Evaluators(resources []schema.GroupResource, list Lister) []quota.Evaluator {
	out := make([]quota.Evaluator, 0, len(resources))
	for _, gr := range resources {
		var fn generic.ListFuncByNamespace
		if list != nil {
			fn = list(gr)
		}
		out = append(out, generic.NewObjectCountEvaluator(gr, fn, legacyNames[gr]))
	}
	return out
}

// Configuration is the quota configuration of resources: their
// evaluators and the resources ignored.
func Configuration(resources []schema.GroupResource, list Lister) quota.Configuration {
	return generic.NewConfiguration(Evaluators(resources, list), ignored)
}
