// Package v1 is hooks for TestHooks: one right, the others wrong.
package v1

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	examplev1 "github.com/apiloom/apiloom/apis/example/v1"
	"github.com/apiloom/apiloom/server/hook"
)

type Database struct{}

func (Database) ValidateUpdate(*hook.Request, *examplev1.Database, *examplev1.Database) (hook.Warnings, field.ErrorList) {
	return nil, nil
}

func (*Database) Default(*hook.Request, *examplev1.Database) {}

func (Database) ValidateUpdat(*hook.Request, *examplev1.Database, *examplev1.Database) (hook.Warnings, field.ErrorList) {
	return nil, nil
}

func (Database) PrepareForCreate(*examplev1.Database) {}

func (Database) helper() {}

type Region struct{}

func (Region) ValidateDelete(*hook.Request, *examplev1.Database) (hook.Warnings, field.ErrorList) {
	return nil, nil
}

type Regon struct{}

func (Regon) ValidateDelete(*hook.Request, *examplev1.Region) (hook.Warnings, field.ErrorList) {
	return nil, nil
}

type helperType struct{}
