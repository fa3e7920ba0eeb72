package gc

import (
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/apiloom/apiloom/server/controllers"
)

// eventSink reports what the collector finds wrong with references.
type eventSink interface {
	// invalidNamespace reports that dependent refers to owner, a
	// namespaced object of another namespace, which is treated as absent.
	invalidNamespace(dependent, owner ref)
}

// reportInvalidNamespace reports n's reference to uid as one across
// namespaces. c.graph.mu must be held.
func (c *collector) reportInvalidNamespace(n *node, uid types.UID) {
	for _, o := range n.owners {
		if o.UID == uid {
			c.events.invalidNamespace(n.id, ownerRef(o, n.id.Namespace))
			return
		}
	}
}

// invalidNamespaceMessage is upstream's event message.
func invalidNamespaceMessage(dependent, owner ref) string {
	return fmt.Sprintf("ownerRef %s does not exist in namespace %q", owner, dependent.Namespace)
}

// recorderSink records Warning events OwnerRefInvalidNamespace on the
// dependent, as kube-controller-manager's garbage collector does.
type recorderSink struct{ rec record.EventRecorder }

func (s recorderSink) invalidNamespace(dependent, owner ref) {
	s.rec.Event(&corev1.ObjectReference{Kind: dependent.Kind, APIVersion: dependent.APIVersion,
		Namespace: dependent.Namespace, Name: dependent.Name, UID: dependent.UID},
		corev1.EventTypeWarning, "OwnerRefInvalidNamespace", invalidNamespaceMessage(dependent, owner))
}

// logSink logs what a server without core/v1 Events cannot record.
type logSink struct{ log *slog.Logger }

func (s logSink) invalidNamespace(dependent, owner ref) {
	s.log.Warn("gc: OwnerRefInvalidNamespace", "item", dependent.String(), "message", invalidNamespaceMessage(dependent, owner))
}

// newEventSink records events when the server serves core/v1 Events, and
// logs otherwise; stop flushes and stops the recorder.
func newEventSink(env *controllers.Env) (_ eventSink, stop func(), _ error) {
	served := false
	for _, i := range env.Resources {
		if i.Group == "" && i.Version == "v1" && i.Plural == "events" {
			served = true
		}
	}
	log := logSink{env.Log}
	if !served {
		return log, func() {}, nil
	}
	client, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return nil, nil, fmt.Errorf("gc: %w", err)
	}
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return recorderSink{b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "garbage-collector-controller"})}, b.Shutdown, nil
}
