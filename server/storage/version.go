package storage

import (
	"strconv"
)

// ParseResourceVersion turns a resourceVersion into the etcd revision it
// names. "" and "0" both give 0; the caller tells them apart where it
// matters. Anything but a non-negative decimal is an *Error wrapping
// ErrInvalidResourceVersion.
func ParseResourceVersion(rv string) (int64, error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < 0 {
		return 0, &Error{Err: ErrInvalidResourceVersion, Detail: strconv.Quote(rv)}
	}
	return n, nil
}

// FormatResourceVersion is the resourceVersion string of revision rev.
func FormatResourceVersion(rev int64) string {
	return strconv.FormatInt(rev, 10)
}
