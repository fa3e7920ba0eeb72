// Package apfbootstrap keeps API Priority and Fairness's bootstrap
// configuration in place, as kube-apiserver's APF ensurer
// (k8s.io/kubernetes pkg/registry/flowcontrol/ensurer) does: upstream's
// mandatory and suggested FlowSchemas and PriorityLevelConfigurations
// (k8s.io/apiserver pkg/apis/flowcontrol/bootstrap) are created when
// missing; a mandatory one's spec is put back whenever it differs; a
// suggested one's only while its apf.kubernetes.io/autoupdate-spec
// annotation is "true" (or, without a readable annotation, while its
// generation is 1: nobody edited it); and objects the server once
// created under names no longer bootstrapped, still marked
// autoupdate-spec=true, are deleted.
package apfbootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/client-go/informers"
	flowcontrolclient "k8s.io/client-go/kubernetes/typed/flowcontrol/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/apiloom/apiloom/builtin/strategy"
)

// FieldManager is the manager of the ensurer's writes, upstream's.
const FieldManager = "api-priority-and-fairness-config-producer-v1"

// DefaultInterval is how often the whole configuration is checked,
// upstream's minute; a deletion is answered at once.
const DefaultInterval = time.Minute

// Ensurer is the loop; New makes it, Run runs it.
type Ensurer struct {
	fs       ops[*flowcontrolv1.FlowSchema]
	plc      ops[*flowcontrolv1.PriorityLevelConfiguration]
	synced   []cache.InformerSynced
	interval time.Duration
	poke     chan struct{}
	log      *slog.Logger
}

// New builds an ensurer over client, reading through factory's
// flowcontrol v1 informers (the caller starts the factory). It checks
// every interval and whenever an object is deleted.
func New(client flowcontrolclient.FlowcontrolV1Interface, factory informers.SharedInformerFactory, interval time.Duration, log *slog.Logger) (*Ensurer, error) {
	fsInformer := factory.Flowcontrol().V1().FlowSchemas()
	plcInformer := factory.Flowcontrol().V1().PriorityLevelConfigurations()
	e := &Ensurer{interval: interval, poke: make(chan struct{}, 1), log: log,
		synced: []cache.InformerSynced{fsInformer.Informer().HasSynced, plcInformer.Informer().HasSynced}}
	onDelete := cache.ResourceEventHandlerFuncs{DeleteFunc: func(any) { e.wake() }}
	if _, err := fsInformer.Informer().AddEventHandler(onDelete); err != nil {
		return nil, err
	}
	if _, err := plcInformer.Informer().AddEventHandler(onDelete); err != nil {
		return nil, err
	}
	fsClient, plcClient := client.FlowSchemas(), client.PriorityLevelConfigurations()
	e.fs = ops[*flowcontrolv1.FlowSchema]{
		get:  fsInformer.Lister().Get,
		list: func() ([]*flowcontrolv1.FlowSchema, error) { return fsInformer.Lister().List(labels.Everything()) },
		create: func(ctx context.Context, o *flowcontrolv1.FlowSchema) error {
			_, err := fsClient.Create(ctx, o, metav1.CreateOptions{FieldManager: FieldManager})
			return err
		},
		update: func(ctx context.Context, o *flowcontrolv1.FlowSchema) error {
			_, err := fsClient.Update(ctx, o, metav1.UpdateOptions{FieldManager: FieldManager})
			return err
		},
		delete: func(ctx context.Context, name string) error {
			return fsClient.Delete(ctx, name, metav1.DeleteOptions{})
		},
		copy: (*flowcontrolv1.FlowSchema).DeepCopy,
		specEqual: func(want, have *flowcontrolv1.FlowSchema) bool {
			w := want.DeepCopy()
			strategy.FlowSchema(w)
			return equality.Semantic.DeepEqual(w.Spec, have.Spec)
		},
		setSpec: func(into, from *flowcontrolv1.FlowSchema) { into.Spec = *from.Spec.DeepCopy() },
	}
	e.plc = ops[*flowcontrolv1.PriorityLevelConfiguration]{
		get: plcInformer.Lister().Get,
		list: func() ([]*flowcontrolv1.PriorityLevelConfiguration, error) {
			return plcInformer.Lister().List(labels.Everything())
		},
		create: func(ctx context.Context, o *flowcontrolv1.PriorityLevelConfiguration) error {
			_, err := plcClient.Create(ctx, o, metav1.CreateOptions{FieldManager: FieldManager})
			return err
		},
		update: func(ctx context.Context, o *flowcontrolv1.PriorityLevelConfiguration) error {
			_, err := plcClient.Update(ctx, o, metav1.UpdateOptions{FieldManager: FieldManager})
			return err
		},
		delete: func(ctx context.Context, name string) error {
			return plcClient.Delete(ctx, name, metav1.DeleteOptions{})
		},
		copy:      (*flowcontrolv1.PriorityLevelConfiguration).DeepCopy,
		specEqual: plcSpecEqual,
		setSpec:   func(into, from *flowcontrolv1.PriorityLevelConfiguration) { into.Spec = *from.Spec.DeepCopy() },
	}
	return e, nil
}

// plcSpecEqual compares a bootstrap level, defaulted, with a stored one;
// "exempt"'s spec.exempt is the admin's to tune, as upstream allows.
func plcSpecEqual(want, have *flowcontrolv1.PriorityLevelConfiguration) bool {
	w := want.DeepCopy()
	strategy.PriorityLevelConfiguration(w)
	if w.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
		if have.Spec.Exempt == nil {
			return false
		}
		w.Spec.Exempt.NominalConcurrencyShares = have.Spec.Exempt.NominalConcurrencyShares
		w.Spec.Exempt.LendablePercent = have.Spec.Exempt.LendablePercent
	}
	return equality.Semantic.DeepEqual(w.Spec, have.Spec)
}

