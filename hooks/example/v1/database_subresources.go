package v1

import (
	"io"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/server/hook"
)

// TEMPORARY (the lead replaces this file): the Database's subresource
// methods with the signatures apiserver-gen requires, answering 503.

var databases = schema.GroupResource{Group: "example.apiloom.dev", Resource: "databases"}

// Backup is the backup action.
func (Database) Backup(_ *hook.Request, _ *examplev1.Database, _ *examplev1.BackupRequest) (*examplev1.BackupResult, error) {
	return nil, apierrors.NewServiceUnavailable(databases.String() + "/backup is not implemented yet")
}

// GetConnection is the connection view.
func (Database) GetConnection(_ *hook.Request, _ *examplev1.Database) (*examplev1.DatabaseConnection, error) {
	return nil, apierrors.NewServiceUnavailable(databases.String() + "/connection is not implemented yet")
}

// Logs is the logs stream.
func (Database) Logs(_ *hook.Request, _ *examplev1.Database, _ *examplev1.DatabaseLogOptions, _ io.Writer) error {
	return apierrors.NewServiceUnavailable(databases.String() + "/logs is not implemented yet")
}
