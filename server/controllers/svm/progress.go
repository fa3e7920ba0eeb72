package svm

import (
	"encoding/json"
	"fmt"

	svmv1 "k8s.io/api/storagemigration/v1"
)

// ProgressAnnotation holds a running migration's progress, written to
// the migration after each page. It is an annotation because neither
// place upstream's API has fits: the spec is immutable, and a status write
// keeps the status alone (a restart must find the position even if the
// condition message, which people read, is reworded).
const ProgressAnnotation = "storagemigration.apiloom.io/progress"

// Progress is how far a migration has come.
type Progress struct {
	// LastKey is the last object finished, as the storage layer keys it
	// ("namespace/name", or "name" of a cluster-scoped object): a resumed
	// migration lists from just after it. Empty: nothing done yet.
	LastKey string `json:"lastKey,omitempty"`
	// Rewritten counts the objects the migration wrote.
	Rewritten int64 `json:"rewritten"`
	// Current counts the objects whose no-op write the server accepted
	// without writing: they were stored in the current form already (the
	// resourceVersion did not move).
	Current int64 `json:"current,omitempty"`
	// Newer counts the objects written by others since the migration
	// started (a resourceVersion past status.resourceVersion, or a
	// Conflict on the rewrite): already in the current form.
	Newer int64 `json:"newer"`
	// Gone counts the objects deleted between the list and the rewrite.
	Gone int64 `json:"gone"`
}

// progressOf is s's recorded progress; a missing or unreadable annotation
// is no progress (the migration starts over, which is safe, only slower).
func progressOf(s *svmv1.StorageVersionMigration) Progress {
	var p Progress
	if v, ok := s.Annotations[ProgressAnnotation]; ok {
		if err := json.Unmarshal([]byte(v), &p); err != nil {
			return Progress{}
		}
	}
	return p
}

// String is the progress as the Running condition's message says it.
func (p Progress) String() string {
	msg := "The migration is running, " + p.counts()
	if p.LastKey != "" {
		msg += fmt.Sprintf(", through %q", p.LastKey)
	}
	return msg
}

// counts are the progress's counts, as the messages say them.
func (p Progress) counts() string {
	return fmt.Sprintf("%d objects rewritten, %d already current, %d already newer, %d gone", p.Rewritten, p.Current, p.Newer, p.Gone)
}
