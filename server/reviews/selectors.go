package reviews

import (
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// A review's selectors become authorizer attributes as kube-apiserver
// makes them: the raw selector parsed, or the requirements converted one
// by one, keeping those that convert. Dropping a requirement only widens
// the question (requirements are ANDed), so a partly bad selector is still
// asked, and the review's evaluationError says what was ignored.

// labelRequirements converts a review's label selector.
func labelRequirements(s *authorizationv1.LabelSelectorAttributes) (labels.Requirements, error) {
	var reqs labels.Requirements
	var err error
	if s.RawSelector != "" {
		sel, perr := labels.Parse(s.RawSelector)
		if perr != nil {
			reqs, err = nil, perr
		} else {
			reqs, _ = sel.Requirements()
			err = nil
		}
	}
	if len(s.Requirements) > 0 {
		reqs, err = nil, nil
		var errs []error
		for _, r := range s.Requirements {
			op, ok := labelOps[r.Operator]
			if !ok {
				errs = append(errs, fmt.Errorf("%q is not a valid label selector operator", r.Operator))
				continue
			}
			values := r.Values
			if len(values) == 0 {
				values = nil
			}
			req, rerr := labels.NewRequirement(r.Key, op, values)
			if rerr != nil {
				errs = append(errs, rerr)
				continue
			}
			reqs = append(reqs, *req)
		}
		err = utilerrors.NewAggregate(errs)
	}
	return reqs, err
}

var labelOps = map[metav1.LabelSelectorOperator]selection.Operator{
	metav1.LabelSelectorOpIn:           selection.In,
	metav1.LabelSelectorOpNotIn:        selection.NotIn,
	metav1.LabelSelectorOpExists:       selection.Exists,
	metav1.LabelSelectorOpDoesNotExist: selection.DoesNotExist,
}

// fieldRequirements converts a review's field selector. Field selectors
// take one value and no existence operators.
func fieldRequirements(s *authorizationv1.FieldSelectorAttributes) (fields.Requirements, error) {
	var reqs fields.Requirements
	var err error
	if s.RawSelector != "" {
		sel, perr := fields.ParseSelector(s.RawSelector)
		if perr != nil {
			reqs, err = nil, perr
		} else {
			reqs, err = sel.Requirements(), nil
		}
	}
	if len(s.Requirements) > 0 {
		reqs = nil
		var errs []error
		for _, r := range s.Requirements {
			op, ferr := fieldOp(r)
			if ferr != nil {
				errs = append(errs, ferr)
				continue
			}
			reqs = append(reqs, fields.Requirement{Field: r.Key, Operator: op, Value: r.Values[0]})
		}
		err = utilerrors.NewAggregate(errs)
	}
	return reqs, err
}

func fieldOp(r metav1.FieldSelectorRequirement) (selection.Operator, error) {
	if len(r.Values) > 1 {
		return "", fmt.Errorf("fieldSelectors do not yet support multiple values")
	}
	switch r.Operator {
	case metav1.FieldSelectorOpIn:
		if len(r.Values) != 1 {
			return "", fmt.Errorf("fieldSelectors in must have one value")
		}
		return selection.Equals, nil
	case metav1.FieldSelectorOpNotIn:
		if len(r.Values) != 1 {
			return "", fmt.Errorf("fieldSelectors not in must have one value")
		}
		return selection.NotEquals, nil
	case metav1.FieldSelectorOpExists, metav1.FieldSelectorOpDoesNotExist:
		return "", fmt.Errorf("fieldSelectors do not yet support %v", r.Operator)
	}
	return "", fmt.Errorf("%q is not a valid field selector operator", r.Operator)
}

// evaluationError is a review's status.evaluationError: the authorizer's
// error, then which selectors were ignored, joined by "; ".
func evaluationError(err error, attrs authorizer.AttributesRecord) string {
	var out []string
	if err != nil {
		out = append(out, err.Error())
	}
	if reqs, err := attrs.GetFieldSelector(); err != nil {
		out = append(out, ignored("fieldSelector", len(reqs) > 0))
	}
	if reqs, err := attrs.GetLabelSelector(); err != nil {
		out = append(out, ignored("labelSelector", len(reqs) > 0))
	}
	return strings.Join(out, "; ")
}

func ignored(selector string, partly bool) string {
	if partly {
		return "spec.resourceAttributes." + selector + " partially ignored due to parse error"
	}
	return "spec.resourceAttributes." + selector + " ignored due to parse error"
}
