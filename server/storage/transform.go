package storage

import (
	"context"

	"k8s.io/apiserver/pkg/storage/value"
)

// Encryption at rest: a value.Transformer (k8s.io/apiserver's, built from
// an EncryptionConfiguration) sits between the codec and etcd. Every
// value written passes TransformToStorage and every value read
// TransformFromStorage, both with the full etcd key as authenticated data,
// as kube-apiserver does, so a value copied to another key does not
// decrypt. Comparisons of stored bytes stay valid: the written and
// verified bytes (createcheck.go, nospace.go) are the transformed ones,
// and the no-op check of an update (update.go) compares plaintexts.
//
// Without a transformer (the default) values are stored as the codec
// makes them, with no copy.

// WithTransformer stores the resource's values through t (encryption at
// rest). nil stores plaintext.
func WithTransformer(t value.Transformer) Option { return func(c *config) { c.transformer = t } }

// toStorage returns the bytes to store for the plaintext data at the
// relative key.
func (s *Store[O]) toStorage(ctx context.Context, key string, data []byte) ([]byte, error) {
	if s.cfg.transformer == nil {
		return data, nil
	}
	out, err := s.cfg.transformer.TransformToStorage(ctx, data, value.DefaultContext(s.prefix+key))
	if err != nil {
		return nil, &Error{Err: ErrTransform, Key: key, Detail: err.Error()}
	}
	return out, nil
}

// fromStorage returns the plaintext of the stored value data of the
// relative key at rev, and whether it was stored with a key or provider
// other than the current write one (stale: rewriting it moves it to the
// current one). A value that does not transform is an *Error wrapping
// ErrCorrupt with Untransformable set, as kube-apiserver treats it as a
// corrupt object.
func (s *Store[O]) fromStorage(ctx context.Context, data []byte, rev int64, key string) ([]byte, bool, error) {
	if s.cfg.transformer == nil {
		return data, false, nil
	}
	out, stale, err := s.cfg.transformer.TransformFromStorage(ctx, data, value.DefaultContext(s.prefix+key))
	if err != nil {
		return nil, false, &Error{Err: ErrCorrupt, Key: key, ResourceVersion: rev, Detail: err.Error(), Untransformable: true}
	}
	return out, stale, nil
}
