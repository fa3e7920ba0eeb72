package crdschema

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
)

// refusedByAPIServer returns what kube-apiserver would say when asked to
// create c, one error per cause, each naming the kind and the field path
// in the CRD. It catches what controller-tools lets through: a default
// that does not fit its schema (or is not one of the enum), a pattern that
// does not compile, a CEL rule that does not compile or whose estimated
// cost is over the limit, a schema that is not structural.
func refusedByAPIServer(c apiextensionsv1.CustomResourceDefinition) []error {
	c = *c.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&c)
	internal := &apiextensions.CustomResourceDefinition{}
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&c, internal, nil); err != nil {
		return []error{fmt.Errorf("kind %s: converting its CRD: %w", c.Spec.Names.Kind, err)}
	}
	// A created CRD's status lists its storage version; so does this one.
	for _, v := range internal.Spec.Versions {
		if v.Storage {
			internal.Status.StoredVersions = append(internal.Status.StoredVersions, v.Name)
		}
	}
	var errs []error
	for _, e := range validation.ValidateCustomResourceDefinition(context.Background(), internal) {
		// CEL's messages span lines; continuation lines are indented.
		msg := strings.ReplaceAll(e.Error(), "\n", "\n\t")
		errs = append(errs, fmt.Errorf("kind %s: kube-apiserver would refuse its CRD: %s", c.Spec.Names.Kind, msg))
	}
	return errs
}
