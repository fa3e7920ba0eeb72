package storage

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// continueVersion is the only token format kube-apiserver has ever issued;
// using it keeps tokens interchangeable with apiserver's.
const continueVersion = "meta.k8s.io/v1"

// continueToken is the JSON inside a continue token. Its field names are
// part of the wire format and must not change.
type continueToken struct {
	Version string `json:"v"`
	// Revision is the etcd revision the list was read at; negative means
	// "continue at the latest revision" (issued after compaction).
	Revision int64 `json:"rv"`
	// Start is the key to resume at, relative to the resource prefix,
	// usually the last returned key plus "\x00".
	Start string `json:"start"`
	// Before, which only the watch cache writes, is how many keys of the
	// list's range precede Start at Revision, for a list without
	// selectors: the next page's remainingItemCount is then the size of
	// the range less those and its own, without counting the rest of the
	// keys on every page. kube-apiserver's tokens lack it; it is omitted
	// when unknown.
	Before int64 `json:"before,omitempty"`
	// Namespace is the range Before counts in: one namespace's keys, or
	// the whole resource's when empty.
	Namespace string `json:"ns,omitempty"`
}

// EncodeContinue returns the continue token for a list read at rev that
// resumes at the relative key start (the last returned key + "\x00"). A
// negative rev asks the next page to read the latest revision.
//
// The watch cache issues its tokens with this function too, so a token from
// either implementation is accepted by both.
func EncodeContinue(start string, rev int64) string {
	return continueToken{Version: continueVersion, Revision: rev, Start: start}.encode()
}

func (c continueToken) encode() string {
	data, err := json.Marshal(c)
	if err != nil {
		// A struct of strings and ints always marshals.
		panic(fmt.Sprintf("storage: encode continue token: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(data)
}

// ContinueAfter is the token for a page whose last key (relative to the
// resource prefix) was lastKey.
func ContinueAfter(lastKey string, rev int64) string {
	return EncodeContinue(lastKey+"\x00", rev)
}

// DecodeContinue parses a continue token into the relative key to resume at
// and the revision to read at (negative: latest). It returns an *Error
// wrapping ErrInvalidContinue for anything it did not issue: bad base64 or
// JSON, another version, a zero revision, an empty start, or a start that is
// not a clean relative path (no "." or ".." segments), so a token can never
// reach outside the resource's key range.
func DecodeContinue(token string) (start string, rev int64, err error) {
	start, rev, _, err = DecodeCountedContinue(token, "")
	return start, rev, err
}

// ContinueAfterCounted is ContinueAfter for a page of an unfiltered list
// of namespace ns ("": of the whole resource), after which before keys of
// that range precede the next page.
func ContinueAfterCounted(lastKey string, rev int64, ns string, before int64) string {
	return continueToken{Version: continueVersion, Revision: rev, Start: lastKey + "\x00", Before: before, Namespace: ns}.encode()
}

// DecodeCountedContinue is DecodeContinue for a list of namespace ns ("":
// of the whole resource) that also returns the token's count of keys of
// that range before start, or -1 when the token carries none or counted
// another range.
func DecodeCountedContinue(token, ns string) (start string, rev, before int64, err error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, 0, invalidContinue("not base64url: %v", err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, 0, invalidContinue("not a token: %v", err)
	}
	if c.Version != continueVersion {
		return "", 0, 0, invalidContinue("server does not recognize version %q", c.Version)
	}
	if c.Revision == 0 {
		return "", 0, 0, invalidContinue("incorrect encoded start resourceVersion")
	}
	if c.Start == "" {
		return "", 0, 0, invalidContinue("encoded start key empty")
	}
	if !cleanRelativeKey(c.Start) {
		return "", 0, 0, invalidContinue("start key %q is not a clean relative key", c.Start)
	}
	before = c.Before
	if before <= 0 || c.Namespace != ns {
		before = -1
	}
	return c.Start, c.Revision, before, nil
}

// cleanRelativeKey reports whether k is a relative key that path.Clean
// leaves alone and that has no "." or ".." segment, ignoring the trailing
// NULs that mark "just after this key".
func cleanRelativeKey(k string) bool {
	if strings.HasPrefix(k, "/") {
		return false
	}
	if path.Clean("/"+k) != "/"+k {
		return false
	}
	for seg := range strings.SplitSeq(k, "/") {
		seg = strings.TrimRight(seg, "\x00")
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

func invalidContinue(format string, args ...any) *Error {
	return &Error{Err: ErrInvalidContinue, Detail: fmt.Sprintf(format, args...)}
}
