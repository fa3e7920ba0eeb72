package svm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	svmv1 "k8s.io/api/storagemigration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// migrator runs migrations, one at a time.
type migrator struct {
	client    kubernetes.Interface
	dynamic   dynamic.Interface
	resources []*resource.Info
	pageSize  int64
}

// run migrates name, read fresh from the server when the informer's copy
// is unfinished: the informer lags the controller's own status writes,
// and a stale copy would repeat pages already recorded.
func (m *migrator) run(ctx context.Context, cached func(string) (*svmv1.StorageVersionMigration, error), name string) error {
	s, err := cached(name)
	if err == nil && !finished(s) {
		s, err = m.client.StoragemigrationV1().StorageVersionMigrations().Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return m.migrate(ctx, s)
}

// migrate brings s to Succeeded or Failed, or returns an error for the
// queue to retry it later from its recorded progress.
func (m *migrator) migrate(ctx context.Context, s *svmv1.StorageVersionMigration) error {
	if finished(s) {
		return nil
	}
	info, ok := findResource(m.resources, s.Spec.Resource)
	if !ok {
		return m.fail(ctx, s, fmt.Sprintf("resource %q is not served", s.Spec.Resource.String()))
	}
	res := m.dynamic.Resource(gvr(info))
	var err error
	if s.Status.ResourceVersion == "" {
		if s, err = m.start(ctx, s, res); err != nil {
			return err
		}
	}
	start, err := strconv.ParseUint(s.Status.ResourceVersion, 10, 64)
	if err != nil {
		return m.fail(ctx, s, fmt.Sprintf("status.resourceVersion %q is not this server's", s.Status.ResourceVersion))
	}
	p := progressOf(s)
	for {
		opts := metav1.ListOptions{Limit: m.pageSize}
		if p.LastKey != "" {
			// At the latest revision, from just after the last key
			// finished: valid whatever was compacted meanwhile, and the
			// objects created behind it since are newer than the start.
			opts.Continue = storage.ContinueAfter(p.LastKey, -1)
		}
		page, err := res.List(ctx, opts)
		if err != nil {
			return fmt.Errorf("list %s: %w", info.GroupResource(), err)
		}
		for i := range page.Items {
			if err := m.rewrite(ctx, res, info, &page.Items[i], start, &p); err != nil {
				if retriable(err) {
					return err
				}
				return m.fail(ctx, s, fmt.Sprintf("rewrite of %s: %v", storage.Key(page.Items[i].GetNamespace(), page.Items[i].GetName()), err))
			}
		}
		if n := len(page.Items); n > 0 {
			p.LastKey = storage.Key(page.Items[n-1].GetNamespace(), page.Items[n-1].GetName())
		}
		if s, err = m.saveProgress(ctx, s, p); err != nil {
			return err
		}
		if page.GetContinue() == "" {
			return m.succeed(ctx, s, p)
		}
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationRunning),
			Status: metav1.ConditionTrue, Reason: reasonRunning, Message: p.String()})
		if s, err = m.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
}

// rewrite sends obj's no-op write unless obj is newer than the migration's
// start, and counts the outcome in p.
func (m *migrator) rewrite(ctx context.Context, res dynamic.NamespaceableResourceInterface, info *resource.Info,
	obj *unstructured.Unstructured, start uint64, p *Progress) error {
	rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err == nil && rv > start {
		p.Newer++
		return nil
	}
	patch, err := json.Marshal(map[string]any{
		"apiVersion": info.GroupVersion().String(),
		"kind":       info.Kind,
		"metadata":   map[string]any{"resourceVersion": obj.GetResourceVersion()},
	})
	if err != nil {
		return err
	}
	got, err := res.Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: Name})
	switch {
	case err == nil && got.GetResourceVersion() == obj.GetResourceVersion():
		p.Current++
	case err == nil:
		p.Rewritten++
	case apierrors.IsConflict(err):
		p.Newer++
	case apierrors.IsNotFound(err):
		p.Gone++
	default:
		return err
	}
	return nil
}

// retriable reports whether err is passing (the server busy or stopping,
// the context ending), so the migration is tried again later rather than
// Failed.
func retriable(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err) ||
		!isStatus(err)
}

// isStatus reports whether err is an answer of the server (an
// APIStatus); other errors are the connection's, and passing.
func isStatus(err error) bool {
	var st apierrors.APIStatus
	return errors.As(err, &st)
}

// start records the migration's start: status.resourceVersion is the
// resource's revision now (a list of one object), and Running. Objects
// with a later resourceVersion were written in the current form.
func (m *migrator) start(ctx context.Context, s *svmv1.StorageVersionMigration, res dynamic.NamespaceableResourceInterface) (*svmv1.StorageVersionMigration, error) {
	l, err := res.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	s.Status.ResourceVersion = l.GetResourceVersion()
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationRunning),
		Status: metav1.ConditionTrue, Reason: reasonRunning, Message: progressOf(s).String()})
	return m.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, s, metav1.UpdateOptions{})
}

// saveProgress writes p to s's annotation, where a restart resumes from;
// the caller then says it in the Running condition's message, for people.
func (m *migrator) saveProgress(ctx context.Context, s *svmv1.StorageVersionMigration, p Progress) (*svmv1.StorageVersionMigration, error) {
	value, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": s.ResourceVersion,
		"annotations":     map[string]string{ProgressAnnotation: string(value)},
	}})
	if err != nil {
		return nil, err
	}
	return m.client.StoragemigrationV1().StorageVersionMigrations().Patch(ctx, s.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: Name})
}

// succeed ends s: Running False with the final counts, Succeeded True.
func (m *migrator) succeed(ctx context.Context, s *svmv1.StorageVersionMigration, p Progress) error {
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationRunning),
		Status: metav1.ConditionFalse, Reason: "MigrationCompleted",
		Message: "Migration completed: " + p.counts()})
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationSucceeded),
		Status: metav1.ConditionTrue, Reason: reasonSucceeded, Message: "Migration completed"})
	_, err := m.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, s, metav1.UpdateOptions{})
	return err
}

// fail ends s as Failed with msg; upstream's wording leads it.
func (m *migrator) fail(ctx context.Context, s *svmv1.StorageVersionMigration, msg string) error {
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationFailed),
		Status: metav1.ConditionTrue, Reason: reasonFailed, Message: "migration encountered unhandled error: " + msg})
	if meta.IsStatusConditionTrue(s.Status.Conditions, string(svmv1.MigrationRunning)) {
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: string(svmv1.MigrationRunning),
			Status: metav1.ConditionFalse, Reason: reasonFailed, Message: msg})
	}
	_, err := m.client.StoragemigrationV1().StorageVersionMigrations().UpdateStatus(ctx, s, metav1.UpdateOptions{})
	return err
}
