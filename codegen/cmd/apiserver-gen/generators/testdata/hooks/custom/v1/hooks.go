// Package v1 holds the subresource methods of the kinds of
// testdata/invalid/custom/v1, right and wrong (custom_test.go).
package v1

import (
	"io"

	v1 "github.com/apiloom/apiloom/codegen/cmd/apiserver-gen/testdata/invalid/custom/v1"
	"github.com/apiloom/apiloom/server/hook"
)

// Good has all three, one with a pointer receiver.
type Good struct{}

func (Good) Backup(*hook.Request, *v1.Good, *v1.BackupRequest) (*v1.BackupResult, error) {
	return nil, nil
}
func (*Good) GetConnection(*hook.Request, *v1.Good) (*v1.Connection, error) { return nil, nil }
func (Good) Logs(*hook.Request, *v1.Good, *v1.LogOptions, io.Writer) error  { return nil }

// Mistyped answers the wrong type.
type Mistyped struct{}

func (Mistyped) GetConnection(*hook.Request, *v1.Mistyped) (*v1.BackupResult, error) {
	return nil, nil
}

// Misnamed misspells its method.
type Misnamed struct{}

func (Misnamed) GetConection(*hook.Request, *v1.Misnamed) (*v1.Connection, error) { return nil, nil }
