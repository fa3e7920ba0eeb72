package gc

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
)

// The attemptToOrphan workers: an owner being deleted with the orphan
// finalizer is removed from its dependents' ownerReferences, then the
// finalizer from it, which lets its deletion finish.

// processNextOrphan works on the next owner of attemptToOrphan; false once
// the queue shut down.
func (c *collector) processNextOrphan(ctx context.Context) bool {
	n, quit := c.attemptToOrphan.Get()
	if quit {
		return false
	}
	defer c.attemptToOrphan.Done(n)
	if err := c.orphan(ctx, n); err != nil {
		if ctx.Err() == nil {
			c.log.Warn("gc: orphaning; will retry", "owner", c.graph.view(n).id.String(), "err", err)
		}
		c.attemptToOrphan.AddRateLimited(n)
		return true
	}
	c.attemptToOrphan.Forget(n)
	return true
}

// orphanParallelism is how many dependents of one owner are updated at
// once.
const orphanParallelism = 16

// orphan removes owner from its dependents, then its orphan finalizer.
func (c *collector) orphan(ctx context.Context, owner *node) error {
	id := c.graph.view(owner).id
	deps := c.graph.dependents(owner)
	errs := make([]error, len(deps))
	workqueue.ParallelizeUntil(ctx, orphanParallelism, len(deps), func(i int) {
		errs[i] = c.removeOwnerRefs(ctx, c.graph.view(deps[i].node).id, id.UID)
	})
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return err
	}
	return c.removeFinalizer(ctx, id, metav1.FinalizerOrphanDependents)
}
