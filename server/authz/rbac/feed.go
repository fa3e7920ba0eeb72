package rbac

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiloom/apiloom/server/resource"
	"github.com/apiloom/apiloom/server/storage"
)

// kindName names one of the four kinds in logs and in index.keys.
type kindName string

const (
	kindRole               kindName = "roles"
	kindClusterRole        kindName = "clusterroles"
	kindRoleBinding        kindName = "rolebindings"
	kindClusterRoleBinding kindName = "clusterrolebindings"
)

var kinds = []kindName{kindRole, kindClusterRole, kindRoleBinding, kindClusterRoleBinding}

// kindOps is how the objects of one kind enter and leave the index.
type kindOps[O resource.Object] struct {
	kind kindName
	put  func(O)
	del  func(key)
}

// Run follows the four kinds into the index until ctx ends, then returns
// once its goroutines have stopped. Call it once.
func (a *Authorizer) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() {
		follow(ctx, a, a.src.Roles, kindOps[*rbacv1.Role]{kindRole, a.x.putRole, a.x.deleteRole})
	})
	wg.Go(func() {
		follow(ctx, a, a.src.ClusterRoles, kindOps[*rbacv1.ClusterRole]{kindClusterRole, a.x.putClusterRole, a.x.deleteClusterRole})
	})
	wg.Go(func() {
		follow(ctx, a, a.src.RoleBindings, kindOps[*rbacv1.RoleBinding]{kindRoleBinding, a.x.putRoleBinding, a.x.deleteRoleBinding})
	})
	wg.Go(func() {
		follow(ctx, a, a.src.ClusterRoleBindings,
			kindOps[*rbacv1.ClusterRoleBinding]{kindClusterRoleBinding, a.x.putClusterRoleBinding, a.x.deleteClusterRoleBinding})
	})
	wg.Wait()
}

// follow keeps the index's objects of one kind equal to src's: it lists,
// watches from the list's revision, and lists again when the watch
// expires (at once) or fails or ends (after the retry pause), until ctx
// ends.
func follow[O resource.Object](ctx context.Context, a *Authorizer, src storage.Interface[O], ops kindOps[O]) {
	first := true
	for {
		watched, err := followOnce(ctx, a, src, ops, &first)
		if ctx.Err() != nil {
			return
		}
		a.log.Info("rbac: relisting", "resource", string(ops.kind), "err", err)
		// A watch that expired relists at once; one that could not even
		// start from a fresh list waits, so that such a store is not
		// listed in a loop.
		if watched && errors.Is(err, storage.ErrExpired) {
			continue
		}
		t := time.NewTimer(a.pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// followOnce lists src into the index, then applies its watch events
// until the watch ends; the error says why it ended, watched whether the
// watch had started.
func followOnce[O resource.Object](ctx context.Context, a *Authorizer, src storage.Interface[O], ops kindOps[O], first *bool) (watched bool, err error) {
	list, err := src.GetList(ctx, storage.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return false, err
	}
	replace(a.x, list.Items, ops)
	if *first {
		*first = false
		a.listed()
	}
	w, err := src.Watch(ctx, storage.ListOptions{ResourceVersion: strconv.FormatInt(list.ResourceVersion, 10)})
	if err != nil {
		return false, err
	}
	b := storage.NewBlocking(w)
	defer b.Stop()
	var buf []storage.Event[O]
	for {
		buf, err = b.Next(ctx, buf[:0])
		for _, ev := range buf {
			switch ev.Type {
			case watch.Added, watch.Modified:
				ops.put(ev.Object)
			case watch.Deleted:
				ops.del(key{ev.Object.GetNamespace(), ev.Object.GetName()})
			}
		}
		clear(buf)
		if err != nil {
			return true, err
		}
	}
}

// replace makes the index's objects of one kind those of items: a
// relist's, which may miss objects deleted while nobody watched.
func replace[O resource.Object](x *index, items []O, ops kindOps[O]) {
	listed := make(map[key]bool, len(items))
	for _, o := range items {
		listed[key{o.GetNamespace(), o.GetName()}] = true
		ops.put(o)
	}
	for _, k := range x.keys(ops.kind) {
		if !listed[k] {
			ops.del(k)
		}
	}
}