func (e *Ensurer) wake() {
	select {
	case e.poke <- struct{}{}:
	default:
	}
}

// Run waits for the informers, then keeps the configuration in place
// until ctx ends: a failed round is retried a second later, as upstream's
// first round is.
func (e *Ensurer) Run(ctx context.Context) {
	if !cache.WaitForCacheSync(ctx.Done(), e.synced...) {
		return
	}
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-retry.C:
		case <-e.poke:
		}
		next := e.interval
		if err := e.Ensure(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			e.log.Warn("APF bootstrap configuration: will retry", "err", err)
			next = time.Second
		}
		retry.Reset(next)
	}
}

// Ensure makes one round, in upstream's order: the suggested objects,
// the mandatory ones, then the unwanted ones removed.
func (e *Ensurer) Ensure(ctx context.Context) error {
	var errs []error
	for _, o := range bootstrap.SuggestedPriorityLevelConfigurations {
		errs = append(errs, ensure(ctx, e.plc, o, false))
	}
	for _, o := range bootstrap.SuggestedFlowSchemas {
		errs = append(errs, ensure(ctx, e.fs, o, false))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, o := range bootstrap.MandatoryPriorityLevelConfigurations {
		errs = append(errs, ensure(ctx, e.plc, o, true))
	}
	for _, o := range bootstrap.MandatoryFlowSchemas {
		errs = append(errs, ensure(ctx, e.fs, o, true))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	plcs := append(append([]*flowcontrolv1.PriorityLevelConfiguration{}, bootstrap.MandatoryPriorityLevelConfigurations...), bootstrap.SuggestedPriorityLevelConfigurations...)
	fss := append(append([]*flowcontrolv1.FlowSchema{}, bootstrap.MandatoryFlowSchemas...), bootstrap.SuggestedFlowSchemas...)
	return errors.Join(removeUnwanted(ctx, e.fs, fss), removeUnwanted(ctx, e.plc, plcs))
}

type object interface {
	*flowcontrolv1.FlowSchema | *flowcontrolv1.PriorityLevelConfiguration
	metav1.Object
}

// ops is what the ensurer does with one kind.
type ops[T object] struct {
	get       func(name string) (T, error)
	list      func() ([]T, error)
	create    func(context.Context, T) error
	update    func(context.Context, T) error
	delete    func(context.Context, string) error
	copy      func(T) T
	specEqual func(want, have T) bool
	setSpec   func(into, from T)
}

// ensure creates boot when missing and otherwise revises it as
// upstream's strategy does; mandatory objects' specs are always
// restored. A conflict or a concurrent create is left to the next round.
func ensure[T object](ctx context.Context, o ops[T], boot T, mandatory bool) error {
	current, err := o.get(boot.GetName())
	if apierrors.IsNotFound(err) {
		err = o.create(ctx, o.copy(boot))
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return wrap(err, "create", boot)
	}
	if err != nil {
		return wrap(err, "get", boot)
	}
	autoUpdate := mandatory || autoUpdateSpec(current)
	annotationStale := annotationDiffers(current, autoUpdate)
	specChanged := autoUpdate && !o.specEqual(boot, current)
	if !annotationStale && !specChanged {
		return nil
	}
	revised := o.copy(current)
	if specChanged {
		o.setSpec(revised, boot)
	}
	if annotationStale {
		a := revised.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[flowcontrolv1.AutoUpdateAnnotationKey] = strconv.FormatBool(autoUpdate)
		revised.SetAnnotations(a)
	}
	if err := o.update(ctx, revised); err != nil && !apierrors.IsConflict(err) {
		return wrap(err, "update", boot)
	}
	return nil
}

// autoUpdateSpec is upstream's shouldUpdateSpec: the annotation's value
// when it is a boolean, and otherwise whether the object is as it was
// created (generation 1), so that an operator's edit is kept.
func autoUpdateSpec(obj metav1.Object) bool {
	if v, err := strconv.ParseBool(obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]); err == nil {
		return v
	}
	return obj.GetGeneration() == 1
}

// annotationDiffers reports whether the annotation is missing, not a
// boolean, or other than want.
func annotationDiffers(obj metav1.Object, want bool) bool {
	v, err := strconv.ParseBool(obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey])
	return err != nil || v != want
}

// removeUnwanted deletes the objects marked autoupdate-spec=true whose
// names are not bootstrapped any more (upstream's RemoveUnwantedObjects);
// objects without the annotation are users' and stay.
func removeUnwanted[T object](ctx context.Context, o ops[T], boots []T) error {
	current, err := o.list()
	if err != nil {
		return err
	}
	wanted := make(map[string]bool, len(boots))
	for _, b := range boots {
		wanted[b.GetName()] = true
	}
	for _, obj := range current {
		v, ok := obj.GetAnnotations()[flowcontrolv1.AutoUpdateAnnotationKey]
		if wanted[obj.GetName()] || !ok {
			continue
		}
		if auto, err := strconv.ParseBool(v); err != nil || !auto {
			continue
		}
		if err := o.delete(ctx, obj.GetName()); err != nil && !apierrors.IsNotFound(err) {
			return wrap(err, "delete", obj)
		}
	}
	return nil
}

func wrap(err error, verb string, obj metav1.Object) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %T %q: %w", verb, obj, obj.GetName(), err)
}
