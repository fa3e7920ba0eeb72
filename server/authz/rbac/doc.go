// Package rbac is the RBAC authorizer: it answers whether a request's user
// may do what the request asks, from the rbac.authorization.k8s.io/v1
// Roles, ClusterRoles, RoleBindings and ClusterRoleBindings the server
// serves, with kube-apiserver's semantics (which kube-apiserver keeps in a
// package nobody can import).
//
// An Authorizer follows the four kinds through their storage (the watch
// caches): it lists each at resourceVersion "0", watches from the list's
// revision, and relists when the watch ends or expires. It keeps them in an
// in-memory index (bindings by subject, roles by namespace and name), so a
// request costs a few map lookups and the evaluation of the rules of the
// bindings that name the user or one of its groups: no etcd read and no
// scan of every binding.
//
// Evaluation, as kube-apiserver's:
//   - ClusterRoleBindings grant their ClusterRole everywhere; RoleBindings
//     grant their Role or ClusterRole in their own namespace only, so a
//     request without a namespace (cluster-scoped, or a non-resource URL)
//     is decided by ClusterRoleBindings alone.
//   - A binding applies to a user named by a User subject, in a group named
//     by a Group subject, or whose name is
//     system:serviceaccount:<namespace>:<name> for a ServiceAccount subject
//     (its namespace defaulting to a RoleBinding's own).
//   - A rule allows a request when its verbs, API groups, resources
//     ("res", "res/sub", "*/sub" or "*") and resourceNames (empty: any)
//     match, or for a non-resource request its verbs and nonResourceURLs
//     (exact, "*", or a prefix ending in "*").
//   - Rules only allow. A request no rule allows gets
//     authorizer.DecisionNoOpinion; its reason names the roles that bindings
//     of the user refer to but that do not exist ("RBAC: clusterrole.rbac.
//     authorization.k8s.io "x" not found"), or is empty.
//
// system:masters is not this package's business: the authorizer chain
// allows that group before it asks RBAC, as kube-apiserver's does.
package rbac
