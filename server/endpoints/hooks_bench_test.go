package endpoints

import (
	"context"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiloom/apiloom/internal/etcdtest"
	"github.com/apiloom/apiloom/server/cache"
	"github.com/apiloom/apiloom/server/hook"
	"github.com/apiloom/apiloom/server/storage"
	"github.com/apiloom/apiloom/server/storage/storagetest"
	"github.com/apiloom/apiloom/server/wire"
)

// cacheReaders reads Widgets from a watch cache, as the registry's
// readers do (registry/hookreaders.go).
type cacheReaders struct{ c storage.Interface[*widget] }

func (r cacheReaders) Reader(reflect.Type) any { return r }

func (r cacheReaders) Get(ctx context.Context, ns, name string, _ hook.ReadOptions) (*widget, error) {
	return r.c.Get(ctx, storage.Key(ns, name), storage.GetOptions{ResourceVersion: "0"})
}

func (r cacheReaders) List(context.Context, string, labels.Selector, hook.ReadOptions) ([]*widget, error) {
	return nil, nil
}

// BenchmarkHooks is what hooks add to a write's handler cost (decoding,
// defaults, metadata rules, the markers' validation, the hooks), on a
// create and an update: no hooks, an empty validation hook, empty
// mutating and validation hooks, and a validation hook that reads one
// object from a watch cache (hook.Get).
func BenchmarkHooks(b *testing.B) {
	client := etcdtest.Start(b)
	def := storagetest.Definition()
	store := storage.New(client, "/bench/widgets", def)
	c, err := cache.New(def, store)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	other := benchWidgets(1)[0]
	other.Name, other.ResourceVersion, other.UID = "other", "", ""
	if _, err := store.Create(b.Context(), storage.Key(other.Namespace, other.Name), other); err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := c.Get(b.Context(), storage.Key(other.Namespace, other.Name), storage.GetOptions{ResourceVersion: "0"}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the cache never saw the object")
		}
		time.Sleep(10 * time.Millisecond)
	}

	obj := benchWidgets(1)[0]
	obj.Spec.Size = 3
	createBody, err := wire.EncodeObject(obj, obj.GroupVersionKind())
	if err != nil {
		b.Fatal(err)
	}
	next := copyObject(obj)
	next.Spec.Size = 4
	updateBody, err := wire.EncodeObject(next, next.GroupVersionKind())
	if err != nil {
		b.Fatal(err)
	}
	validate := func(*hook.Request, *widget) (hook.Warnings, field.ErrorList) { return nil, nil }
	for _, bc := range []struct {
		name  string
		hooks *hook.Hooks[*widget]
	}{
		{"none", nil},
		{"empty-validate", &hook.Hooks[*widget]{
			ValidateCreate: validate,
			ValidateUpdate: func(*hook.Request, *widget, *widget) (hook.Warnings, field.ErrorList) { return nil, nil },
		}},
		{"empty-mutate-validate", &hook.Hooks[*widget]{
			Default:        func(*hook.Request, *widget) {},
			ValidateCreate: validate,
			ValidateUpdate: func(*hook.Request, *widget, *widget) (hook.Warnings, field.ErrorList) { return nil, nil },
		}},
		{"read-one", &hook.Hooks[*widget]{
			ValidateCreate: func(req *hook.Request, _ *widget) (hook.Warnings, field.ErrorList) {
				if _, err := hook.Get[*widget](req, other.Namespace, other.Name); err != nil {
					b.Fatal(err)
				}
				return nil, nil
			},
			ValidateUpdate: func(req *hook.Request, _, _ *widget) (hook.Warnings, field.ErrorList) {
				if _, err := hook.Get[*widget](req, other.Namespace, other.Name); err != nil {
					b.Fatal(err)
				}
				return nil, nil
			},
		}},
	} {
		d := storagetest.Definition()
		d.Schema = benchSchema(0)
		d.Hooks = bc.hooks
		h := NewResource(d, nil, WithHooks(cacheReaders{c}, 0)).(*handler[*widget])
		benchWrites(b, h, bc.name, createBody, updateBody, obj)
	}
}
