// Package svm is kube-controller-manager's storage-version-migrator
// controller, run inside the server (package controllers): for each
// storagemigration.k8s.io/v1 StorageVersionMigration not yet Succeeded or
// Failed, every object of spec.resource is rewritten through the server,
// so that its stored value takes the current storage form (the storage
// version's apiVersion, the current encryption key).
//
// The rewrite of an object is upstream's: a merge PATCH that carries only
// the object's resourceVersion as listed. It changes nothing, so the
// storage layer writes it only because the re-encoded value differs from
// the stored bytes. The resourceVersion is a precondition: 409 Conflict
// means a writer got there after the list, whose write is already in the
// current form (and is never overwritten by the migration), 404 that the
// object is gone; both count as done.
//
// Unlike upstream, which lists the whole resource from the garbage
// collector's cache, the controller reads the resource in pages and
// records, after each page, the last key it finished in an annotation of
// the migration (progress.go): a restarted server, or the replica that
// takes over the controllers' Lease, resumes after that key instead of
// starting over. Objects before it are rewritten or newer than the
// migration.
package svm

import (
	"context"
	"fmt"
	"sync"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/apiloom/apiloom/server/controllers"
	"github.com/apiloom/apiloom/server/resource"
)

// Name is kube-controller-manager's name of the controller.
const Name = "storage-version-migrator-controller"

// Condition reasons, upstream's.
const (
	reasonRunning   = "MigrationRunning"
	reasonSucceeded = "StorageVersionMigrationSucceeded"
	reasonFailed    = "StorageVersionMigrationFailed"
)

// Config tunes the controller.
type Config struct {
	// PageSize is how many objects one list page holds; progress is
	// recorded after each page, so at most one page is rewritten again
	// after a restart.
	PageSize int64
}

// DefaultConfig pages by 500, client-go's pager's default.
func DefaultConfig() Config { return Config{PageSize: 500} }

// Controller is the storage-version-migrator controller.
type Controller struct {
	cfg Config
}

var _ controllers.Controller = (*Controller)(nil)

// New returns the controller.
func New(cfg Config) *Controller {
	if cfg.PageSize <= 0 {
		cfg.PageSize = DefaultConfig().PageSize
	}
	return &Controller{cfg: cfg}
}

// Name implements controllers.Controller.
func (c *Controller) Name() string { return Name }

// Run implements controllers.Controller: one worker takes migrations off
// a queue fed by an informer, so two migrations never run at once.
func (c *Controller) Run(ctx context.Context, env *controllers.Env) error {
	client, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	m := &migrator{client: client, dynamic: dyn, resources: env.Resources, pageSize: c.cfg.PageSize}
	factory := informers.NewSharedInformerFactory(client, 0)
	svms := factory.Storagemigration().V1().StorageVersionMigrations()
	lister := svms.Lister()
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: Name})
	enqueue := func(obj any) {
		if s, ok := obj.(*svmv1.StorageVersionMigration); ok && !finished(s) {
			queue.Add(s.Name)
		}
	}
	if _, err := svms.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), svms.Informer().HasSynced) {
		queue.ShutDown()
		return ctx.Err()
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			name, shutdown := queue.Get()
			if shutdown {
				return
			}
			err := m.run(ctx, lister.Get, name)
			if err != nil && ctx.Err() == nil {
				env.Log.Warn("storage version migration", "migration", name, "err", err)
				queue.AddRateLimited(name)
			} else {
				queue.Forget(name)
			}
			queue.Done(name)
		}
	})
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
	return nil
}

// finished reports whether s has Succeeded or Failed: neither goes back.
func finished(s *svmv1.StorageVersionMigration) bool {
	return meta.IsStatusConditionTrue(s.Status.Conditions, string(svmv1.MigrationSucceeded)) ||
		meta.IsStatusConditionTrue(s.Status.Conditions, string(svmv1.MigrationFailed))
}

// findResource is the served version of gr to rewrite through: the
// storage version's own resource when served (no conversion on the way),
// else any served version of the kind. ok is false when gr is not served.
func findResource(infos []*resource.Info, gr metav1.GroupResource) (info *resource.Info, ok bool) {
	for _, i := range infos {
		if i.Group != gr.Group || i.Plural != gr.Resource {
			continue
		}
		if i.Stored() {
			return i, true
		}
		if info == nil {
			info = i
		}
	}
	return info, info != nil
}

// gvr is info's resource.
func gvr(info *resource.Info) schema.GroupVersionResource { return info.GroupVersionResource() }
