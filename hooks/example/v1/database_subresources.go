package v1

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/server/hook"
)

// The Database's own verbs (+genclient:method and +apiloom:stream on the
// type): backup, an action; connection, a view; logs, a stream
// (database_logs.go).

// maxBackups is how many backups a Database's status keeps, as its
// schema allows (+kubebuilder:validation:MaxItems on status.backups).
const maxBackups = 10

// backupAttempts bounds the retries of a backup's status write against
// concurrent writers of the same Database.
const backupAttempts = 5

// backupResource names the subresource in errors.
var backupResource = schema.GroupResource{Group: examplev1.SchemeGroupVersion.Group, Resource: "databases/backup"}

// Backup records a backup of db in its status (status.backups, the oldest
// dropped beyond ten) through the server's write path, so the write is
// admitted, tracked in managedFields and seen by watchers like any
// other, and tells the Database's log (an Event, BackupRequested). A
// controller would take the backup itself; what the API promises is the
// record. A backup name already recorded is 409 AlreadyExists; a Database
// being deleted is 409 Conflict.
func (Database) Backup(req *hook.Request, db *examplev1.Database, in *examplev1.BackupRequest) (*examplev1.BackupResult, error) {
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	b := examplev1.DatabaseBackup{Name: in.Name, Destination: in.Destination, RequestedAt: now}
	if b.Name == "" {
		b.Name = "backup-" + now.Format("20060102-150405")
	}
	if req.User != nil {
		b.RequestedBy = req.User.GetName()
	}
	var stored *examplev1.Database
	var err error
	for range backupAttempts {
		if db.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(backupResource, db.Name, errors.New("the database is being deleted"))
		}
		if slices.ContainsFunc(db.Status.Backups, func(o examplev1.DatabaseBackup) bool { return o.Name == b.Name }) {
			return nil, apierrors.NewAlreadyExists(backupResource, b.Name)
		}
		next := db.DeepCopy()
		next.Status.Backups = append(next.Status.Backups, b)
		if n := len(next.Status.Backups); n > maxBackups {
			next.Status.Backups = next.Status.Backups[n-maxBackups:]
		}
		stored, err = hook.UpdateStatus(req, next)
		if !apierrors.IsConflict(err) {
			break
		}
		// Another writer moved the Database on: start again from it.
		if db, err = hook.Get[*examplev1.Database](req, db.Namespace, db.Name, hook.Consistent()); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	if err := recordEvent(req, stored, "BackupRequested", fmt.Sprintf("backup %s to %s requested by %s", b.Name, b.Destination, orUnknown(b.RequestedBy))); err != nil {
		return nil, err
	}
	out := &examplev1.BackupResult{Backup: b}
	if !req.DryRun {
		out.DatabaseResourceVersion = stored.ResourceVersion
	}
	return out, nil
}

func orUnknown(user string) string {
	if user == "" {
		return "an unauthenticated user"
	}
	return user
}

// recordEvent tells db's log what happened, as a core/v1 Event about it,
// when the server serves Events (a server without them has no log).
func recordEvent(req *hook.Request, db *examplev1.Database, reason, message string) error {
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: db.Namespace, GenerateName: db.Name + "."},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: examplev1.SchemeGroupVersion.String(), Kind: "Database",
			Namespace: db.Namespace, Name: db.Name, UID: db.UID, ResourceVersion: db.ResourceVersion,
		},
		Reason: reason, Message: message, Type: corev1.EventTypeNormal,
		Source:         corev1.EventSource{Component: "database-hooks"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
		// eventTime orders a log's lines to the microsecond, where the
		// timestamps have whole seconds; it asks for who reported what.
		EventTime:           metav1.NewMicroTime(now.Time),
		ReportingController: "example.apiloom.dev/database-hooks",
		ReportingInstance:   reportingInstance,
		Action:              reason,
	}
	if _, err := hook.CreateObject(req, ev); err != nil && !errors.Is(err, hook.ErrNotServed) {
		return err
	}
	return nil
}

// reportingInstance names this server in the Events it records.
var reportingInstance = func() string {
	if h, err := os.Hostname(); err == nil && h != "" && len(h) <= 128 {
		return h
	}
	return "apiloom"
}()

// GetConnection is how to connect to db: its endpoint once ready, a URI
// per user, and where it runs (its Region as the cache holds it: a view
// may be a moment behind, as any cached read).
func (Database) GetConnection(req *hook.Request, db *examplev1.Database) (*examplev1.DatabaseConnection, error) {
	c := &examplev1.DatabaseConnection{
		Ready:    db.Status.Phase == "Ready" && db.Status.Endpoint != "",
		Endpoint: db.Status.Endpoint,
	}
	if c.Endpoint != "" {
		for _, u := range db.Spec.Users {
			c.URIs = append(c.URIs, fmt.Sprintf("%s://%s@%s/%s", uriScheme(db.Spec.Engine), u.Name, c.Endpoint, db.Name))
		}
	}
	if db.Spec.Region == "" {
		return c, nil
	}
	region, err := hook.Get[*examplev1.Region](req, "", db.Spec.Region)
	switch {
	case apierrors.IsNotFound(err) || errors.Is(err, hook.ErrNotServed):
		return c, nil
	case err != nil:
		return nil, err
	}
	c.Region = region.Spec.DisplayName
	if c.Region == "" {
		c.Region = region.Name
	}
	c.Zones = slices.Clone(region.Spec.Zones)
	return c, nil
}

// uriScheme is the URI scheme clients of engine use: MariaDB speaks
// MySQL's protocol.
func uriScheme(engine string) string {
	if engine == "mariadb" {
		return "mysql"
	}
	return strings.ToLower(engine)
}
