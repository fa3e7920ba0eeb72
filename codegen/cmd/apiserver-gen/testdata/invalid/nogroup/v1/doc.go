// Package v1 has a +genclient type but no +groupName.
package v1
