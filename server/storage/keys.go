package storage

import (
	"strings"

	"github.com/apiloom/apiloom/server/resource"
)

// Key is the key of one object relative to its resource prefix:
// "namespace/name" for namespaced resources and "name" for cluster-scoped
// ones. Every Interface method takes keys in this form.
func Key(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// ResourcePrefix is the etcd key prefix under which one resource's objects
// live, with a trailing slash: "<root>/<group>/<plural>/", or
// "<root>/<plural>/" for the core group. root is the server-wide prefix such
// as "/registry".
func ResourcePrefix(root string, info *resource.Info) string {
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(root, "/"))
	b.WriteByte('/')
	if info.Group != "" {
		b.WriteString(info.Group)
		b.WriteByte('/')
	}
	b.WriteString(info.Plural)
	b.WriteByte('/')
	return b.String()
}

// validKey reports whether key is a well-formed object key for a resource
// of the given scope. It defends the key space: a key can never name
// something outside its resource prefix, a directory, or another
// namespace's list range.
func validKey(key string, namespaced bool) bool {
	ns, name, found := strings.Cut(key, "/")
	if namespaced != found {
		return false
	}
	if !found {
		return validSegment(key)
	}
	return validSegment(ns) && validSegment(name)
}

// validSegment reports whether s can be one path segment of a key: a
// namespace or a name.
func validSegment(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.Contains(s, "/") && !strings.ContainsRune(s, 0)
}
