package convert

import (
	"github.com/apiloom/apiloom/server/storage"
)

// storageOptions are opts with the field selector's keys renamed to the
// storage version's (resource.Conversion.FieldLabels): the inner storage
// evaluates selectors on stored objects, with the storage version's
// fields. The endpoints have already refused keys the version does not
// have.
func (c *Storage[O, S]) storageOptions(opts storage.ListOptions) (storage.ListOptions, error) {
	opts.Encoded = false // the conversion reads every object
	f := opts.Predicate.Field
	if len(c.conv.FieldLabels) == 0 || f == nil || f.Empty() {
		return opts, nil
	}
	renamed, err := f.Transform(func(key, value string) (string, string, error) {
		if to, ok := c.conv.FieldLabels[key]; ok {
			return to, value, nil
		}
		return key, value, nil
	})
	if err != nil {
		return opts, err
	}
	opts.Predicate.Field = renamed
	return opts, nil
}
