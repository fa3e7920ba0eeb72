// Package ownerrefs is the admission plugin that removes a write's
// repeated owner references with kube-apiserver's warning, rather than
// refusing them: clients wrote them before 1.20 and some still do.
package ownerrefs

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/warning"
)

// The warnings, word for word kube-apiserver's.
const (
	duplicateOwnersWarning              = ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: %v"
	duplicateOwnersAfterMutatorsWarning = ".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: %v"
)

// Plugin dedups the owner references of what a create or update stores,
// once the mutating plugins before it ran. The handlers also dedup a
// create or update body before its managed fields are tracked (Dedup):
// structured-merge-diff keys ownerReferences by uid and cannot track a
// repeated one.
type Plugin struct{}

var _ admission.MutationInterface = Plugin{}

// Handles implements admission.Interface.
func (Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Admit implements admission.MutationInterface.
func (Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetObject() == nil {
		return nil
	}
	obj, err := meta.Accessor(a.GetObject())
	if err != nil {
		return nil // not an object with metadata: nothing to dedup
	}
	Dedup(ctx, obj, true)
	return nil
}

// Dedup removes obj's repeated owner references and warns the writer of
// ctx (k8s.io/apiserver's warning recorder) naming their uids, worded for
// a check after the mutating plugins when afterMutation. Entries are the
// same when they are equal in every field, not only in uid.
func Dedup(ctx context.Context, obj metav1.Object, afterMutation bool) {
	refs := obj.GetOwnerReferences()
	if len(refs) < 2 {
		return
	}
	kept, dups := unique(refs)
	if len(dups) == 0 {
		return
	}
	format := duplicateOwnersWarning
	if afterMutation {
		format = duplicateOwnersAfterMutatorsWarning
	}
	warning.AddWarning(ctx, "", fmt.Sprintf(format, strings.Join(dups, ", ")))
	obj.SetOwnerReferences(kept)
}

// unique is refs with each entry once, in order, and the uids of the
// entries left out.
func unique(refs []metav1.OwnerReference) ([]metav1.OwnerReference, []string) {
	kept := make([]metav1.OwnerReference, 0, len(refs))
	var dups []string
	seen := make(map[types.UID]bool, len(refs))
	for _, ref := range refs {
		if seen[ref.UID] && contains(kept, ref) {
			dups = append(dups, string(ref.UID))
			continue
		}
		seen[ref.UID] = true
		kept = append(kept, ref)
	}
	return kept, dups
}

func contains(refs []metav1.OwnerReference, ref metav1.OwnerReference) bool {
	for _, r := range refs {
		if equality.Semantic.DeepEqual(r, ref) {
			return true
		}
	}
	return false
}
