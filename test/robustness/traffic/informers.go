package traffic

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/generated/informers/externalversions"
	"github.com/apiloom/apiloom/test/robustness/history"
)

// informerClient is the first client id of the informers in the history.
const informerClient = 200

// Informers are the generated shared informers of cfg.Namespace's
// Databases, one per replica, as a controller would run them.
type Informers struct {
	// Immutable after StartInformers.
	factories []externalversions.SharedInformerFactory
	informers []cache.SharedIndexInformer
	stop      chan struct{}
	stopOnce  sync.Once // Stop may be called twice (and on t.Fatal paths)
}

// StartInformers starts one informer per replica; Stop stops them and
// waits for their goroutines.
func StartInformers(cfg Config, clients []versioned.Interface) *Informers {
	inf := &Informers{stop: make(chan struct{})}
	for _, c := range clients {
		f := externalversions.NewSharedInformerFactoryWithOptions(c, 0, externalversions.WithNamespace(cfg.Namespace))
		inf.informers = append(inf.informers, f.Example().V1().Databases().Informer())
		inf.factories = append(inf.factories, f)
		f.Start(inf.stop)
	}
	return inf
}

// WaitFor waits until every informer has synced to revision rev or later
// (its last list, event or bookmark), or until ctx ends; it returns an
// error naming the informers that did not get there.
func (inf *Informers) WaitFor(ctx context.Context, rev int64) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		var behind []string
		for i, in := range inf.informers {
			if got, _ := strconv.ParseInt(in.LastSyncResourceVersion(), 10, 64); got < rev {
				behind = append(behind, fmt.Sprintf("informer %d at %q", i, in.LastSyncResourceVersion()))
			}
		}
		if len(behind) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("traffic: informers behind revision %d: %v", rev, behind)
		case <-tick.C:
		}
	}
}

// States returns each informer's store: keys are object names, values
// their OpIDAnnotation, as ForCheckers maps etcd's history.
func (inf *Informers) States() []history.InformerState {
	var out []history.InformerState
	for i, in := range inf.informers {
		st := history.InformerState{Client: informerClient + i, Items: map[string]history.Item{}}
		for _, o := range in.GetStore().List() {
			db, ok := o.(*examplev1.Database)
			if !ok {
				continue
			}
			st.Items[db.Name] = history.Item{Key: db.Name, Value: db.Annotations[OpIDAnnotation], RV: rv(db.ResourceVersion)}
		}
		out = append(out, st)
	}
	return out
}

// Stop stops the informers and waits for their goroutines to end.
func (inf *Informers) Stop() {
	inf.stopOnce.Do(func() {
		close(inf.stop)
		for _, f := range inf.factories {
			f.Shutdown()
		}
	})
}
