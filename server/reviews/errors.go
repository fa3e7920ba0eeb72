package reviews

import "errors"

// ErrNoAuthorizer is New's error when Config lacks the authorizer or the
// rule resolver.
var ErrNoAuthorizer = errors.New("reviews: an authorizer and a rule resolver are required")
