package robustness

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
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

// stallingWatch lists the traffic's namespace through a clientset, and
// watches it over a raw connection of its own with a 4 KiB receive buffer
// (a clientset's watch would not stall the server: its HTTP/2 transport
// keeps reading into a 4 MiB stream window). After stallAfter events it
// stops reading (closes paused) until resume is closed; it resumes an
// ended watch from the last revision seen and relists after a 410. Its
// fields belong to run until it returns, but lastRV.
type stallingWatch struct {
	paused, resume   chan struct{}
	segs             []traffic.Segment
	relists, resumes int
	lastRV           atomic.Int64
}

// rawEvent is one watch event as the raw watch decodes it.
type rawEvent struct {
	Type   watch.EventType `json:"type"`
	Object struct {
		Code     int32 `json:"code"` // of an ERROR's Status
		Metadata struct {
			Name            string            `json:"name"`
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
	} `json:"object"`
}

// run lists, watches, resumes and relists until ctx ends (its error).
func (w *stallingWatch) run(ctx context.Context, client versioned.Interface, d *rawDialer) error {
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
		rw, err := d.watchQuery(ctx, databasesPath(trafficConfig.Namespace), "&resourceVersion="+strconv.FormatInt(seg.EndRV, 10), 4<<10)
		if err != nil {
			if strings.Contains(err.Error(), "410") {
				listed = false
				continue
			}
			return err
		}
		stop := context.AfterFunc(ctx, func() { rw.tcp.Close() })
		dec := json.NewDecoder(rw.body)
		gone := false
		for {
			var ev rawEvent
			if err := dec.Decode(&ev); err != nil {
				break // the server ended the watch, or ctx did
			}
			if ev.Type == watch.Error {
				gone = ev.Object.Code == http.StatusGone
				break
			}
			rv, _ := strconv.ParseInt(ev.Object.Metadata.ResourceVersion, 10, 64)
			if ev.Type != watch.Bookmark {
				seg.Events = append(seg.Events, traffic.Event{Type: ev.Type, Name: ev.Object.Metadata.Name, ResourceVersion: rv, OpID: ev.Object.Metadata.Annotations[traffic.OpIDAnnotation]})
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
		stop()
		rw.tcp.Close()
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
