package endpoints

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// As kube-apiserver, a write's repeated owner references are removed with
// a warning rather than refused: clients wrote them before 1.20 and some
// still do. A create or update body is checked before its managed fields
// are tracked (structured-merge-diff keys ownerReferences by uid and
// cannot track a repeated one) and again after the mutating hooks; a
// patch's or an apply's result after the hooks only. Entries are the
// same when they are equal in every field, not only in uid.

// The warnings, word for word kube-apiserver's.
const (
	duplicateOwnersWarning              = ".metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: %v"
	duplicateOwnersAfterMutatorsWarning = ".metadata.ownerReferences contains duplicate entries after mutating admission happens; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: %v"
)

// dedupOwnerReferences removes obj's repeated owner references and warns
// the writer of ctx naming their uids, worded for a check after the
// mutating hooks when afterMutation.
func dedupOwnerReferences(ctx context.Context, obj metav1.Object, afterMutation bool) {
	refs := obj.GetOwnerReferences()
	if len(refs) < 2 {
		return
	}
	kept, dups := uniqueOwnerReferences(refs)
	if len(dups) == 0 {
		return
	}
	format := duplicateOwnersWarning
	if afterMutation {
		format = duplicateOwnersAfterMutatorsWarning
	}
	warnIn(ctx, fmt.Sprintf(format, strings.Join(dups, ", ")))
	obj.SetOwnerReferences(kept)
}

// uniqueOwnerReferences is refs with each entry once, in order, and the
// uids of the entries left out.
func uniqueOwnerReferences(refs []metav1.OwnerReference) ([]metav1.OwnerReference, []string) {
	kept := make([]metav1.OwnerReference, 0, len(refs))
	var dups []string
	seen := make(map[types.UID]bool, len(refs))
	for _, ref := range refs {
		if seen[ref.UID] && containsOwnerReference(kept, ref) {
			dups = append(dups, string(ref.UID))
			continue
		}
		seen[ref.UID] = true
		kept = append(kept, ref)
	}
	return kept, dups
}

func containsOwnerReference(refs []metav1.OwnerReference, ref metav1.OwnerReference) bool {
	for _, r := range refs {
		if equality.Semantic.DeepEqual(r, ref) {
			return true
		}
	}
	return false
}
