// Package v1 holds the hooks of the crdconf.apiloom.dev/v1 test kinds
// (test/crdconf): mutating hooks that change nothing, through which every
// case of the CRD conformance table runs a second time.
package v1
