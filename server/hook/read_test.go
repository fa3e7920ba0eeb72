package hook_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apiloom/apiloom/server/hook"
)

// thing is the kind the tests serve; other is one nobody serves.
type (
	thing = metav1.PartialObjectMetadata
	other struct{ metav1.PartialObjectMetadata }
)

// recordingReader answers every read with one thing and records the
// context and options the read came with.
type recordingReader struct {
	ctx  context.Context
	opts hook.ReadOptions
}

func (r *recordingReader) Reader(t reflect.Type) any {
	if t == reflect.TypeFor[*thing]() {
		return hook.Reader[*thing](r)
	}
	return nil
}

func (r *recordingReader) Get(ctx context.Context, _, name string, opts hook.ReadOptions) (*thing, error) {
	r.ctx, r.opts = ctx, opts
	return &thing{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
}

func (r *recordingReader) List(ctx context.Context, _ string, _ labels.Selector, opts hook.ReadOptions) ([]*thing, error) {
	r.ctx, r.opts = ctx, opts
	return []*thing{{}}, nil
}

// TestReadOptions: Get and List read the cache unless asked for
// Consistent(), and read with the hook's context (the request's, with the
// hook's deadline), which bounds a consistent read's wait.
func TestReadOptions(t *testing.T) {
	r := &recordingReader{}
	req := hook.NewRequest(t.Context(), hook.Delete, "", false, nil, "", "x", r)
	for _, tc := range []struct {
		name string
		opts []hook.ReadOption
		want hook.ReadOptions
	}{
		{"cached", nil, hook.ReadOptions{}},
		{"consistent", []hook.ReadOption{hook.Consistent()}, hook.ReadOptions{Consistent: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reads := map[string]func(req *hook.Request) error{
				"Get": func(req *hook.Request) error {
					_, err := hook.Get[*thing](req, "", "a", tc.opts...)
					return err
				},
				"List": func(req *hook.Request) error {
					_, err := hook.List[*thing](req, "", nil, tc.opts...)
					return err
				},
			}
			for verb, read := range reads {
				*r = recordingReader{}
				var hookCtx context.Context
				err := hook.Call(req, time.Hour, func(req *hook.Request) {
					hookCtx = req.Context()
					if err := read(req); err != nil {
						t.Errorf("%s: %v", verb, err)
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				if r.opts != tc.want {
					t.Errorf("%s read with %+v, want %+v", verb, r.opts, tc.want)
				}
				if r.ctx != hookCtx {
					t.Errorf("%s read with another context than the hook's", verb)
				}
				if _, ok := r.ctx.Deadline(); !ok {
					t.Errorf("%s read without the hook's deadline", verb)
				}
			}
		})
	}
}

// TestReadNotServed: a kind the server does not serve is ErrNotServed,
// whatever the options.
func TestReadNotServed(t *testing.T) {
	req := hook.NewRequest(t.Context(), hook.Create, "", false, nil, "", "x", &recordingReader{})
	if _, err := hook.Get[*other](req, "", "a", hook.Consistent()); !errors.Is(err, hook.ErrNotServed) {
		t.Errorf("Get: %v, want ErrNotServed", err)
	}
	if _, err := hook.List[*other](req, "", nil); !errors.Is(err, hook.ErrNotServed) {
		t.Errorf("List: %v, want ErrNotServed", err)
	}
	if _, err := hook.List[*thing](hook.NewRequest(t.Context(), hook.Create, "", false, nil, "", "x", nil), "", nil); !errors.Is(err, hook.ErrNotServed) {
		t.Errorf("List without readers: %v, want ErrNotServed", err)
	}
}
