package v1

import (
	"fmt"
	"strconv"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/server/hook"
)

// Database holds the hooks of Database: its region is fixed at creation,
// and old postgres versions are accepted with a warning.
type Database struct{}

// minPostgresMajor is the oldest postgres major version not deprecated.
const minPostgresMajor = 13

var regionPath = field.NewPath("spec", "region")

// ValidateCreate warns about a deprecated engine version.
func (Database) ValidateCreate(_ *hook.Request, db *examplev1.Database) (hook.Warnings, field.ErrorList) {
	return versionWarnings(db), nil
}

// ValidateUpdate refuses to move a Database to another Region (a
// database's data lives in its region) and warns about a deprecated
// engine version.
func (Database) ValidateUpdate(_ *hook.Request, db, old *examplev1.Database) (hook.Warnings, field.ErrorList) {
	return versionWarnings(db), apivalidation.ValidateImmutableField(db.Spec.Region, old.Spec.Region, regionPath)
}

// versionWarnings is the warning for a postgres version whose major
// version is below minPostgresMajor.
func versionWarnings(db *examplev1.Database) hook.Warnings {
	if db.Spec.Engine != "postgres" || db.Spec.Version == "" {
		return nil
	}
	major, err := strconv.Atoi(strings.SplitN(db.Spec.Version, ".", 2)[0])
	if err != nil || major >= minPostgresMajor {
		return nil
	}
	return hook.Warnings{fmt.Sprintf("spec.version: postgres %s is deprecated; use %d or later", db.Spec.Version, minPostgresMajor)}
}
