package robustness

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"testing"

	"github.com/apiloom/apiloom/generated/clientset/versioned"
	"github.com/apiloom/apiloom/test/robustness/cluster"
	"github.com/apiloom/apiloom/test/robustness/traffic"
)

// stallAfter is how many events the stalling watch reads before it stops.
const stallAfter = 20

// stallingWatch lists and watches the traffic's namespace like the
// traffic's watchers, but after stallAfter events stops reading (closes
// paused) until resume is closed. Its fields belong to run until it
// returns, but lastRV.
type stallingWatch struct {
	paused, resume   chan struct{}
	segs             []traffic.Segment
	relists, resumes int
	lastRV           atomic.Int64
}

// run lists, watches, resumes an ended watch from the last revision and
// relists after a 410, until ctx ends (its error).
func (w *stallingWatch) run(ctx context.Context, client versioned.Interface) error {
	dbs := client.ExampleV1().Databases(trafficConfig.Namespace)
	seen := 0
	listed := false
	for ctx.Err() == nil {
		if !listed {
			l, err := dbs.List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			rv, _ := strconv.ParseInt(l.ResourceVersion, 10, 64)
			if len(w.segs) > 0 {
				w.relists++
			}
			w.segs = append(w.segs, traffic.Segment{FromRV: rv, EndRV: rv})
			w.lastRV.Store(rv)
			listed = true
		}
		seg := &w.segs[len(w.segs)-1]
		wi, err := dbs.Watch(ctx, metav1.ListOptions{ResourceVersion: strconv.FormatInt(seg.EndRV, 10), AllowWatchBookmarks: true})
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			listed = false
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			time.Sleep(100 * time.Millisecond) // a retry's pace, not a synchronisation
			continue
		}
		gone := false
		for ev := range wi.ResultChan() {
			if ev.Type == watch.Error {
				err := apierrors.FromObject(ev.Object)
				gone = apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
				break
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				continue
			}
			rv, _ := strconv.ParseInt(m.GetResourceVersion(), 10, 64)
			if ev.Type != watch.Bookmark {
				seg.Events = append(seg.Events, traffic.Event{Type: ev.Type, Name: m.GetName(), ResourceVersion: rv, OpID: m.GetAnnotations()[traffic.OpIDAnnotation]})
				seen++
			}
			seg.EndRV = rv
			w.lastRV.Store(rv)
			if seen == stallAfter {
				close(w.paused)
				select {
				case <-w.resume:
				case <-ctx.Done():
				}
			}
		}
		wi.Stop()
		if gone {
			listed = false
		} else if ctx.Err() == nil {
			w.resumes++
		}
	}
	return ctx.Err()
}

// kubeClient is a Kubernetes clientset of replica r's admin.
func kubeClient(t *testing.T, r *cluster.Replica) kubernetes.Interface {
	t.Helper()
	cfg, err := r.Config()
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}
