package rbac

import (
	"cmp"
	"slices"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// key names an object: namespace "" for the cluster-scoped kinds.
type key struct{ namespace, name string }

func compareKeys(a, b key) int {
	if c := cmp.Compare(a.namespace, b.namespace); c != 0 {
		return c
	}
	return cmp.Compare(a.name, b.name)
}

// binding is a RoleBinding (key.namespace set) or a ClusterRoleBinding
// (key.namespace "") as the index keeps it. Immutable once indexed: an
// update indexes a new binding in place of the old.
type binding struct {
	key      key
	roleRef  rbacv1.RoleRef
	subjects []rbacv1.Subject
}

// bySubject indexes bindings by the names their subjects give: users
// (User subjects, and the user name of ServiceAccount subjects) and groups.
// Each list holds a binding once, the lists are sorted by key so that
// evaluation is deterministic.
type bySubject struct {
	users  map[string][]*binding
	groups map[string][]*binding
}

func newBySubject() *bySubject {
	return &bySubject{users: map[string][]*binding{}, groups: map[string][]*binding{}}
}

// subjectKeys calls fn with the map and name under which each subject of b
// is indexed. A subject of an unknown kind, or a ServiceAccount subject
// without a namespace in a ClusterRoleBinding, names nobody.
func (s *bySubject) subjectKeys(b *binding, fn func(m map[string][]*binding, name string)) {
	for _, sub := range b.subjects {
		switch sub.Kind {
		case rbacv1.UserKind:
			fn(s.users, sub.Name)
		case rbacv1.GroupKind:
			fn(s.groups, sub.Name)
		case rbacv1.ServiceAccountKind:
			ns := sub.Namespace
			if ns == "" {
				ns = b.key.namespace
			}
			if ns != "" {
				fn(s.users, serviceaccount.MakeUsername(ns, sub.Name))
			}
		}
	}
}

func (s *bySubject) add(b *binding) {
	s.subjectKeys(b, func(m map[string][]*binding, name string) {
		list := m[name]
		i, found := slices.BinarySearchFunc(list, b.key, func(x *binding, k key) int { return compareKeys(x.key, k) })
		if !found {
			m[name] = slices.Insert(list, i, b)
		}
	})
}

func (s *bySubject) remove(b *binding) {
	s.subjectKeys(b, func(m map[string][]*binding, name string) {
		list := m[name]
		i, found := slices.BinarySearchFunc(list, b.key, func(x *binding, k key) int { return compareKeys(x.key, k) })
		if !found {
			return
		}
		if list = slices.Delete(list, i, i+1); len(list) == 0 {
			delete(m, name)
		} else {
			m[name] = list
		}
	})
}

func (s *bySubject) empty() bool { return len(s.users) == 0 && len(s.groups) == 0 }

// index is the authorizer's view of the four RBAC kinds. The objects it
// holds are the storage's, shared and read-only.
type index struct {
	mu sync.RWMutex // guards every field below
	// roles and clusterRoles are what bindings refer to.
	roles        map[key]*rbacv1.Role
	clusterRoles map[string]*rbacv1.ClusterRole
	// roleBindings and clusterRoleBindings are every binding by key, to
	// find the indexed form of one that changes or goes.
	roleBindings        map[key]*binding
	clusterRoleBindings map[string]*binding
	// cluster indexes the ClusterRoleBindings, namespaced the
	// RoleBindings of each namespace.
	cluster    *bySubject
	namespaced map[string]*bySubject
}

func newIndex() *index {
	return &index{
		roles: map[key]*rbacv1.Role{}, clusterRoles: map[string]*rbacv1.ClusterRole{},
		roleBindings: map[key]*binding{}, clusterRoleBindings: map[string]*binding{},
		cluster: newBySubject(), namespaced: map[string]*bySubject{},
	}
}

func (x *index) putRole(r *rbacv1.Role) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.roles[key{r.Namespace, r.Name}] = r
}

func (x *index) deleteRole(k key) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.roles, k)
}

func (x *index) putClusterRole(r *rbacv1.ClusterRole) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.clusterRoles[r.Name] = r
}

func (x *index) deleteClusterRole(k key) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.clusterRoles, k.name)
}

func (x *index) putRoleBinding(rb *rbacv1.RoleBinding) {
	b := &binding{key: key{rb.Namespace, rb.Name}, roleRef: rb.RoleRef, subjects: rb.Subjects}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteRoleBindingLocked(b.key)
	x.roleBindings[b.key] = b
	s := x.namespaced[b.key.namespace]
	if s == nil {
		s = newBySubject()
		x.namespaced[b.key.namespace] = s
	}
	s.add(b)
}

func (x *index) deleteRoleBinding(k key) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteRoleBindingLocked(k)
}

// x.mu must be held.
func (x *index) deleteRoleBindingLocked(k key) {
	old := x.roleBindings[k]
	if old == nil {
		return
	}
	delete(x.roleBindings, k)
	// A binding that names nobody the index knows (no subjects, or only
	// ones of unknown kinds) has no entries, and its namespace's may be
	// gone with the last binding that had some.
	s := x.namespaced[k.namespace]
	if s == nil {
		return
	}
	s.remove(old)
	if s.empty() {
		delete(x.namespaced, k.namespace)
	}
}

func (x *index) putClusterRoleBinding(crb *rbacv1.ClusterRoleBinding) {
	b := &binding{key: key{"", crb.Name}, roleRef: crb.RoleRef, subjects: crb.Subjects}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteClusterRoleBindingLocked(b.key)
	x.clusterRoleBindings[b.key.name] = b
	x.cluster.add(b)
}

func (x *index) deleteClusterRoleBinding(k key) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.deleteClusterRoleBindingLocked(k)
}

// x.mu must be held.
func (x *index) deleteClusterRoleBindingLocked(k key) {
	if old := x.clusterRoleBindings[k.name]; old != nil {
		delete(x.clusterRoleBindings, k.name)
		x.cluster.remove(old)
	}
}

// keys returns the keys of every object of one kind, for a relist to
// find those that went while it was not watching.
func (x *index) keys(kind kindName) []key {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []key
	switch kind {
	case kindRole:
		for k := range x.roles {
			out = append(out, k)
		}
	case kindClusterRole:
		for n := range x.clusterRoles {
			out = append(out, key{name: n})
		}
	case kindRoleBinding:
		for k := range x.roleBindings {
			out = append(out, k)
		}
	case kindClusterRoleBinding:
		for n := range x.clusterRoleBindings {
			out = append(out, key{name: n})
		}
	}
	return out
}
